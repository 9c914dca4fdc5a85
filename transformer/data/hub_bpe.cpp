#include "transformer/data/hub_bpe.h"

#include <cstdio>
#include <queue>

#include "transformer/data/data_error.h"
#include "transformer/data/utf8.h"

namespace gradformer {

namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

/// The byte-fallback token of a byte, as the library spells it: "<0x0A>", "<0xF0>".
std::string byte_token(int byte) {
  char text[8];
  std::snprintf(text, sizeof text, "<0x%02X>", byte);
  return text;
}

/// A merge the heap holds: the pair at `position` (its left symbol) and what it makes.
struct Candidate {
  int32_t rank;
  int32_t position;
  int32_t joined;
};

/// The heap's order: lowest rank first, then leftmost (std::priority_queue pops the greatest).
struct LaterCandidate {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.position > b.position;
  }
};

}  // namespace

HubBpeModel::HubBpeModel(TokenIds vocab, const std::vector<Merge>& merges, HubBpeOptions options,
                         const std::string& source)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  const auto token_id = [&](const std::string& token, size_t rank, const char* what) {
    const auto it = vocab_.find(token);
    if (it == vocab_.end())
      throw DataError(message(source, ": model.merges[", rank, "] \"", merges[rank].first, " ", merges[rank].second,
                              "\": ", what, " \"", token, "\" is not a token of model.vocab"));
    return static_cast<int32_t>(it->second);
  };
  merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const int32_t left_id = token_id(left, rank, "its left side");
    const int32_t right_id = token_id(right, rank, "its right side");
    const int32_t joined = token_id(left + right, rank, "the token it makes");
    merges_[pair_key(left_id, right_id)] = {static_cast<int32_t>(rank), joined};
  }
  for (int byte = 0; byte < 256; ++byte)
    byte_tokens_[static_cast<size_t>(byte)] = static_cast<int32_t>(id(byte_token(byte)));
  if (options_.unk_token) {
    unk_id_ = static_cast<int32_t>(id(*options_.unk_token));
    if (unk_id_ < 0)
      throw DataError(message(source, ": model.unk_token \"", *options_.unk_token, "\" is not a token of model.vocab"));
  }
}

int64_t HubBpeModel::id(std::string_view token) const {
  const auto it = vocab_.find(token);
  return it == vocab_.end() ? -1 : it->second;
}

const HubBpeModel::MergeResult* HubBpeModel::find_merge(int32_t left, int32_t right) const {
  const auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

// The library's BPE::merge_word: token by character; byte fallback; unknown characters.
std::vector<int32_t> HubBpeModel::initial_symbols(std::string_view pre_token) const {
  std::vector<int32_t> symbols;
  int32_t pending_unk = -1;  // an unknown token not yet added (fuse_unk may extend it)
  for (size_t i = 0; i < pre_token.size();) {
    const size_t length = decode_utf8(pre_token, i, "tokenizer.json BPE").length;
    const std::string_view character = pre_token.substr(i, length);
    i += length;
    if (const int64_t token = id(character); token >= 0) {
      if (pending_unk >= 0) symbols.push_back(pending_unk), pending_unk = -1;
      symbols.push_back(static_cast<int32_t>(token));
      continue;
    }
    if (options_.byte_fallback) {
      bool all_bytes = true;
      for (const char c : character) all_bytes = all_bytes && byte_tokens_[static_cast<unsigned char>(c)] >= 0;
      if (all_bytes) {  // (the library adds them before an unknown token still pending: so here)
        for (const char c : character) symbols.push_back(byte_tokens_[static_cast<unsigned char>(c)]);
        continue;
      }
    }
    if (unk_id_ < 0) continue;  // no unknown token: the character is dropped
    if (pending_unk >= 0 && !options_.fuse_unk) symbols.push_back(pending_unk);
    pending_unk = unk_id_;
  }
  if (pending_unk >= 0) symbols.push_back(pending_unk);
  return symbols;
}

// The library's Word::merge_all: a heap of the pairs that are merges, lowest rank (then leftmost)
// on top; merging one makes new pairs with its neighbours, pushed in turn; a popped pair whose
// symbols have changed since it was pushed is skipped. Symbols are a linked list over the array.
void HubBpeModel::merge_all(std::vector<int32_t>& symbols) const {
  const auto count = static_cast<int32_t>(symbols.size());
  std::vector<int32_t> previous(symbols.size()), next(symbols.size());
  std::priority_queue<Candidate, std::vector<Candidate>, LaterCandidate> heap;
  for (int32_t i = 0; i < count; ++i) {
    previous[i] = i - 1, next[i] = i + 1 < count ? i + 1 : -1;
    if (i + 1 < count)
      if (const MergeResult* m = find_merge(symbols[i], symbols[i + 1])) heap.push({m->rank, i, m->joined});
  }
  constexpr int32_t kRemoved = -1;
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    const int32_t right = next[top.position];
    if (symbols[top.position] == kRemoved || right < 0) continue;
    const MergeResult* still = find_merge(symbols[top.position], symbols[right]);
    if (still == nullptr || still->joined != top.joined) continue;  // an expired entry
    symbols[top.position] = top.joined;
    symbols[right] = kRemoved;
    next[top.position] = next[right];
    if (next[right] >= 0) previous[next[right]] = top.position;
    if (const int32_t left = previous[top.position]; left >= 0)
      if (const MergeResult* m = find_merge(symbols[left], top.joined)) heap.push({m->rank, left, m->joined});
    if (const int32_t after = next[top.position]; after >= 0)
      if (const MergeResult* m = find_merge(top.joined, symbols[after])) heap.push({m->rank, top.position, m->joined});
  }
  std::erase(symbols, kRemoved);
}

void HubBpeModel::tokenize(std::string_view pre_token, std::vector<int64_t>& ids) const {
  if (pre_token.empty()) return;
  if (options_.ignore_merges)
    if (const int64_t whole = id(pre_token); whole >= 0) {
      ids.push_back(whole);
      return;
    }
  std::vector<int32_t> symbols = initial_symbols(pre_token);
  merge_all(symbols);
  ids.insert(ids.end(), symbols.begin(), symbols.end());
}

}  // namespace gradformer
