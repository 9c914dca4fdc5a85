// Checks exercises::lm_batch (tutorials/exercises/15_lm_batch.cpp, or the reference solution) against
// batches written out by hand and the library's make_lm_batch (transformer/data/lm_batch.h): one
// sentence, two of different lengths (padding), translation pairs scored from their target only,
// and a random batch of both kinds. Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "exercises.h"

using namespace gradformer;

namespace {

int failed = 0;

std::string row_text(const Tensor& t, int64_t row) {
  std::string out = "[";
  for (int64_t j = 0; j < t.size(1); ++j) {
    if (j > 0) out += ' ';
    out += std::to_string(static_cast<int64_t>(t.at({row, j})));
  }
  return out + "]";
}

// "" if the two batches are the same, else the first thing that differs.
std::string difference(const LmBatch& mine, const LmBatch& expected) {
  for (const auto& [name, a, b] :
       {std::tuple{"inputs", mine.inputs, expected.inputs}, std::tuple{"targets", mine.targets, expected.targets}}) {
    if (!a.defined()) return std::string(name) + " is missing";
    if (a.dtype() != DType::Int64) return std::string(name) + " is not int64";
    if (a.shape() != b.shape())
      return std::string(name) + " has shape " + to_string(a.shape()) + ", expected " + to_string(b.shape());
    for (int64_t row = 0; row < a.size(0); ++row)
      if (row_text(a, row) != row_text(b, row))
        return std::string(name) + " row " + std::to_string(row) + " is " + row_text(a, row) + ", expected " +
               row_text(b, row);
  }
  if (mine.ntokens != expected.ntokens)
    return "ntokens is " + std::to_string(mine.ntokens) + ", expected " + std::to_string(expected.ntokens);
  return "";
}

void check(const std::string& what, const LmBatch& mine, const LmBatch& expected) {
  const std::string differs = difference(mine, expected);
  std::printf("%-50s: %s\n", what.c_str(), differs.empty() ? "yes" : ("NO, " + differs).c_str());
  if (!differs.empty()) ++failed;
}

LmBatch written_out(const std::vector<int64_t>& inputs, const std::vector<int64_t>& targets, int64_t rows,
                    int64_t ntokens) {
  const auto columns = static_cast<int64_t>(inputs.size()) / rows;
  return {from_vector(inputs, {rows, columns}), from_vector(targets, {rows, columns}), ntokens};
}

}  // namespace

static int checks() {
  // <s> une sœur est bleue . </s> as ids: <s> = 1, </s> = 2, the words 10..14.
  const LmSequence sentence = sentence_sequence({10, 11, 12, 13, 14}), short_one = sentence_sequence({20, 21});
  check("one sentence: 6 predictions for 5 words", exercises::lm_batch({sentence}),
        written_out({1, 10, 11, 12, 13, 14}, {10, 11, 12, 13, 14, 2}, 1, 6));
  // Row 2 is padded with <pad> (0): padding is read, but never predicted.
  check("two sentences: the shorter one padded", exercises::lm_batch({sentence, short_one}),
        written_out({1, 10, 11, 12, 13, 14, /**/ 1, 20, 21, 2, 0, 0}, {10, 11, 12, 13, 14, 2, /**/ 20, 21, 2, 0, 0, 0},
                    2, 9));
  // <s> 30 31 <sep> 40 41 </s> with <sep> = 5: only the target's words and </s> are scored.
  const LmSequence pair = translation_sequence({30, 31}, {40, 41}, 5);
  check("translation: the source is read, not scored", exercises::lm_batch({pair}),
        written_out({1, 30, 31, 5, 40, 41}, {0, 0, 0, 40, 41, 2}, 1, 3));
  // A random batch: sentences and pairs of lengths 1 to 12, against the library's make_lm_batch.
  Generator gen(14);
  std::vector<LmSequence> sequences;
  std::vector<int64_t> indices;
  const auto words = [&] {
    std::vector<int64_t> out(static_cast<size_t>(gen.integer(1, 13)));
    for (int64_t& id : out) id = gen.integer(6, 50);
    return out;
  };
  for (int64_t i = 0; i < 16; ++i) {
    sequences.push_back(i % 3 == 2 ? translation_sequence(words(), words(), 5) : sentence_sequence(words()));
    indices.push_back(i);
  }
  check("16 random sequences: the library's make_lm_batch", exercises::lm_batch(sequences),
        make_lm_batch(sequences, indices));
  std::printf(failed == 0 ? "language-model batch: all checks pass\n" : "language-model batch: %d check(s) FAILED\n",
              failed);
  return failed;
}

int main() { return exercises::run_checks("15_lm_batch.cpp", 14, checks); }
