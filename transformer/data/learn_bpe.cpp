#include "transformer/data/learn_bpe.h"

#include <algorithm>
#include <optional>
#include <queue>
#include <unordered_set>
#include <utility>

namespace gradformer {

namespace {

using Id = int32_t;        // a token id while learning (far more than any vocabulary needs)
using PairKey = uint64_t;  // (left << 32) | right: keys compare as the pairs (left id, right id) do

PairKey pair_key(Id left, Id right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}
Id left_of(PairKey pair) { return static_cast<Id>(pair >> 32); }
Id right_of(PairKey pair) { return static_cast<Id>(pair & 0xFFFFFFFFu); }

/// A distinct pre-token as token ids, how often it occurs, and the last merge that looked at it.
struct Word {
  std::vector<Id> ids;
  int64_t count = 0;
  int64_t last_seen = -1;
};

/// A pair's count when it was pushed; stale once the pair's count has changed since.
struct HeapEntry {
  int64_t count;
  PairKey pair;
};
/// Orders the heap so that its top is the largest count and, among equal counts, the smallest pair.
struct ComesLater {
  bool operator()(const HeapEntry& a, const HeapEntry& b) const {
    return a.count != b.count ? a.count < b.count : a.pair > b.pair;
  }
};

/// Replaces every occurrence of `pair` in ids by `joined`, left to right, without overlap.
void join_pair(std::vector<Id>& ids, PairKey pair, Id joined) {
  const Id left = left_of(pair), right = right_of(pair);
  size_t out = 0;
  for (size_t i = 0; i < ids.size(); ++out) {
    if (i + 1 < ids.size() && ids[i] == left && ids[i + 1] == right) {
      ids[out] = joined;
      i += 2;
    } else {
      ids[out] = ids[i];
      i += 1;
    }
  }
  ids.resize(out);
}

bool holds_pair(const std::vector<Id>& ids, PairKey pair) {
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    if (pair_key(ids[i], ids[i + 1]) == pair) return true;
  }
  return false;
}

/// The pair counts of a set of words, kept up to date merge by merge.
class PairCounts {
 public:
  explicit PairCounts(std::vector<Word> words) : words_(std::move(words)) {
    for (size_t w = 0; w < words_.size(); ++w) {
      add_counts(words_[w].ids, 0, words_[w].ids.size(), words_[w].count);
      note_pairs(w, [](PairKey) { return true; });
    }
    apply_changes();
  }

  /// The most frequent pair for which skip(pair) is false (ties to the smallest), or none if no
  /// such pair occurs. A skipped pair is gone from the heap until its count changes again.
  template <class Skip>
  std::optional<PairKey> pop_most_frequent(const Skip& skip) {
    while (!heap_.empty()) {
      const HeapEntry top = heap_.top();
      heap_.pop();
      const auto it = counts_.find(top.pair);
      if (it == counts_.end() || it->second != top.count) continue;  // stale
      if (!skip(top.pair)) return top.pair;
    }
    return std::nullopt;
  }

  /// Joins `pair` into `joined` in every word holding it; recounts those words only.
  void merge(PairKey pair, Id joined) {
    ++merges_done_;
    const auto found = words_of_pair_.find(pair);
    if (found == words_of_pair_.end()) return;
    const std::vector<size_t> candidates = std::move(found->second);
    words_of_pair_.erase(found);
    for (const size_t w : candidates) {
      Word& word = words_[w];
      // A word may be listed twice, or may have lost the pair to an earlier merge.
      if (word.last_seen == merges_done_ || !holds_pair(word.ids, pair)) continue;
      word.last_seen = merges_done_;
      before_ = word.ids;
      join_pair(word.ids, pair, joined);
      // Only the pairs between the unchanged start and the unchanged end of the word change.
      const size_t shorter = word.ids.size();
      size_t same_start = 0, same_end = 0;
      while (same_start < shorter && before_[same_start] == word.ids[same_start]) ++same_start;
      while (same_start + same_end < shorter &&
             before_[before_.size() - 1 - same_end] == word.ids[shorter - 1 - same_end]) {
        ++same_end;
      }
      add_counts(before_, same_start, before_.size() - same_end, -word.count);
      add_counts(word.ids, same_start, shorter - same_end, word.count);
      // Only the pairs touching the new token are new to this word.
      note_pairs(w, [&](PairKey p) { return left_of(p) == joined || right_of(p) == joined; });
    }
    apply_changes();
  }

 private:
  /// Notes `change` for each neighbouring pair that holds one of ids[begin, end): every position,
  /// so overlapping pairs too.
  void add_counts(const std::vector<Id>& ids, size_t begin, size_t end, int64_t change) {
    for (size_t i = begin > 0 ? begin - 1 : 0; i < end && i + 1 < ids.size(); ++i) {
      changes_.emplace_back(pair_key(ids[i], ids[i + 1]), change);
    }
  }

  /// Lists word w under each of its pairs for which is_new(pair) holds.
  template <class IsNew>
  void note_pairs(size_t w, const IsNew& is_new) {
    const std::vector<Id>& ids = words_[w].ids;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      const PairKey p = pair_key(ids[i], ids[i + 1]);
      if (!is_new(p)) continue;
      std::vector<size_t>& listed = words_of_pair_[p];
      if (listed.empty() || listed.back() != w) listed.push_back(w);
    }
  }

  /// Adds up the noted changes pair by pair, and pushes each changed pair's new count.
  void apply_changes() {
    std::sort(changes_.begin(), changes_.end());
    for (size_t i = 0; i < changes_.size();) {
      const PairKey pair = changes_[i].first;
      int64_t change = 0;
      for (; i < changes_.size() && changes_[i].first == pair; ++i) change += changes_[i].second;
      if (change == 0) continue;
      int64_t& count = counts_[pair];
      count += change;
      if (count == 0) {
        counts_.erase(pair);
      } else {
        heap_.push({count, pair});
      }
    }
    changes_.clear();
  }

  std::vector<Word> words_;
  std::unordered_map<PairKey, int64_t> counts_;                     // pairs of count 0 are absent
  std::unordered_map<PairKey, std::vector<size_t>> words_of_pair_;  // may list words that lost it
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, ComesLater> heap_;
  std::vector<std::pair<PairKey, int64_t>> changes_;  // (pair, change of its count), not yet added
  std::vector<Id> before_;                            // a word before a merge
  int64_t merges_done_ = 0;
};

}  // namespace

void add_pre_token_counts(PreTokenCounts& counts, const std::vector<std::string>& pre_tokens) {
  for (const std::string& pre_token : pre_tokens) ++counts[pre_token];
}

BytePairEncoding learn_bpe_from_counts(const PreTokenCounts& counts, int64_t vocab_size,
                                       const std::vector<std::string>& reserved) {
  if (vocab_size < 256) {
    throw ValueError(message("learn_bpe: vocab_size ", vocab_size, " is below 256, the byte tokens alone"));
  }
  for (const std::string& name : reserved) {
    if (name.size() < 2) {
      throw ValueError(message("learn_bpe: reserved string \"", gpt2_bytes_to_text(name),
                               "\" is shorter than two bytes, and every single byte is a token"));
    }
  }
  const std::unordered_set<std::string> reserved_set(reserved.begin(), reserved.end());
  std::vector<Word> words;
  for (const auto& [pre_token, count] : counts) {
    if (count < 0) {
      throw ValueError(
          message("learn_bpe: pre-token \"", gpt2_bytes_to_text(pre_token), "\" has a negative count, ", count));
    }
    if (count == 0 || pre_token.size() < 2) continue;  // holds no pair
    Word word{{}, count};
    for (const char c : pre_token) word.ids.push_back(static_cast<unsigned char>(c));
    words.push_back(std::move(word));
  }
  std::vector<std::string> tokens;
  std::unordered_map<std::string, Id> ids;
  for (int b = 0; b < 256; ++b) {
    tokens.emplace_back(1, static_cast<char>(b));
    ids[tokens.back()] = b;
  }
  const auto joined_bytes = [&](PairKey pair) {
    return tokens[static_cast<size_t>(left_of(pair))] + tokens[static_cast<size_t>(right_of(pair))];
  };
  const auto is_reserved = [&](PairKey pair) {
    return !reserved_set.empty() && reserved_set.count(joined_bytes(pair)) > 0;
  };
  PairCounts pair_counts(std::move(words));
  std::vector<BytePairEncoding::Merge> merges;
  while (static_cast<int64_t>(tokens.size()) < vocab_size) {
    const std::optional<PairKey> pair = pair_counts.pop_most_frequent(is_reserved);
    if (!pair) break;  // every word is one token, or only reserved pairs are left
    merges.emplace_back(tokens[static_cast<size_t>(left_of(*pair))], tokens[static_cast<size_t>(right_of(*pair))]);
    const auto [it, added] = ids.emplace(joined_bytes(*pair), static_cast<Id>(tokens.size()));
    if (added) tokens.push_back(it->first);
    pair_counts.merge(*pair, it->second);
  }
  return BytePairEncoding(std::move(tokens), std::move(merges));
}

BytePairEncoding learn_bpe(const std::vector<std::string>& pre_tokens, int64_t vocab_size,
                           const std::vector<std::string>& reserved) {
  PreTokenCounts counts;
  add_pre_token_counts(counts, pre_tokens);
  return learn_bpe_from_counts(counts, vocab_size, reserved);
}

}  // namespace gradformer
