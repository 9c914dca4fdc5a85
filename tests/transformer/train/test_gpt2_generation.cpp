// Generation with a model of GPT-2's architecture and tokenizer (tiny_gpt2.h): continue_sequence
// against an argmax loop over the whole prefix with model.forward (no cache, the windows slid
// here independently), sampling's determinism, the stop at <|endoftext|>, and the errors.
#include <algorithm>

#include "catch.h"
#include "tiny_gpt2.h"
#include "transformer/model/masks.h"
#include "transformer/model/sampling.h"

namespace gradformer {
namespace {

// The most likely next token after `ids` by the whole forward pass: the argmax of the last row.
int64_t argmax_next(const DecoderOnly& model, const std::vector<int64_t>& ids) {
  const auto T = static_cast<int64_t>(ids.size());
  const Variable logits = model.forward(from_vector(ids, {1, T}), causal_mask(T).unsqueeze(0));  // [1, T, V]
  const std::vector<float> last = logits.value().select(0, 0).select(0, T - 1).contiguous().to_vector<float>();
  return std::max_element(last.begin(), last.end()) - last.begin();
}

// Greedy decoding spelled out: each token from the last max_len tokens' window; when the window
// would pass max_len tokens, it restarts from its last max_len / 2.
std::vector<int64_t> greedy_reference(DecoderOnly& model, std::vector<int64_t> ids, int64_t new_tokens) {
  InferenceGuard guard(model);
  const int64_t max_len = model.config().max_len;
  size_t start = 0;
  std::vector<int64_t> out;
  for (int64_t n = 0; n < new_tokens; ++n) {
    if (static_cast<int64_t>(ids.size() - start) > max_len) start = ids.size() - static_cast<size_t>(max_len / 2);
    const int64_t next = argmax_next(model, {ids.begin() + static_cast<std::ptrdiff_t>(start), ids.end()});
    ids.push_back(next), out.push_back(next);
  }
  return out;
}

struct TinyGpt2 {
  Tokenizer tokens = tiny_gpt2::tokenizer();
  DecoderOnly model{tiny_gpt2::config(tokens.size()), 7};
  std::vector<int64_t> prompt = tokens.encode("the cat is");
};

}  // namespace

TEST_CASE("gpt2 generation: the tiny tokenizer is GPT-2's format, <|endoftext|> its last ordinary token") {
  const Tokenizer tokens = tiny_gpt2::tokenizer();
  CHECK_FALSE(tokens.has_vocab());
  CHECK(tokens.kind() == Tokenizer::Kind::Bpe);
  CHECK(tokens.byte_pair_encoding().id("<|endoftext|>") == tokens.size() - 1);
  CHECK(tokens.encode("the cat is") == std::vector<int64_t>{257, ' ', 'c', 'a', 't', 260});
}

TEST_CASE("gpt2 generation: greedy equals the argmax of model.forward over the whole prefix, within one window") {
  TinyGpt2 t;
  Generator gen(1);
  const SamplingOptions greedy{.max_tokens = 10, .temperature = 0, .eos = -1};
  CHECK(continue_sequence(t.model, t.prompt, greedy, gen) == greedy_reference(t.model, t.prompt, 10));
}

TEST_CASE("gpt2 generation: greedy past the context slides the window as the reference does") {
  TinyGpt2 t;
  Generator gen(1);
  const SamplingOptions greedy{.max_tokens = 45, .temperature = 0, .eos = -1};
  const std::vector<int64_t> got = continue_sequence(t.model, t.prompt, greedy, gen);
  CHECK(got.size() == 45);
  CHECK(got == greedy_reference(t.model, t.prompt, 45));
  // A prompt that fills the context: its first token comes from all of it, then the window slides.
  const std::vector<int64_t> full = t.tokens.encode("the cat is on the mat!!");  // 16 tokens
  REQUIRE(static_cast<int64_t>(full.size()) == t.model.config().max_len);
  CHECK(continue_sequence(t.model, full, {.max_tokens = 5, .temperature = 0, .eos = -1}, gen) ==
        greedy_reference(t.model, full, 5));
}

TEST_CASE("gpt2 generation: top-k 1 is greedy whatever the seed, and the same seed gives the same tokens") {
  TinyGpt2 t;
  Generator a(11), b(12);
  const SamplingOptions top1{.max_tokens = 20, .temperature = 1, .top_k = 1, .eos = -1};
  const std::vector<int64_t> greedy = greedy_reference(t.model, t.prompt, 20);
  CHECK(continue_sequence(t.model, t.prompt, top1, a) == greedy);
  CHECK(continue_sequence(t.model, t.prompt, top1, b) == greedy);
  const SamplingOptions sampled{.max_tokens = 30, .temperature = 1.5, .top_k = 40, .eos = -1};
  Generator c(5), d(5);
  CHECK(continue_sequence(t.model, t.prompt, sampled, c) == continue_sequence(t.model, t.prompt, sampled, d));
}

TEST_CASE("gpt2 generation: the end token stops the continuation and is its last token") {
  TinyGpt2 t;
  const std::vector<int64_t> greedy = greedy_reference(t.model, t.prompt, 30);
  // Take the token greedy decoding gives 4th (or at its first occurrence) as the end token.
  const auto first = std::find(greedy.begin(), greedy.end(), greedy[3]);
  const std::vector<int64_t> expected(greedy.begin(), first + 1);
  Generator gen(1);
  CHECK(continue_sequence(t.model, t.prompt, {.max_tokens = 30, .temperature = 0, .eos = greedy[3]}, gen) == expected);
  // A model made to say <|endoftext|> at once says only that.
  const int64_t end = t.tokens.byte_pair_encoding().id("<|endoftext|>");
  tiny_gpt2::always_end(t.model, end);
  CHECK(greedy_reference(t.model, t.prompt, 1) == std::vector<int64_t>{end});
  CHECK(continue_sequence(t.model, t.prompt, {.max_tokens = 30, .temperature = 0, .eos = end}, gen) ==
        std::vector<int64_t>{end});
}

TEST_CASE("gpt2 generation: an empty prompt or one longer than the context is refused") {
  TinyGpt2 t;
  Generator gen(1);
  CHECK_THROWS_MSG(continue_sequence(t.model, {}, {}, gen), ValueError, "the prompt must hold at least one token");
  const std::vector<int64_t> long_prompt = t.tokens.encode("the cat is on the mat, again");
  REQUIRE(long_prompt.size() == 21);  // the, Ġ c a t, Ġis, Ġ o n, Ġthe, Ġ m a t, ",", Ġ a g a i n
  CHECK_THROWS_MSG(continue_sequence(t.model, long_prompt, {}, gen), ShapeError,
                   "a prompt of 21 tokens exceeds the model's max_len 16");
}

}  // namespace gradformer

namespace gradformer {

TEST_CASE("gpt2 generation: on_token sees each token as it is drawn, across windows, the end token too") {
  TinyGpt2 t;
  const std::vector<int64_t> greedy = greedy_reference(t.model, t.prompt, 40);
  std::vector<int64_t> seen;
  Generator gen(1);
  // Streamed, nothing is kept beyond the window: a generation without end holds one window's ids.
  const auto got = continue_sequence(t.model, t.prompt, {.max_tokens = 40, .temperature = 0, .eos = -1}, gen,
                                     [&](int64_t id) { seen.push_back(id); });
  CHECK(got.empty());
  CHECK(seen == greedy);
  seen.clear();
  const auto stopped = continue_sequence(t.model, t.prompt, {.max_tokens = 40, .temperature = 0, .eos = greedy[20]},
                                         gen, [&](int64_t id) { seen.push_back(id); });
  CHECK(stopped.empty());
  const auto end = std::find(greedy.begin(), greedy.end(), greedy[20]);  // its first time, maybe before 20
  CHECK(seen == std::vector<int64_t>(greedy.begin(), end + 1));
}

}  // namespace gradformer
