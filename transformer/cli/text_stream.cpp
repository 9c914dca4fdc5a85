#include "transformer/cli/text_stream.h"

#include "transformer/data/utf8.h"

namespace gradformer {

namespace {

// How many bytes at the end of `bytes` start a character that more bytes may still complete: a lead
// byte (11xxxxxx) followed by fewer continuation bytes (10xxxxxx) than it announces. Cutting there
// changes nothing: a decoder starts a new sequence at a lead byte whatever came before it.
size_t unfinished_tail(const std::string& bytes) {
  for (size_t i = 1; i <= 3 && i <= bytes.size(); ++i) {
    const auto c = static_cast<unsigned char>(bytes[bytes.size() - i]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    if (c < 0xC0) return 0;            // ASCII ends nothing unfinished
    const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    return length > i ? i : 0;
  }
  return 0;
}

}  // namespace

std::string Utf8Stream::add(std::string_view bytes) {
  pending_ += bytes;
  const size_t complete = pending_.size() - unfinished_tail(pending_);
  std::string text = utf8_replace_invalid(std::string_view(pending_).substr(0, complete));
  pending_.erase(0, complete);
  return text;
}

std::string Utf8Stream::finish() {
  std::string text = utf8_replace_invalid(pending_);
  pending_.clear();
  return text;
}

std::string AnswerText::add(int64_t id) {
  ids_.push_back(id);
  const std::string text = tokenizer_.decode_bytes(ids_);
  // A decoder that rewrote earlier bytes (none of this library's does) would give them again here.
  const std::string fresh = text.size() >= given_ ? text.substr(given_) : std::string();
  given_ = text.size();
  return stream_.add(fresh);
}

}  // namespace gradformer
