// Text printed as it is generated: a byte-level model's tokens are bytes, and a character of
// several bytes (é, 日, an emoji) may be split between two tokens. Utf8Stream gives back the text
// that is complete so far and holds back the bytes of a character still unfinished, so that what it
// gives, concatenated, is exactly the whole continuation decoded at once (Tokenizer::decode: each
// invalid sequence as U+FFFD, Python's errors='replace').
#pragma once

#include <string>
#include <string_view>

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

}  // namespace gradformer
