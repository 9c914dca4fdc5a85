// Fuzzes the byte-level BPE (transformer/data/bpe.h, pre_tokenize.h, utf8.h). Every input is read
// four ways:
//   - as a text for a fixed small tokenizer: any bytes encode, and decode to themselves;
//   - as a text for GPT-2's pre-tokenizer: UTF-8 is cut into the pieces a slow, literal matcher of
//     the pattern finds (below), which join back to it and encode and decode to it; bytes that are
//     not UTF-8 are a ValueError naming the first bad offset; utf8_replace_invalid gives UTF-8, the
//     same text for UTF-8, and is the same again when applied twice;
//   - as choices of code points from all planes (biased toward spaces, apostrophes and characters
//     of every class), always valid UTF-8, checked as above: random bytes are rarely UTF-8;
//   - split at its first NUL byte into an encoder.json and a vocab.bpe: they load or are a DataError,
//     and a tokenizer that loads round-trips the input's bytes too.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz.h"
#include "tensor/support/utf8.h"
#include "transformer/data/bpe.h"
#include "transformer/data/pre_tokenize.h"
#include "transformer/data/utf8.h"

namespace {

using gradformer::BytePairEncoding;
using gradformer::CharacterClass;

const BytePairEncoding& fixed_tokenizer() {
  static const BytePairEncoding tokenizer = [] {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    const std::vector<BytePairEncoding::Merge> merges = {{" ", "t"},       {"h", "e"},           {" t", "he"},
                                                         {"l", "l"},       {"ll", "o"},          {"e", "r"},
                                                         {"\xC3", "\xA9"}, {"\xE3\x80", "\x80"}, {"\xE3", "\x80"}};
    for (const auto& [left, right] : merges) tokens.push_back(left + right);
    return BytePairEncoding(tokens, merges);
  }();
  return tokenizer;
}

/// The text cut into pre-tokens of at most 8 bytes, so that merges meet the pieces' ends.
std::vector<std::string> chunks(std::string_view text) {
  std::vector<std::string> pieces;
  for (size_t i = 0; i < text.size(); i += 8) pieces.emplace_back(text.substr(i, 8));
  return pieces;
}

void check_round_trip(const BytePairEncoding& tokenizer, const std::vector<std::string>& pieces, std::string_view text,
                      const char* which) {
  const std::vector<int64_t> ids = tokenizer.encode(pieces);
  if (ids.size() > text.size()) gradformer::fuzz::fail(std::string(which) + ": more ids than bytes");
  if (tokenizer.decode(ids) != text) gradformer::fuzz::fail(std::string(which) + ": decode(encode(text)) != text");
}

/// The length in code points of the match of GPT-2's pattern at t[i], found the slow, literal way:
/// each alternative in the pattern's order, each tried as a backtracking regex engine tries it.
size_t reference_match(const std::u32string& t, size_t i) {
  const auto class_at = [&](size_t k) { return gradformer::character_class(t[k]); };
  for (const std::u32string_view contraction : {U"'s", U"'t", U"'re", U"'ve", U"'m", U"'ll", U"'d"}) {
    if (std::u32string_view(t).substr(i).starts_with(contraction)) return contraction.size();
  }
  // ' ?X+': the optional space taken first (greedy), then left out.
  for (const CharacterClass run : {CharacterClass::Letter, CharacterClass::Number, CharacterClass::Other}) {
    for (const size_t start : {i + (t[i] == U' ' ? 1 : 0), i}) {
      size_t end = start;
      while (end < t.size() && class_at(end) == run) ++end;
      if (end > start) return end - i;
    }
  }
  size_t run = 0;
  while (i + run < t.size() && class_at(i + run) == CharacterClass::Space) ++run;
  // \s+(?!\S): the longest run first, giving back one character at a time until no non-space follows.
  for (size_t k = run; k >= 1; --k) {
    if (i + k == t.size() || class_at(i + k) == CharacterClass::Space) return k;
  }
  if (run >= 1) return run;  // \s+
  gradformer::fuzz::fail("no alternative of the pattern matches");
}

std::u32string code_points(std::string_view text) {
  std::u32string out;
  for (size_t i = 0; i < text.size();) {
    const gradformer::Utf8Step step = gradformer::read_utf8(text, i);
    out += step.code_point;
    i += step.length;
  }
  return out;
}

/// The checks on a UTF-8 text: the pre-tokens are the reference matcher's pieces, and they encode
/// and decode back to the text.
void check_utf8_text(std::string_view text) {
  const std::vector<std::string> pieces = gradformer::gpt2_pre_tokens(text);
  const std::u32string t = code_points(text);
  size_t piece = 0;
  std::string joined;
  for (size_t i = 0; i < t.size(); ++piece) {
    const size_t length = reference_match(t, i);
    std::string expected;
    for (size_t k = i; k < i + length; ++k) gradformer::append_utf8(expected, t[k]);
    if (piece >= pieces.size() || pieces[piece] != expected) {
      gradformer::fuzz::fail("pre-token " + std::to_string(piece) + " differs from the reference matcher's");
    }
    joined += pieces[piece];
    i += length;
  }
  if (piece != pieces.size()) gradformer::fuzz::fail("more pre-tokens than the reference matcher finds");
  if (joined != text) gradformer::fuzz::fail("the pre-tokens do not join back to the text");
  check_round_trip(fixed_tokenizer(), pieces, text, "pre-tokens with the fixed tokenizer");
  if (gradformer::utf8_replace_invalid(text) != text) gradformer::fuzz::fail("utf8_replace_invalid changed UTF-8");
}

/// The checks on any bytes: UTF-8 goes to check_utf8_text; anything else is a ValueError naming the
/// first offset where the bytes stop being UTF-8.
void check_bytes(std::string_view text) {
  const std::string replaced = gradformer::utf8_replace_invalid(text);
  if (gradformer::invalid_utf8_at(replaced))
    gradformer::fuzz::fail("utf8_replace_invalid gave bytes that are not UTF-8");
  if (gradformer::utf8_replace_invalid(replaced) != replaced) gradformer::fuzz::fail("utf8_replace_invalid twice");
  // read_utf8 must stop where the library's one validator, tensor/support/utf8.h, does.
  size_t bad = 0;
  while (bad < text.size() && gradformer::read_utf8(text, bad).valid) bad += gradformer::read_utf8(text, bad).length;
  if (gradformer::invalid_utf8_at(text).value_or(text.size()) != bad) {
    gradformer::fuzz::fail("read_utf8 and invalid_utf8_at disagree on where the text stops being UTF-8");
  }
  if (bad == text.size()) return check_utf8_text(text);
  try {
    gradformer::gpt2_pre_tokens(text);
  } catch (const gradformer::ValueError& e) {
    const std::string expected = "gpt2_pre_tokens: not UTF-8 at offset " + std::to_string(bad) + ": ";
    if (std::string_view(e.what()).starts_with(expected)) return;
    gradformer::fuzz::fail(std::string("the error does not name offset ") + std::to_string(bad) + ": " + e.what());
  }
  gradformer::fuzz::fail("bytes that are not UTF-8 were pre-tokenized");
}

/// A code point chosen by the input: often one the pattern treats specially, else from ASCII, from
/// two-byte UTF-8, or from all of Unicode (never a surrogate).
char32_t choose_code_point(gradformer::fuzz::Input& in) {
  static constexpr char32_t kInteresting[] = {
      U' ',  U' ',  U' ', U'\'',  U's',   U'l',    U't',    U'a',   U'1',   U'\n',  U'\r',    U'\t',
      U'!',  0x85,  0xA0, 0x1680, 0x2003, 0x2028,  0x3000,  0x180E, 0x200B, 0x200D, 0x1C,     0xE9,
      0x301, 0x663, 0xBD, 0x216B, 0x65E5, 0x1F600, 0x1F3FD, 0x2019, 0xFFFD, 0xFEFF, 0x10FFFF, 0xE0001};
  switch (in.below(4)) {
    case 0:
      return kInteresting[in.below(std::size(kInteresting))];
    case 1:
      return static_cast<char32_t>(in.below(0x80));
    case 2:
      return static_cast<char32_t>(0x80 + in.below(0x800 - 0x80));
    default: {
      const auto c = static_cast<char32_t>(in.below(0x110000 - 0x800));
      return c >= 0xD800 ? c + 0x800 : c;  // past the surrogates
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The fixed tokenizer has every byte: encoding cannot fail, so even a gradformer::Error is a bug.
  // So is any exception from the pre-tokenizer other than its ValueError for bytes not UTF-8, which
  // check_bytes catches.
  try {
    check_round_trip(fixed_tokenizer(), chunks(text), text, "fixed tokenizer");
    check_bytes(text);
    gradformer::fuzz::Input in(data, size);
    std::string chosen;
    for (int n = 0; n < 256 && !in.exhausted(); ++n) gradformer::append_utf8(chosen, choose_code_point(in));
    check_utf8_text(chosen);
  } catch (const std::exception& e) {
    gradformer::fuzz::fail(std::string("the fixed tokenizer or the pre-tokenizer threw: ") + e.what());
  }
  const size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return 0;
  gradformer::fuzz::guarded([&] {
    const BytePairEncoding loaded =
        BytePairEncoding::parse_gpt2(text.substr(0, nul), "encoder.json", text.substr(nul + 1), "vocab.bpe");
    // Every byte is a token (the loader checks), so only a merge to a missing token can fail, as a
    // DataError, which guarded accepts.
    check_round_trip(loaded, chunks(text), text, "loaded tokenizer");
  });
  return 0;
}
