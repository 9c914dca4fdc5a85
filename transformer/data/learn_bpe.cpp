#include "transformer/data/learn_bpe.h"

#include <map>
#include <utility>

namespace gradformer {

namespace {

using Pair = std::pair<int64_t, int64_t>;

/// A distinct pre-token as token ids, and how often it occurs.
struct Word {
  std::vector<int64_t> ids;
  int64_t count = 0;
};

/// The most frequent neighbouring pair over all words, ties to the smallest pair; count 0 if none.
std::pair<Pair, int64_t> most_frequent_pair(const std::vector<Word>& words) {
  std::map<Pair, int64_t> counts;
  for (const Word& word : words) {
    for (size_t i = 0; i + 1 < word.ids.size(); ++i) counts[{word.ids[i], word.ids[i + 1]}] += word.count;
  }
  std::pair<Pair, int64_t> best{{0, 0}, 0};
  for (const auto& [pair, count] : counts) {  // ascending pairs: a tie keeps the smaller one
    if (count > best.second) best = {pair, count};
  }
  return best;
}

/// Replaces every occurrence of `pair` in ids by `joined`, left to right, without overlap.
void join_pair(std::vector<int64_t>& ids, const Pair& pair, int64_t joined) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < ids.size();) {
    if (i + 1 < ids.size() && ids[i] == pair.first && ids[i + 1] == pair.second) {
      out.push_back(joined);
      i += 2;
    } else {
      out.push_back(ids[i]);
      i += 1;
    }
  }
  ids = std::move(out);
}

}  // namespace

BytePairEncoding learn_bpe(const std::vector<std::string>& pre_tokens, int64_t vocab_size) {
  if (vocab_size < 256) {
    throw ValueError(message("learn_bpe: vocab_size ", vocab_size, " is below 256, the byte tokens alone"));
  }
  std::map<std::string, int64_t> counts;  // sorted, so the words' order depends on the text alone
  for (const std::string& pre_token : pre_tokens) ++counts[pre_token];
  std::vector<Word> words;
  for (const auto& [pre_token, count] : counts) {
    Word word{{}, count};
    for (const char c : pre_token) word.ids.push_back(static_cast<unsigned char>(c));
    words.push_back(std::move(word));
  }
  std::vector<std::string> tokens;
  std::map<std::string, int64_t> ids;
  for (int b = 0; b < 256; ++b) {
    tokens.emplace_back(1, static_cast<char>(b));
    ids[tokens.back()] = b;
  }
  std::vector<BytePairEncoding::Merge> merges;
  while (static_cast<int64_t>(tokens.size()) < vocab_size) {
    const auto [pair, count] = most_frequent_pair(words);
    if (count == 0) break;  // every word is one token
    const std::string& left = tokens[static_cast<size_t>(pair.first)];
    const std::string& right = tokens[static_cast<size_t>(pair.second)];
    merges.emplace_back(left, right);
    const auto [it, added] = ids.emplace(left + right, static_cast<int64_t>(tokens.size()));
    if (added) tokens.push_back(it->first);
    for (Word& word : words) join_pair(word.ids, pair, it->second);
  }
  return BytePairEncoding(std::move(tokens), std::move(merges));
}

}  // namespace gradformer
