// A text of any length read a piece at a time, each piece cut where no token can straddle the cut,
// so that the pieces' tokens, one after the other, are the whole text's: what lets `gradformer
// tokenize` hold a piece in memory, not the text.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

#include "transformer/data/tokenizer.h"

namespace gradformer {

/// The last place in `text` where a tokenizer of `kind` may cut it that its bytes from `from` on show (a reader
/// that looked at the bytes before `from` already passes only the new ones), or 0 if there is none:
/// for bytes, anywhere (the end); for words, before a space or a tab; for byte-level tokens, after a
/// line end between two ASCII letters or digits, or before a space between two of them: no
/// pre-token (GPT-2's rules: a run of letters, of digits or of other symbols, with at most one
/// leading space, or a run of whitespace) spans such a place, and merges never cross pre-tokens.
/// For a hub tokenizer, nowhere: its text is read whole (Llama 2's normalizer puts "▁" before every
/// text it is given, so a cut would add one).
size_t last_token_boundary(Tokenizer::Kind kind, std::string_view text, size_t from = 0);

/// Reads `in` to its end in blocks of `block` bytes and gives `piece` each stretch up to the last
/// token boundary read so far, with its offset in the input, then the rest at the end (one call at
/// least, perhaps with an empty text). A stretch without a boundary grows until one comes: ReadError
/// "name: more than MAX bytes without a place to cut it between tokens" past `max_bytes`, and "name:
/// read failed: reason".
void read_text_pieces(std::FILE* in, const std::string& name, Tokenizer::Kind kind,
                      const std::function<void(std::string_view text, size_t offset)>& piece,
                      size_t block = size_t{1} << 20, int64_t max_bytes = int64_t{1} << 30);

}  // namespace gradformer
