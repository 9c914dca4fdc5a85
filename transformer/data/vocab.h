// Vocab: the bijection between tokens and the integer ids the embedding tables index.
// Ids 0..3 are the specials every model needs; the rest are the training tokens, most frequent
// first (ties alphabetical), so the same training data always gives the same ids.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "transformer/data/data_error.h"

namespace gradformer {

class Vocab {
 public:
  // The special ids, fixed so a checkpoint's vocabulary and the batches agree without asking.
  static constexpr int64_t pad = 0;  // <pad>: fills short sentences; masked out of attention and loss
  static constexpr int64_t bos = 1;  // <s>:   the first decoder input
  static constexpr int64_t eos = 2;  // </s>:  ends every source and target sentence
  static constexpr int64_t unk = 3;  // <unk>: any token not seen in training
  static constexpr std::array<std::string_view, 4> specials = {"<pad>", "<s>", "</s>", "<unk>"};

  /// Only the four specials.
  Vocab();

  /// From tokenised training sentences: every token seen at least min_count times, by descending
  /// frequency, ties alphabetical (byte order); max_size > 0 caps the total size, specials included.
  /// DataError if a token is empty or holds whitespace (it could not be saved one per line).
  static Vocab build(const std::vector<std::vector<std::string>>& sentences, int64_t min_count = 1,
                     int64_t max_size = 0);

  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  bool contains(std::string_view token) const;
  /// The token's id, or unk for a token the vocabulary does not hold.
  int64_t id(std::string_view token) const;
  /// The token of an id; IndexError outside [0, size()).
  const std::string& token(int64_t id) const;

  /// The ids of a sentence's words, no specials added. A word that spells <pad>, <s> or </s> is
  /// text, not a marker, so it becomes <unk>: as its own id a "<pad>" in a corpus would be masked
  /// out of attention and the loss, and a "</s>" would end the sentence early.
  std::vector<int64_t> encode(const std::vector<std::string>& words) const;
  std::vector<std::string> decode(const std::vector<int64_t>& ids) const;  // every id, specials too

  /// One token per line in id order, each line ending in '\n' (the checkpoint's metadata format).
  std::string to_text() const;
  /// The inverse of to_text. DataError naming `source` and the line for an empty line, a token
  /// with whitespace, a duplicate token, or a first four lines that are not the specials in order.
  static Vocab from_text(std::string_view text, const std::string& source = "vocabulary");
  /// A vocabulary file: the to_text format, one token per line, line N holding the token of id
  /// N - 1, <pad> <s> </s> <unk> on lines 1 to 4. Read by LineReader (line_reader.h), so Windows line
  /// ends and a byte-order mark are fine. DataError "path: ..." for a file that cannot be opened,
  /// ReadError "path:line: ..." for a read that fails or a line over 1 MiB, and from_text's
  /// "path:line: ..." for a bad line.
  static Vocab read_file(const std::string& path);

  friend bool operator==(const Vocab& a, const Vocab& b) { return a.tokens_ == b.tokens_; }

 private:
  void add(const std::string& token);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int64_t> ids_;
};

/// The ids a person would read: drops <s> and <pad>, and stops at the first </s> (a decoded
/// hypothesis carries on past it only because batches decode to a fixed length). Keeps <unk>.
std::vector<int64_t> strip_specials(const std::vector<int64_t>& ids);

}  // namespace gradformer
