// Text printed as it is generated: a byte-level model's tokens are bytes, and a character of
// several bytes (é, 日, an emoji) may be split between two tokens. Utf8Stream gives back the text
// that is complete so far and holds back the bytes of a character still unfinished, so that what it
// gives, concatenated, is exactly the whole continuation decoded at once (Tokenizer::decode: each
// invalid sequence as U+FFFD, Python's errors='replace').
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "transformer/data/tokenizer.h"

namespace gradformer {

class Utf8Stream {
 public:
  /// Appends `bytes`; returns the text complete so far that was not given before.
  std::string add(std::string_view bytes);
  /// The end of the stream: the bytes held back, as text (an unfinished character as U+FFFD).
  std::string finish();

 private:
  std::string pending_;  // bytes not given yet: at most an unfinished character's
};

/// An answer's tokens as text while they are drawn, one at a time: each token is decoded with all
/// before it (a decoder may depend on a token's place: Llama 2's drops the space its normalizer put
/// first, at the text's start only, so a token decoded alone would lose its space), and the new bytes
/// go through a Utf8Stream. For answers (hundreds of tokens): the decoding is quadratic in length.
class AnswerText {
 public:
  explicit AnswerText(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  /// Appends a token; returns the text complete so far that was not given before.
  std::string add(int64_t id);
  std::string finish() { return stream_.finish(); }

 private:
  const Tokenizer& tokenizer_;
  std::vector<int64_t> ids_;
  size_t given_ = 0;  // bytes of the decoded text handed to stream_
  Utf8Stream stream_;
};

}  // namespace gradformer
