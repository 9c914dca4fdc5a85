// The BPE model of the Hugging Face tokenizers library ("model": {"type": "BPE", ...} in a
// tokenizer.json), as that library defines it. Unlike bpe.h's GPT-2 encoder, which starts from a
// pre-token's bytes, it starts from its characters (code points): each character is the token that
// spells it; a character no token spells becomes, with byte_fallback, the tokens "<0xNN>" of its
// UTF-8 bytes, else the unknown token (consecutive ones fused into one with fuse_unk), else nothing
// (the library drops it silently when there is no unknown token). Then merges join neighbouring
// tokens, one merge at a time: of all neighbouring pairs that are merges, the one of lowest rank,
// the leftmost of equal ones, until no pair is a merge. A byte-level model (GPT-2, Llama 3, Qwen2)
// works the same way: its pre-tokenizer has already written each byte as one of GPT-2's byte
// characters ("Ġ" for a space), so characters are bytes there.
// With ignore_merges (Llama 3), a pre-token that is itself a token is that token, unmerged.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gradformer {

/// The options of the BPE model that change how a pre-token is cut.
struct HubBpeOptions {
  bool byte_fallback = false;            // a character without a token becomes its bytes' "<0xNN>"
  std::optional<std::string> unk_token;  // what an unknown character becomes (must be a token)
  bool fuse_unk = false;                 // consecutive unknown characters make one unknown token
  bool ignore_merges = false;            // a pre-token that is a token is taken whole
};

/// A string hash that also takes string_views, so that looking a token up builds no string.
struct TokenHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
};
using TokenIds = std::unordered_map<std::string, int64_t, TokenHash, std::equal_to<>>;

class HubBpeModel {
 public:
  using Merge = std::pair<std::string, std::string>;

  /// vocab: token -> id; merges[rank]: two tokens whose concatenation is a token. DataError naming
  /// `source` and the merge for a merge whose sides or concatenation are not tokens, and for an
  /// unk_token that is not one. A merge given twice takes its later rank, as the library's map does.
  HubBpeModel(TokenIds vocab, const std::vector<Merge>& merges, HubBpeOptions options, const std::string& source);

  /// Appends the ids of one pre-token (UTF-8, as the pre-tokenizer left it) to `ids`.
  void tokenize(std::string_view pre_token, std::vector<int64_t>& ids) const;

  /// The id of a token, or -1.
  int64_t id(std::string_view token) const;
  const TokenIds& vocab() const { return vocab_; }
  const HubBpeOptions& options() const { return options_; }

 private:
  struct MergeResult {
    int32_t rank;
    int32_t joined;  // the id of the token the merge makes
  };
  /// The ids a pre-token starts as, before any merge (see above).
  std::vector<int32_t> initial_symbols(std::string_view pre_token) const;
  /// The merges applied to `symbols` in place, as the library's Word::merge_all does.
  void merge_all(std::vector<int32_t>& symbols) const;
  const MergeResult* find_merge(int32_t left, int32_t right) const;

  TokenIds vocab_;
  HubBpeOptions options_;
  std::unordered_map<uint64_t, MergeResult> merges_;  // (left << 32 | right) -> rank, joined
  std::array<int32_t, 256> byte_tokens_{};            // the id of "<0xNN>" for each byte, or -1
  int32_t unk_id_ = -1;
};

}  // namespace gradformer
