// How a Hugging Face tokenizer.json turns tokens back into text: its "decoder", a chain of steps
// each taking the list of token strings to a new list, the results joined at the end, as the
// tokenizers library defines them:
//   ByteLevel    every token written in GPT-2's byte characters becomes its bytes (a token holding a
//                character that stands for no byte stays as it is), all joined into one
//   Replace      in each token, every occurrence of a string by another ("▁" -> " ")
//   ByteFallback runs of tokens "<0xNN>" become their bytes: the text they spell if it is UTF-8,
//                else one U+FFFD per byte
//   Fuse         all tokens joined into one
//   Strip        from each token, up to `start` leading and `stop` trailing copies of a character
//   Metaspace    "▁" -> " " in each token, except that the first token's are dropped (unless
//                prepend_scheme is "never")
//   Sequence     the steps in order (Llama 2: Replace, ByteFallback, Fuse, Strip)
// and no decoder at all: the tokens joined by single spaces, as the library does then.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/support/json.h"

namespace gradformer {

class HubDecoder {
 public:
  /// The "decoder" member (nullptr or null: none). DataError naming `source` for another type.
  static HubDecoder parse(const Json* decoder, const std::string& source);

  /// The text of the tokens; bytes as the steps leave them (ByteLevel's may not be UTF-8: a model can
  /// emit half a character).
  std::string decode(std::vector<std::string> tokens) const;
  /// What one token stands for on its own, as bytes: the per-token steps only (no Strip, whose
  /// space belongs to the text's start, and a lone "<0xNN>" as its byte).
  std::string token_bytes(const std::string& token) const;

 private:
  enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace };
  struct Step {
    Kind kind;
    std::string pattern{}, content{};  // Replace's; Strip's and Metaspace's character in `content`
    int64_t start = 0, stop = 0;       // Strip
    bool strip_first = true;           // Metaspace: prepend_scheme is not "never"
  };
  static void add_steps(const Json& decoder, const std::string& source, std::vector<Step>& steps);
  static Step step_of(const Json& decoder, const std::string& type, const std::string& where);
  static void apply(const Step& step, std::vector<std::string>& tokens);
  bool none_ = true;  // no decoder: join with spaces
  std::vector<Step> steps_;
};

}  // namespace gradformer
