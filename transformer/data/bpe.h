// Byte-pair encoding as GPT-2 does it, on bytes: a text is its UTF-8 bytes, every byte is a token,
// and a list of merges, applied lowest rank first, joins neighbouring tokens into longer ones. No
// input is ever unknown, and decoding the ids gives back the very bytes encoded.
//
// The tokenizer every model and command uses is tokenizer.h's Tokenizer, built on this class; with
// GPT-2's pre-tokenizer (pre_tokenize.h), encode(gpt2_pre_tokens(text)) gives GPT-2's ids for any
// UTF-8 text, checked against GPT-2's algorithm run in Python (tests/transformer/data/gpt2_reference/,
// texts in many scripts, emoji, runs of spaces). GPT-2's real files are never read by the tests
// (they are not in the repository); files of the same format written by the tests are.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "transformer/data/data_error.h"

namespace gradformer {

/// GPT-2's bytes_to_unicode(): a printable character for each of the 256 bytes, so that a token's
/// bytes can be written in a JSON or text file. The 188 bytes that already print as one
/// character ('!' to '~', '¡' to '¬', '®' to 'ÿ') stand for themselves; the other 68 (space,
/// control characters, DEL, the no-break space 0xA0 and the soft hyphen 0xAD) take U+0100,
/// U+0101, ... in byte order, so space (byte 32, the 33rd such byte) becomes U+0120 'Ġ' and
/// newline becomes U+010A 'Ċ'.
const std::array<char32_t, 256>& gpt2_byte_characters();

/// The 256 single bytes, in byte order: the tokens of the bytes tokenizer, and where every
/// byte-level BPE starts.
std::vector<std::string> single_byte_tokens();

/// The bytes written as GPT-2's byte characters, as UTF-8: "hi there" -> "hiĠthere".
std::string gpt2_bytes_to_text(std::string_view bytes);

/// The inverse: UTF-8 text of GPT-2 byte characters back to the bytes. DataError
/// "<where>: ..." for text that is not UTF-8 or holds a character that stands for no byte.
std::string gpt2_text_to_bytes(std::string_view text, const std::string& where);
/// The same with `where` made only for an error: a loop over 50,000 tokens builds no message.
std::string gpt2_text_to_bytes(std::string_view text, const std::function<std::string()>& where);

/// A byte-level BPE tokenizer: the tokens by id (each a string of bytes) and the merges by rank.
/// It never changes once built, so many threads may encode with one at the same time.
class BytePairEncoding {
 public:
  /// Two tokens joined by a merge, as bytes.
  using Merge = std::pair<std::string, std::string>;

  /// tokens[id] is token id's bytes; merges[rank] the merge of that rank (0 is applied first).
  /// ValueError for a duplicate token, a token that is empty, a single byte that is not a token (a
  /// text holding it could not be encoded), a duplicate merge or a merge with an empty side.
  BytePairEncoding(std::vector<std::string> tokens, std::vector<Merge> merges);

  /// Reads GPT-2's released files: encoder.json (token -> id, tokens in byte characters) and
  /// vocab.bpe (a version comment line, then one merge a line: two tokens separated by a space,
  /// each line ending in a line end). DataError "path: ..." or "path:line: ..." for a file that
  /// cannot be read or is malformed.
  static BytePairEncoding read_gpt2(const std::string& encoder_json_path, const std::string& vocab_bpe_path);
  /// As read_gpt2, from the files' contents; the names stand in for the paths in messages.
  static BytePairEncoding parse_gpt2(std::string_view encoder_json, const std::string& encoder_name,
                                     std::string_view vocab_bpe, const std::string& vocab_name);

  /// One pre-token split into tokens as GPT-2's bpe() does: start from single bytes; while some
  /// neighbouring pair is a merge, take the pair of lowest rank and join every occurrence of it,
  /// left to right, without overlap ("aaa" with merge "a a" -> "aa", "a"). Empty in, empty out.
  std::vector<std::string> bpe(std::string_view pre_token) const;

  /// The ids of bpe(pre_token) for each pre-token in turn. DataError if a merge makes a token the
  /// vocabulary lacks (a vocab.bpe and encoder.json that do not belong together).
  std::vector<int64_t> encode(const std::vector<std::string>& pre_tokens) const;

  /// The bytes of the tokens, concatenated: decode(encode(split(text))) == text for any bytes.
  /// ValueError for an id outside [0, size()).
  std::string decode(const std::vector<int64_t>& ids) const;

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  const std::string& token(int64_t id) const;
  /// The id of a token's bytes, or -1 if it is not a token.
  int64_t id(std::string_view token) const;
  const std::vector<Merge>& merges() const { return merges_; }

 private:
  // Merging works on symbols, not strings: a symbol is a token's id, or, for a string the merges
  // join or make that is not a token (files that do not belong together), an id from size() on.
  // 32 bits hold them: GPT-2 has 50,257 tokens. A pair of symbols is one 64-bit key.
  using Symbol = int32_t;
  static constexpr int32_t kNoMerge = INT32_MAX;  // the "rank" of a pair that is no merge

  /// The rank of merging left and right, or kNoMerge.
  int32_t rank(Symbol left, Symbol right) const;
  /// pre_token merged as bpe() describes, as symbols, into `symbols`; `ranks` is scratch space.
  void merge_symbols(std::string_view pre_token, std::vector<Symbol>& symbols, std::vector<int32_t>& ranks) const;
  const std::string& symbol_bytes(Symbol symbol) const;

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<Merge> merges_;
  std::array<Symbol, 256> byte_symbols_{};       // each byte's token
  std::vector<std::string> extra_symbols_;       // the strings of symbols size(), size() + 1, ...
  std::unordered_map<uint64_t, int32_t> ranks_;  // (left << 32 | right) -> rank
  std::vector<Symbol> joined_;                   // joined_[rank]: the symbol that merge makes
};

}  // namespace gradformer
