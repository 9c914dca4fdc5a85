// Fuzzes the byte-level BPE (transformer/data/bpe.h, pre_tokenize.h). Every input is read three ways:
//   - as a text for a fixed small tokenizer: any bytes encode, and decode to themselves;
//   - as a text for GPT-2's pre-tokenizer: an ASCII text is cut into non-empty pieces that join back
//     to it, a text outside ASCII is a ValueError (not yet classified);
//   - split at its first NUL byte into an encoder.json and a vocab.bpe: they load or are a DataError,
//     and a tokenizer that loads round-trips the input's bytes too.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz.h"
#include "transformer/data/bpe.h"
#include "transformer/data/pre_tokenize.h"

namespace {

using gradformer::BytePairEncoding;

const BytePairEncoding& fixed_tokenizer() {
  static const BytePairEncoding tokenizer = [] {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    const std::vector<BytePairEncoding::Merge> merges = {{" ", "t"}, {"h", "e"},  {" t", "he"},
                                                         {"l", "l"}, {"ll", "o"}, {"e", "r"}};
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

void check_round_trip(const BytePairEncoding& tokenizer, std::string_view text, const char* which) {
  const std::vector<int64_t> ids = tokenizer.encode(chunks(text));
  if (ids.size() > text.size()) gradformer::fuzz::fail(std::string(which) + ": more ids than bytes");
  if (tokenizer.decode(ids) != text) gradformer::fuzz::fail(std::string(which) + ": decode(encode(text)) != text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The fixed tokenizer has every byte: encoding cannot fail, so even a gradformer::Error is a bug.
  try {
    check_round_trip(fixed_tokenizer(), text, "fixed tokenizer");
  } catch (const std::exception& e) {
    gradformer::fuzz::fail(std::string("the fixed tokenizer threw: ") + e.what());
  }
  gradformer::fuzz::guarded([&] {
    const std::vector<std::string> pieces = gradformer::gpt2_pre_tokens(text);
    std::string joined;
    for (const std::string& piece : pieces) {
      if (piece.empty()) gradformer::fuzz::fail("an empty pre-token");
      joined += piece;
    }
    if (joined != text) gradformer::fuzz::fail("the pre-tokens do not join back to the text");
  });
  const size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return 0;
  gradformer::fuzz::guarded([&] {
    const BytePairEncoding loaded =
        BytePairEncoding::parse_gpt2(text.substr(0, nul), "encoder.json", text.substr(nul + 1), "vocab.bpe");
    // Every byte is a token (the loader checks), so only a merge to a missing token can fail, as a
    // DataError, which guarded accepts.
    check_round_trip(loaded, text, "loaded tokenizer");
  });
  return 0;
}
