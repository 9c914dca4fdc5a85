// Translation with subwords (TrainOptions::tokenizer, transformer/train/encoder_decoder_task.cpp):
// the tokenizer is learned from the training pairs only, kept in the checkpoint and restored on
// resume; hypotheses are the target tokenizer's detokenized text cut at spaces; a pair too long in
// tokens names its file and line; options a task cannot use are refused by name.
#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "compound_corpus.h"
#include "training_helpers.h"
#include "transformer/inspect/trace.h"
#include "transformer/store/average.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;

namespace {

// Six pairs of ASCII words, many longer than one byte-level token at a small vocabulary: a model
// that gives back a target exactly has joined its pieces into the right words.
const std::vector<std::pair<std::string, std::string>> kPairs = {
    {"the houseboat floats here", "das hausboot schwimmt hier"},
    {"the treehouse stands there", "das baumhaus steht dort"},
    {"a boathouse burns here", "ein bootshaus brennt hier"},
    {"a tree grows there", "ein baum waechst dort"},
    {"the house stands here", "das haus steht hier"},
    {"the boat floats there", "das boot schwimmt dort"}};

std::string tsv(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string text;
  for (const auto& [source, target] : pairs) text += source + "\t" + target + "\n";
  return text;
}

// A model that memorises kPairs in a few seconds: d 32, one layer, no dropout or smoothing.
TrainOptions bpe_run(const TempDir& dir, const std::string& name) {
  TrainOptions o = default_train_options("corpus");
  o.data_path = dir / "train.tsv", o.valid_path = dir / "valid.tsv";
  o.tokenizer = "bpe", o.vocab_size = 290, o.shared_vocab = true;
  o.d_model = 32, o.d_ff = 64, o.heads = 2, o.layers = 1, o.max_len = 32;
  o.dropout = 0, o.label_smoothing = 0, o.clip = 1.0;
  o.batch_size = 6, o.steps = 600, o.lr = 2.0, o.warmup = 20, o.seed = 3;
  o.log_every = 1000, o.quiet = true;
  o.out_dir = dir / name;
  return o;
}

void write_corpus(const TempDir& dir) {
  test::write_text(dir / "train.tsv", tsv(kPairs));
  // Words the training pairs lack, repeated: merges learned from this file would be merges of "zebra".
  test::write_text(dir / "valid.tsv", "the zebra zebra zebra floats\tdas zebra zebra zebra schwimmt\n");
}

Tokenizer learned_from(const std::vector<std::string>& texts, int64_t vocab_size) {
  return Tokenizer::learn_bpe({texts.begin(), texts.end()}, vocab_size);
}

std::vector<std::string> sides(bool sources, bool targets) {
  std::vector<std::string> texts;
  for (const auto& [source, target] : kPairs) {
    if (sources) texts.push_back(source);
    if (targets) texts.push_back(target);
  }
  return texts;
}

// The run's TrainOptionError's message for `o`, or "" if it trains.
std::string option_error(const TrainOptions& o) {
  try {
    train(o);
  } catch (const TrainOptionError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("train --tokenizer bpe: tokenizers learned from the training pairs only, kept in the checkpoint") {
  TempDir dir("bpe-learned");
  write_corpus(dir);
  SECTION("shared: one tokenizer learned on the sources and targets together") {
    TrainOptions o = bpe_run(dir, "shared");
    o.steps = 2;
    const LoadedCheckpoint saved = load_checkpoint(train(o).checkpoint_path);
    // Learned on both sides' text (the sources, then the targets), nothing of valid.tsv.
    std::vector<std::string> both = sides(true, false), targets = sides(false, true);
    both.insert(both.end(), targets.begin(), targets.end());
    const Tokenizer expected = learned_from(both, 290);
    CHECK(saved.info.source_tokenizer.kind() == Tokenizer::Kind::Bpe);
    CHECK(saved.info.source_tokenizer == expected);
    CHECK(saved.info.target_tokenizer == expected);
    CHECK(saved.info.source_tokenizer.byte_pair_encoding().merges() == expected.byte_pair_encoding().merges());
    CHECK(saved.info.config.src_vocab == expected.size());
    CHECK(saved.info.config.tgt_vocab == expected.size());
    for (const auto& [merge_left, merge_right] : expected.byte_pair_encoding().merges())
      CHECK((merge_left + merge_right).find("zeb") == std::string::npos);
    CHECK(saved.info.state.at("options.tokenizer") == "bpe");
    CHECK(saved.info.state.at("options.vocab_size") == "290");
    CHECK(saved.info.state.at("options.shared_vocab") == "true");
  }
  SECTION("vocab_size 0: merges learned up to 1024 tokens, or as many as the pairs have") {
    TrainOptions o = bpe_run(dir, "default");
    o.steps = 2, o.vocab_size = 0;
    std::vector<std::string> both = sides(true, false), targets = sides(false, true);
    both.insert(both.end(), targets.begin(), targets.end());
    const Tokenizer expected = learned_from(both, 1024);
    REQUIRE(expected.size() > 290);
    CHECK(load_checkpoint(train(o).checkpoint_path).info.source_tokenizer == expected);
  }
  SECTION("one per side") {
    TrainOptions o = bpe_run(dir, "separate");
    o.steps = 2, o.shared_vocab = false;
    const LoadedCheckpoint saved = load_checkpoint(train(o).checkpoint_path);
    CHECK(saved.info.source_tokenizer == learned_from(sides(true, false), 290));
    CHECK(saved.info.target_tokenizer == learned_from(sides(false, true), 290));
    CHECK(!(saved.info.source_tokenizer == saved.info.target_tokenizer));
  }
  SECTION("bytes: the 256 bytes, both sides") {
    TrainOptions o = bpe_run(dir, "bytes");
    o.steps = 2, o.tokenizer = "bytes", o.vocab_size = 0;
    const LoadedCheckpoint saved = load_checkpoint(train(o).checkpoint_path);
    CHECK(saved.info.source_tokenizer == Tokenizer::bytes());
    CHECK(saved.info.target_tokenizer == Tokenizer::bytes());
    CHECK(saved.info.config.src_vocab == 4 + 256);
  }
  SECTION("words shared: one vocabulary of both sides' words, so the embeddings can be tied") {
    TrainOptions o = bpe_run(dir, "words-shared");
    o.steps = 2, o.tokenizer = "words", o.vocab_size = 0, o.tie_embeddings = true;
    const LoadedCheckpoint saved = load_checkpoint(train(o).checkpoint_path);
    CHECK(saved.info.source_tokenizer.kind() == Tokenizer::Kind::Words);
    CHECK(saved.info.source_tokenizer == saved.info.target_tokenizer);
    std::set<std::string> words;
    for (const auto& [source, target] : kPairs)
      for (const std::string& w : split_words(source + " " + target)) words.insert(w);
    CHECK(saved.info.source_tokenizer.size() == 4 + static_cast<int64_t>(words.size()));
    CHECK(saved.info.config.tie_embeddings);
  }
}

TEST_CASE("train --tokenizer bpe resumed mid-run continues with the uninterrupted run's losses, bit for bit") {
  TempDir dir("bpe-resume");
  write_corpus(dir);
  TrainOptions full_options = bpe_run(dir, "full");
  full_options.steps = 8, full_options.dropout = 0.1, full_options.label_smoothing = 0.1;
  const TrainReport full = train(full_options);
  REQUIRE(full.losses.size() == 8);
  TrainOptions first = full_options;
  first.out_dir = dir / "part", first.stop_after = 3;
  const TrainReport part = train(first);
  // Resumed with the defaults of a word corpus: the checkpoint's tokenizer must win.
  TrainOptions second = default_train_options("corpus");
  second.data_path = dir / "train.tsv", second.out_dir = dir / "resumed", second.quiet = true;
  const TrainReport resumed = train(second, part.checkpoint_path);
  CHECK(resumed.first_step == 4);
  CHECK(test::same_bits(resumed.losses, {full.losses.begin() + 3, full.losses.end()}));
  const LoadedCheckpoint a = load_checkpoint(full.checkpoint_path), b = load_checkpoint(resumed.checkpoint_path);
  CHECK(b.info.source_tokenizer == a.info.source_tokenizer);
  CHECK(b.info.target_tokenizer == a.info.target_tokenizer);
  const StateDict sa = a.model->state_dict(), sb = b.model->state_dict();
  for (const auto& [name, t] : sa) CHECK(test::bitwise_equal(t, sb.at(name)));
  // The average of the two (the same model) keeps the tokenizers, so it translates as they do.
  average_checkpoints({full.checkpoint_path, resumed.checkpoint_path}, dir / "average.safetensors");
  const LoadedCheckpoint average = load_checkpoint(dir / "average.safetensors");
  CHECK(average.info.source_tokenizer == a.info.source_tokenizer);
  CHECK(average.info.target_tokenizer == a.info.target_tokenizer);
}

TEST_CASE("a bpe model's translations are detokenized text: evaluate_translation, translate and trace_sentence") {
  TempDir dir("bpe-translate");
  write_corpus(dir);
  TrainOptions o = bpe_run(dir, "run");
  o.test_path = dir / "train.tsv";  // scored on the pairs it memorised
  const TrainReport r = train(o);
  REQUIRE(r.test_translation.has_value());
  LoadedCheckpoint model = load_checkpoint(r.checkpoint_path);
  const Tokenizer& source = model.info.source_tokenizer;
  const Tokenizer& target = model.info.target_tokenizer;
  // The words of the targets are several tokens each: the model writes them piece by piece.
  CHECK(target.encode("das hausboot schwimmt hier").size() > 4);
  std::vector<SentencePair> pairs;
  for (const auto& [s, t] : kPairs) pairs.push_back({split_words(s), split_words(t)});
  const TranslationReport report = evaluate_translation(*model.model, pairs, source, target);
  for (size_t i = 0; i < pairs.size(); ++i) {
    INFO(kPairs[i].first);
    CHECK(join_words(report.hypotheses[i]) == kPairs[i].second);
    CHECK(translate(*model.model, pairs[i].source, source, target) == pairs[i].target);
    CHECK(translate(*model.model, pairs[i].source, source, target, /*beam=*/3) == pairs[i].target);
  }
  CHECK(report.exact_match == 1.0);
  CHECK(r.test_translation->exact_match == 1.0);
  CHECK(r.test_translation->bleu.bleu == Approx(100.0));
  // The trace shows the source's tokens as pieces, and ends in the same words.
  const SentenceTrace t = trace_sentence(*model.model, source, target, pairs[0].source);
  CHECK(t.translation == pairs[0].target);
  CHECK(t.source_tokens.size() == source.encode(kPairs[0].first).size() + 1);
  std::string spelled;
  for (size_t i = 0; i + 1 < t.source_tokens.size(); ++i) spelled += gpt2_text_to_bytes(t.source_tokens[i], "a piece");
  CHECK(spelled == kPairs[0].first);
  CHECK(t.source_tokens.back() == "</s>");
  CHECK(std::count(t.unknown.begin(), t.unknown.end(), true) == 0);
}

TEST_CASE("train --tokenizer bpe: a pair longer than max_len in tokens, not in words, names its file and line") {
  TempDir dir("bpe-long");
  // Three words, but at 270 tokens most bytes stay single tokens: far more than 7 tokens.
  test::write_text(dir / "train.tsv", "a b\tx y\n\nunbelievably longwinded sentence\tshort\n");
  TrainOptions o = default_train_options("corpus");
  o.data_path = dir / "train.tsv", o.out_dir = dir / "run", o.quiet = true;
  o.tokenizer = "bpe", o.vocab_size = 270, o.shared_vocab = true, o.max_len = 8;
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1;
  const auto encoded = learned_from({"a b", "x y", "unbelievably longwinded sentence", "short"}, 270)
                           .encode("unbelievably longwinded sentence");
  REQUIRE(encoded.size() > 7);
  CHECK_THROWS_MSG(
      train(o), DataError,
      message(o.data_path, ":3: source sentence has ", encoded.size(), " tokens (bpe), more than the maximum of 7"));
  CHECK(!std::filesystem::exists(dir / "run/model.safetensors"));
}

TEST_CASE("train: tokenizer options a task cannot use are TrainOptionErrors naming the option") {
  TempDir dir("bpe-options");
  write_corpus(dir);
  const auto corpus = [&](void (*set)(TrainOptions&)) {
    TrainOptions o = bpe_run(dir, "bad");
    set(o);
    return option_error(o);
  };
  CHECK(corpus([](TrainOptions& o) { o.tokenizer = "chars"; }) ==
        "train: tokenizer must be words, bytes or bpe, got 'chars'");
  CHECK(corpus([](TrainOptions& o) { o.vocab_size = -1; }) ==
        "train: vocab_size must be from 0 to 16777216 (0: the default), got -1");
  CHECK(corpus([](TrainOptions& o) { o.vocab_size = 259; }) ==
        "train: vocab_size must be at least 260 for bpe (the 4 specials and the 256 bytes; 0: 1024), got 259");
  CHECK(corpus([](TrainOptions& o) { o.tokenizer = "words"; }) ==
        "train: vocab_size is not used by the words tokenizer (its vocabulary is the training data's words), got 290");
  CHECK(corpus([](TrainOptions& o) { o.tokenizer = "bytes"; }) ==
        "train: vocab_size is not used by the bytes tokenizer (its vocabulary is the 4 specials and the 256 bytes), "
        "got 290");
  CHECK(corpus([](TrainOptions& o) { o.shared_vocab = false, o.tie_embeddings = true; }) ==
        "train: tie_embeddings needs one vocabulary for both sides: with the bpe tokenizer, shared_vocab (one "
        "tokenizer learned on the sources and targets together)");
  // The copy task's digits are their own vocabulary; the encoder-only tasks read words.
  TrainOptions copy = default_train_options("copy");
  copy.tokenizer = "bpe";
  CHECK(option_error(copy) == "train: tokenizer is not used by encoder-decoder copy");
  copy.tokenizer = "words", copy.shared_vocab = true;
  CHECK(option_error(copy) == "train: shared_vocab is not used by encoder-decoder copy");
  TrainOptions mlm = default_train_options("mlm", Architecture::EncoderOnly);
  mlm.tokenizer = "bytes";
  CHECK(option_error(mlm) == "train: tokenizer is not used by encoder-only mlm");
  TrainOptions lm = default_train_options("toy-lm", Architecture::DecoderOnly);
  lm.shared_vocab = true;
  CHECK(option_error(lm) == "train: shared_vocab is not used by decoder-only toy-lm");
}

TEST_CASE("the compound corpus: every test source ends in a compound no training source has, made of stems they have") {
  const test::CompoundCorpus corpus = test::make_compound_corpus(1, 4000, 200, 200);
  REQUIRE(corpus.train.size() == 4000);
  REQUIRE(corpus.test.size() == 200);
  std::set<std::string> train_words, train_targets;
  for (const SentencePair& p : corpus.train) {
    train_words.insert(p.source.begin(), p.source.end());
    train_targets.insert(p.target.begin(), p.target.end());
  }
  const auto has_stem = [&](const std::string& stem) {
    return std::any_of(train_words.begin(), train_words.end(),
                       [&](const std::string& w) { return w.find(stem) != std::string::npos; });
  };
  for (const SentencePair& p : corpus.test) {
    INFO(join_words(p.source));
    REQUIRE(p.source.size() == 4);
    CHECK(train_words.count(p.source[3]) == 0);  // unseen: a model of words reads <unk>
    // It is two stems (and -en for the plural), each of them inside some training source word...
    std::string compound = p.source[3];
    if (p.source[2] != "ein") compound = compound.substr(0, compound.size() - 2);
    int stems = 0;
    for (const auto& [a, a_en] : test::kCompoundStems)
      for (const auto& [b, b_en] : test::kCompoundStems)
        if (compound == std::string(a) + b) {
          ++stems;
          CHECK((has_stem(a) && has_stem(b)));
          // ...and its translation is two English words the training targets have.
          CHECK(train_targets.count(a_en) == 1);
          CHECK((train_targets.count(b_en) == 1 || train_targets.count(std::string(b_en) + "s") == 1));
        }
    CHECK(stems == 1);
  }
}

TEST_CASE("on compounds the training pairs lack, a bpe model translates where a model of words cannot") {
  TempDir dir("bpe-compounds");
  const test::CompoundCorpus corpus = test::make_compound_corpus(1, 2000, 0, 100);
  write_tsv(dir / "train.tsv", corpus.train);
  write_tsv(dir / "test.tsv", corpus.test);
  const auto run = [&](const std::string& tokenizer, int64_t vocab_size) {
    TrainOptions o = default_train_options("corpus");
    o.data_path = dir / "train.tsv", o.test_path = dir / "test.tsv", o.out_dir = dir / tokenizer;
    o.tokenizer = tokenizer, o.vocab_size = vocab_size, o.shared_vocab = tokenizer == "bpe";
    o.d_model = 32, o.d_ff = 128, o.heads = 2, o.layers = 1, o.batch_size = 64, o.steps = 500, o.warmup = 100;
    o.quiet = true;
    return train(o).test_translation.value();
  };
  // Every test source holds a word the word model reads as <unk>, whose translation it must guess.
  const TranslationReport words = run("words", 0), bpe = run("bpe", 400);
  INFO("words: BLEU " << words.bleu.bleu << ", exact " << words.exact_match << "; bpe: BLEU " << bpe.bleu.bleu
                      << ", exact " << bpe.exact_match);
  CHECK(words.exact_match < 0.1);
  CHECK(bpe.exact_match > 0.5);
  CHECK(bpe.bleu.bleu > words.bleu.bleu + 30);
}
