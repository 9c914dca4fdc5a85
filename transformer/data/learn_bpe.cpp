#include "transformer/data/learn_bpe.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <queue>
#include <string_view>
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

/// The tokens of every distinct pre-token, one after the other, as linked lists (a merge removes a
/// token from the middle in constant time), with the pair counts kept up to date merge by merge.
/// Each pair knows the places where it starts, so a merge visits those places alone: its cost is
/// in proportion to how often the pair occurs, whether that is in many short pre-tokens or in one
/// long one (a text without spaces is one pre-token of all its letters).
class PairCounts {
 public:
  using Place = int32_t;  // a token's place among all the pre-tokens' tokens, in the text's order

  /// pre_tokens: each distinct pre-token's bytes and how often it occurs.
  explicit PairCounts(const std::vector<std::pair<std::string_view, int64_t>>& pre_tokens) {
    size_t places = 0;
    for (const auto& pre_token : pre_tokens) places += pre_token.first.size();
    if (places > static_cast<size_t>(std::numeric_limits<Place>::max()))
      throw ValueError(message("learn_bpe: ", places, " bytes of distinct pre-tokens, more than the ",
                               std::numeric_limits<Place>::max(), " it can hold"));
    id_.reserve(places), pre_token_.reserve(places), previous_.reserve(places), next_.reserve(places);
    for (const auto& [bytes, count] : pre_tokens) {
      const auto first = static_cast<Place>(id_.size()), which = static_cast<Place>(count_.size());
      count_.push_back(count);
      for (size_t i = 0; i < bytes.size(); ++i) {
        const auto place = first + static_cast<Place>(i);
        id_.push_back(static_cast<unsigned char>(bytes[i]));
        pre_token_.push_back(which);
        previous_.push_back(i == 0 ? kNone : place - 1);
        next_.push_back(i + 1 == bytes.size() ? kNone : place + 1);
      }
    }
    for (Place p = 0; p < static_cast<Place>(id_.size()); ++p)
      if (next_[p] != kNone) add(p, +1);
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

  /// Joins `pair` into `joined` at every place it occurs, left to right without overlap within a
  /// pre-token ("a a a" joins its first two), and recounts the pairs on either side of each place.
  void merge(PairKey pair, Id joined) {
    const auto found = starts_.find(pair);
    if (found == starts_.end()) return;
    std::vector<Place> places = std::move(found->second);
    starts_.erase(found);
    std::sort(places.begin(), places.end());  // positions follow the text: left to right
    places.erase(std::unique(places.begin(), places.end()), places.end());
    const Id left = left_of(pair), right = right_of(pair);
    for (const Place p : places) {
      const Place q = next_[p];  // the place may have lost the pair since it was noted
      if (id_[p] != left || q == kNone || id_[q] != right) continue;
      const Place before = previous_[p], after = next_[q];
      if (before != kNone) add(before, -1);
      add(p, -1);
      if (after != kNone) add(q, -1);
      id_[p] = joined, id_[q] = kGone;
      next_[p] = after;
      if (after != kNone) previous_[after] = p;
      if (before != kNone) add(before, +1);
      if (after != kNone) add(p, +1);
    }
    apply_changes();
  }

 private:
  static constexpr Place kNone = -1;  // no token before the first or after the last of a pre-token
  static constexpr Id kGone = -1;     // a token joined into the one before it

  /// Notes a change of `sign` times its pre-token's count for the pair starting at p; a new pair
  /// (sign +1) also notes p as one of its places.
  void add(Place p, int sign) {
    const PairKey pair = pair_key(id_[p], id_[next_[p]]);
    changes_.emplace_back(pair, sign * count_[pre_token_[p]]);
    if (sign > 0) starts_[pair].push_back(p);
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

  std::vector<Id> id_;                                      // the token at each place, or kGone
  std::vector<Place> pre_token_;                            // the pre-token each place is in
  std::vector<int64_t> count_;                              // how often each pre-token occurs
  std::vector<Place> previous_, next_;                      // the neighbouring places, or kNone
  std::unordered_map<PairKey, int64_t> counts_;             // pairs of count 0 are absent
  std::unordered_map<PairKey, std::vector<Place>> starts_;  // where each pair starts (some stale)
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, ComesLater> heap_;
  std::vector<std::pair<PairKey, int64_t>> changes_;  // (pair, change of its count), not yet added
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
  std::vector<std::pair<std::string_view, int64_t>> pre_tokens;
  for (const auto& [pre_token, count] : counts) {
    if (count < 0) {
      throw ValueError(
          message("learn_bpe: pre-token \"", gpt2_bytes_to_text(pre_token), "\" has a negative count, ", count));
    }
    if (count > 0 && pre_token.size() >= 2) pre_tokens.emplace_back(pre_token, count);  // else it holds no pair
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
  PairCounts pair_counts(pre_tokens);
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
