// The steps a Hugging Face tokenizer.json puts text through before its BPE model, each as the
// tokenizers library defines it:
//   normalizer     the text rewritten: Prepend ("▁" before a non-empty text) and Replace (every
//                  occurrence of a string, such as " " -> "▁"), alone or in a Sequence: the
//                  SentencePiece style of Llama 2, TinyLlama and Mistral; or none
//   pre_tokenizer  the text cut into pieces that merges never cross:
//                  ByteLevel     GPT-2's pattern (pre_tokenize.h) when use_regex, then each byte
//                                written as GPT-2's byte character (bpe.h), a space first with
//                                add_prefix_space if the text does not start with one
//                  Split         Llama 3's or Qwen2's pattern (llama3_pre_tokenize.h), Isolated
//                  Metaspace     spaces replaced by "▁", "▁" put first (prepend_scheme "always", or
//                                "first": only where the text starts), cut before each "▁" if split
//                  a Sequence of them, each step applied to every piece the one before made; or none
// Anything else is refused by name (DataError): silently cutting text another way would give ids
// the model never saw.
#pragma once

#include <string>
#include <vector>

#include "tensor/support/json.h"

namespace gradformer {

/// A piece of text on its way through the pipeline, and whether it starts the whole text (Metaspace's
/// prepend_scheme "first" puts "▁" there only).
struct HubPiece {
  std::string text;
  bool starts_text = false;
};

/// Every occurrence of `pattern` in `text` replaced by `content`, left to right, without overlap (an
/// empty pattern replaces nothing): the Replace of normalizers, pre-tokenizers and decoders.
std::string replace_all(const std::string& text, const std::string& pattern, const std::string& content);

/// Unicode's NFC normalization (Qwen2's normalizer), as far as gradformer goes: the composition
/// tables are not implemented, so a text is let through only when every character is one NFC leaves
/// as it is wherever it stands: the code points below U+0300 (ASCII, Latin-1, Latin Extended A and B),
/// U+2002..U+206F (punctuation), CJK ideographs U+4E00..U+9FFF, kana U+3000..U+3096 and U+30A0..U+30FF
/// but the voicing marks, Hangul syllables U+AC00..U+D7A3, and U+1F000..U+1FAFF (emoji). ValueError
/// naming the first other character and its byte offset: NFC might change it, and guessing could
/// give other ids than the model was trained on.
void require_nfc(std::string_view text, const std::string& source);

class HubNormalizer {
 public:
  /// The "normalizer" member (nullptr or null: none). DataError naming `source` for another type.
  static HubNormalizer parse(const Json* normalizer, const std::string& source);
  std::string normalize(std::string text) const;
  bool empty() const { return steps_.empty(); }

 private:
  struct Step {
    bool prepend;         // Prepend `content`; else Replace every `pattern` by `content`
    std::string pattern;  // Replace's
    std::string content;
    bool nfc = false;  // NFC: the text checked to be in it already (see require_nfc)
  };
  static void add_steps(const Json& normalizer, const std::string& source, std::vector<Step>& steps);
  std::vector<Step> steps_;
};

class HubPreTokenizer {
 public:
  /// The "pre_tokenizer" member (nullptr or null: none). DataError naming `source` for another
  /// type, another Split pattern or behaviour, an inverted Split.
  static HubPreTokenizer parse(const Json* pre_tokenizer, const std::string& source);
  /// The pieces of one piece of text (UTF-8), appended to `out`.
  void pre_tokenize(const HubPiece& piece, std::vector<HubPiece>& out) const;

 private:
  enum class Kind { ByteLevel, SplitLlama3, SplitQwen2, Metaspace, Digits };
  enum class Prepend { Never, First, Always };
  struct Step {
    Kind kind;
    bool add_prefix_space = false;  // ByteLevel
    bool use_regex = true;          // ByteLevel
    std::string replacement{};      // Metaspace
    Prepend prepend = Prepend::Always;
    bool split = true;               // Metaspace
    bool individual_digits = false;  // Digits: each digit a piece (else each run of digits)
  };
  static void add_steps(const Json& pre_tokenizer, const std::string& source, std::vector<Step>& steps);
  static Step split_step(const Json& split, const std::string& source);
  static Step metaspace_step(const Json& metaspace, const std::string& source);
  static void apply(const Step& step, const HubPiece& piece, std::vector<HubPiece>& out);
  std::vector<Step> steps_;
};

}  // namespace gradformer
