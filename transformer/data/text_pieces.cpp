#include "transformer/data/text_pieces.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "transformer/data/data_error.h"

namespace gradformer {

namespace {

bool ascii_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

size_t last_token_boundary(Tokenizer::Kind kind, std::string_view text, size_t from) {
  if (kind == Tokenizer::Kind::Bytes) return text.size();
  if (kind == Tokenizer::Kind::Hub) return 0;  // read whole: a normalizer may prepend "▁" to each piece
  if (kind == Tokenizer::Kind::Words) {        // words are cut at spaces and tabs
    for (size_t i = text.size(); i-- > std::max<size_t>(from, 1);)
      if (text[i] == ' ' || text[i] == '\t') return i;
    return 0;
  }
  for (size_t i = text.size(); i-- > std::max<size_t>(from, 2);) {
    if (!ascii_alnum(text[i])) continue;
    // One line end or space between two letters or digits: "x\n|y" (the line end a pre-token of its
    // own, ended by the text or not) and "x| y" (the space leads the next one). Not after a run of
    // whitespace: "x\n\ny" is "x", "\n", "\n", "y", but "x\n\n" ends in one pre-token "\n\n".
    if (!ascii_alnum(text[i - 2])) continue;
    if (text[i - 1] == '\n') return i;
    if (text[i - 1] == ' ') return i - 1;
  }
  return 0;
}

void read_text_pieces(std::FILE* in, const std::string& name, Tokenizer::Kind kind,
                      const std::function<void(std::string_view text, size_t offset)>& piece, size_t block,
                      int64_t max_bytes) {
  std::string pending;
  size_t offset = 0;  // of pending's first byte in the input
  std::vector<char> buffer(std::max<size_t>(block, 1));
  errno = 0;
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), in)) > 0;) {
    const size_t looked_at = pending.size();  // no boundary before it: only the new bytes can end at one
    pending.append(buffer.data(), n);
    const size_t cut = last_token_boundary(kind, pending, looked_at);
    if (cut == 0) {
      if (static_cast<int64_t>(pending.size()) > max_bytes)
        throw ReadError(message(name, ": more than ", max_bytes, " bytes without a place to cut it between tokens"));
      continue;
    }
    piece(std::string_view(pending).substr(0, cut), offset);
    pending.erase(0, cut), offset += cut;
  }
  if (std::ferror(in))
    throw ReadError(message(name, ": read failed: ", errno != 0 ? std::strerror(errno) : "the stream failed"));
  piece(pending, offset);
}

}  // namespace gradformer
