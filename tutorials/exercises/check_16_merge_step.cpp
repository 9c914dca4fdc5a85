// Checks exercises::merge_step (tutorials/exercises/16_merge_step.cpp, or the reference solution)
// against steps worked by hand (weighted counts, ties, overlapping pairs, nothing left to merge) and
// against the library's learn_bpe (transformer/data/learn_bpe.h): merge steps repeated from the
// bytes of a text must choose learn_bpe's merges, in its order. Prints what it found; exits 1 if a
// check fails or the file is still the stub.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "exercises.h"
#include "transformer/data/learn_bpe.h"
#include "transformer/data/pre_tokenize.h"

using namespace gradformer;
using exercises::ChosenPair;
using exercises::WordCount;

namespace {

int failed = 0;

std::string text_of(const std::vector<WordCount>& words) {
  std::string out;
  for (const WordCount& word : words) {
    out += out.empty() ? "[" : " [";
    for (size_t i = 0; i < word.ids.size(); ++i) {
      if (i > 0) out += ' ';
      out += std::to_string(word.ids[i]);
    }
    out += "]x";
    out += std::to_string(word.count);
  }
  return out;
}

std::string text_of(const ChosenPair& p) {
  std::string out = "(";
  out += std::to_string(p.left);
  out += ", ";
  out += std::to_string(p.right);
  out += ") count ";
  out += std::to_string(p.count);
  return out;
}

// One step on `words` with new id 99 must choose `pair` and leave `after`.
void check(const std::string& what, std::vector<WordCount> words, const ChosenPair& pair,
           const std::vector<WordCount>& after) {
  const ChosenPair chosen = exercises::merge_step(words, 99);
  std::string differs;
  if (text_of(chosen) != text_of(pair))
    differs = "chose " + text_of(chosen) + ", expected " + text_of(pair);
  else if (text_of(words) != text_of(after))
    differs = "left " + text_of(words) + ", expected " + text_of(after);
  std::printf("%-58s: %s\n", what.c_str(), differs.empty() ? "yes" : ("NO, " + differs).c_str());
  if (!differs.empty()) ++failed;
}

// Merge steps from the bytes of the text's pre-tokens, until learn_bpe's merges are used up: the
// same pairs, in the same order. New ids as learn_bpe gives them: the next free one, or the id of a
// token that already spells the joined bytes.
void against_learn_bpe(const std::string& text, int64_t vocab_size) {
  const std::vector<std::string> pre_tokens = gpt2_pre_tokens(text);
  const BytePairEncoding library = learn_bpe(pre_tokens, vocab_size);
  std::map<std::string, int64_t> counts;
  for (const std::string& p : pre_tokens) ++counts[p];
  std::vector<WordCount> words;
  for (const auto& [p, count] : counts) words.push_back({std::vector<int64_t>(p.begin(), p.end()), count});
  for (WordCount& word : words)
    for (int64_t& id : word.ids) id = static_cast<unsigned char>(id);
  std::vector<std::string> tokens;
  std::map<std::string, int64_t> ids;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b)), ids[tokens.back()] = b;
  std::string differs;
  for (size_t step = 0; step < library.merges().size() && differs.empty(); ++step) {
    const auto& [left, right] = library.merges()[step];
    const auto [at, added] = ids.emplace(left + right, static_cast<int64_t>(tokens.size()));
    if (added) tokens.push_back(left + right);
    const ChosenPair chosen = exercises::merge_step(words, at->second);
    const auto spelled = [&](int64_t id) {
      return id >= 0 && id < static_cast<int64_t>(tokens.size()) ? tokens[static_cast<size_t>(id)] : "?";
    };
    if (spelled(chosen.left) != left || spelled(chosen.right) != right)
      differs = "merge " + std::to_string(step + 1) + " joined '" + spelled(chosen.left) + "' + '" +
                spelled(chosen.right) + "', learn_bpe '" + left + "' + '" + right + "'";
  }
  std::printf("%-58s: %s\n", ("learn_bpe's " + std::to_string(library.merges().size()) + " merges of a text").c_str(),
              differs.empty() ? "yes" : ("NO, " + differs).c_str());
  if (!differs.empty()) ++failed;
}

}  // namespace

static int checks() {
  check("(1, 2) occurs 5 + 2 times, (2, 3) 5", {{{1, 2, 3}, 5}, {{1, 2}, 2}, {{3}, 4}}, {1, 2, 7},
        {{{99, 3}, 5}, {{99}, 2}, {{3}, 4}});
  check("counts weighted: (6, 5) 1 + 3 beats (5, 6) twice", {{{5, 6, 5, 6}, 1}, {{6, 5}, 3}}, {6, 5, 4},
        {{{5, 99, 6}, 1}, {{99}, 3}});
  check("a tie goes to the smaller left id", {{{8, 9}, 2}, {{2, 3}, 2}}, {2, 3, 2}, {{{8, 9}, 2}, {{99}, 2}});
  check("then to the smaller right id", {{{4, 7}, 1}, {{4, 6}, 1}}, {4, 6, 1}, {{{4, 7}, 1}, {{99}, 1}});
  check("\"7 7 7\": (7, 7) counted twice, joined once", {{{7, 7, 7}, 1}}, {7, 7, 2}, {{{99, 7}, 1}});
  check("\"7 7 7 7\": counted three times, joined twice", {{{7, 7, 7, 7}, 1}}, {7, 7, 3}, {{{99, 99}, 1}});
  check("pairs never cross from one word into the next", {{{1, 2}, 1}, {{3, 4}, 2}}, {3, 4, 2},
        {{{1, 2}, 1}, {{99}, 2}});
  check("nothing left to merge: {-1, -1, 0}, words unchanged", {{{1}, 3}, {{2}, 1}}, {-1, -1, 0}, {{{1}, 3}, {{2}, 1}});
  against_learn_bpe("the cat sat on the mat; the rat ate the hat", 256 + 30);
  against_learn_bpe(
      "Byte-pair encoding starts from the bytes and joins the most frequent pair, again and again: "
      "low, lower, lowest, newer, newest, wider, widest. The tokens it learns are the pieces that "
      "occur most often in the text it learns from, 2017's paper's 37000 tokens included.",
      256 + 120);
  std::printf(failed == 0 ? "merge step: all checks pass\n" : "merge step: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("16_merge_step.cpp", 17, checks); }
