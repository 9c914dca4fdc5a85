// gradformer trace (transformer/inspect/trace.h): the walk ends where the model does, bit for bit; the
// decoding it shows is greedy decoding; the page is one self-contained document.
#include <algorithm>

#include "../train/tiny_translator.h"
#include "catch.h"
#include "transformer/data/batch.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/trace.h"
#include "transformer/model/decoding.h"
#include "transformer/model/masks.h"

using namespace gradformer;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("trace: the spelled-out encoder ends in exactly the model's memory, post-LN and pre-LN") {
  for (const NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    TinyTranslator tiny(norm);
    const std::vector<std::string> sentence = {"le", "chat", "noir", "mange", "."};
    const SentenceTrace t = trace_sentence(*tiny.model, tiny.source, tiny.target, sentence);
    CHECK(tiny.model->is_training());  // the trace ran in eval mode and gave the mode back
    std::vector<int64_t> ids = tiny.source.encode(sentence);
    ids.push_back(Vocab::eos);
    CHECK(t.source_ids == ids);
    CHECK(t.source_tokens.back() == "</s>");
    REQUIRE(t.encoder.size() == 2);
    CHECK(t.encoder[0].attention.shape() == Shape{2, 6, 6});  // [H, S, S]
    CHECK(t.encoder[0].stages.size() == (norm == NormPlacement::Post ? 4u : 6u));
    // each attention row is a distribution over the source
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 6; ++i)
        CHECK(sum(t.encoder[1].attention.select(0, h).select(0, i)).item() == Approx(1.0).epsilon(1e-5));

    InferenceGuard inference(*tiny.model);
    const Tensor src = from_vector(ids, {1, 6});
    const Tensor memory = tiny.model->encode(src, padding_mask(src, Vocab::pad)).value();
    const ActivationStats expected = [&] {
      const std::vector<float> v = memory.to_vector<float>();
      ActivationStats s;
      double total = 0;
      for (float e : v) total += e, s.max_abs = std::max(s.max_abs, std::abs(static_cast<double>(e)));
      s.mean = total / static_cast<double>(v.size());
      return s;
    }();
    CHECK(t.memory.stats.mean == expected.mean);  // the same bits in, the same sum out
    CHECK(t.memory.stats.max_abs == expected.max_abs);
    CHECK(t.memory.stats.first[0] == static_cast<double>(memory.to_vector<float>()[0]));
    // scaling the embedding by sqrt(d) scales its mean and std by sqrt(d) = 4
    CHECK(t.scaled.stats.mean == Approx(4 * t.embedding.stats.mean).margin(1e-6));
    CHECK(t.scaled.stats.std == Approx(4 * t.embedding.stats.std).epsilon(1e-5));
  }
}

TEST_CASE("trace: the decoding it shows is greedy decoding, and beam search's best with --beam") {
  TinyTranslator tiny(NormPlacement::Post);
  const std::vector<std::string> sentence = {"je", "suis", "heureux", "."};
  const SentenceTrace t = trace_sentence(*tiny.model, tiny.source, tiny.target, sentence, {.top = 3});
  CHECK(t.translation == translate(*tiny.model, sentence, tiny.source, tiny.target, 1));
  REQUIRE(!t.steps.empty());
  CHECK(t.steps.size() <= 2 * 4 + 10);  // translate's cap: twice the source plus 10
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const DecodeStepTrace& s = t.steps[i];
    CHECK(s.prefix.size() == i + 1);
    CHECK(s.prefix.front() == "<s>");
    REQUIRE(s.top.size() == 3);
    CHECK(s.chosen == s.top[0].token);  // greedy: the most likely
    CHECK(s.top[0].probability >= s.top[1].probability);
    REQUIRE(s.cross_attention.size() == 2);  // one distribution over the 5 source positions per layer
    double total = 0;
    for (double w : s.cross_attention[0]) total += w;
    CHECK(total == Approx(1.0).epsilon(1e-5));
  }
  const SentenceTrace b = trace_sentence(*tiny.model, tiny.source, tiny.target, sentence, {.beam = 3});
  CHECK(b.translation == translate(*tiny.model, sentence, tiny.source, tiny.target, 3));
  REQUIRE(!b.beam_steps.empty());
  CHECK(b.beam_steps.front().beams.size() <= 3);
  for (const auto& step : b.beam_steps)
    CHECK(std::is_sorted(step.beams.begin(), step.beams.end(),
                         [](const auto& x, const auto& y) { return x.log_prob > y.log_prob; }));
}

TEST_CASE("trace: unknown words are marked, and the text and page show every stage") {
  TinyTranslator tiny(NormPlacement::Pre);
  const SentenceTrace t =
      trace_sentence(*tiny.model, tiny.source, tiny.target, {"le", "chien", "mange", "."}, {.beam = 2, .max_len = 4});
  CHECK(t.unknown == std::vector<bool>{false, true, false, false});
  CHECK(t.source_ids[1] == Vocab::unk);
  const std::string text = trace_text(t);
  for (const char* part : {"1. Tokens -> ids", "chien=3", "1 word not in the vocabulary became <unk>",
                           "3. Encoder layer 0", "4. Encoder layer 1", "head 1:", "final LayerNorm (encoder.norm)",
                           "step 1  prefix: <s>", "Beam search, 2 beams", "Translation (beam search, 2 beams):"})
    CHECK(text.find(part) != std::string::npos);
  const std::string page = trace_html(t);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(count(page, "<svg") == 2 * 2 + 1);  // a heatmap per encoder layer and head, and the cross-attention
  CHECK(count(page, "<section>") == 7);     // tokens, embedding, 2 layers, memory, decoding, translation
  CHECK(count(page, "class='token unk'") == 1);
  CHECK(page.find("<script") == std::string::npos);  // nothing runs, nothing is fetched
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("&ldquo;le chien mange .&rdquo;") != std::string::npos);
}

TEST_CASE("trace: bad requests are errors naming the problem") {
  TinyTranslator tiny(NormPlacement::Post);
  CHECK_THROWS_MSG(trace_sentence(*tiny.model, tiny.source, tiny.target, {}), ValueError,
                   "trace_sentence: the sentence is empty");
  CHECK_THROWS_MSG(trace_sentence(*tiny.model, tiny.source, tiny.target, {"le"}, {.beam = 0}), ValueError,
                   "beam must be at least 1, got 0");
  CHECK_THROWS_MSG(trace_sentence(*tiny.model, tiny.source, tiny.target, {"le"}, {.top = 0}), ValueError,
                   "top must be at least 1, got 0");
  CHECK_THROWS_MSG(trace_sentence(*tiny.model, tiny.source, tiny.target, std::vector<std::string>(40, "le")), DataError,
                   "the sentence has 40 tokens; this model takes at most 31");
}
