// A Hugging Face tokenizer.json read from scratch: the BPE tokenizers of today's hub models
// (GPT-2, Llama 2, TinyLlama, Mistral, Llama 3 and their kin; Qwen2's too, whose NFC normalization
// is checked rather than applied: hub_pipeline.h's require_nfc), each part as
// the tokenizers library defines it. Encoding a text goes
//   added_tokens   matched in the raw text first, longest first at the leftmost place (the
//                  library's AddedVocabulary); each becomes its id, the text between goes on. Tokens
//                  marked "normalized" are matched again after the normalizer, in normalized text
//   normalizer     hub_pipeline.h: Prepend and Replace (Llama 2's "▁"), or none
//   pre_tokenizer  hub_pipeline.h: ByteLevel (GPT-2), Split and ByteLevel (Llama 3, Qwen2), Metaspace
//   model          hub_bpe.h: BPE with byte_fallback, unk_token, fuse_unk, ignore_merges
// and decoding through the decoder (hub_decoder.h). The post_processor is not applied: encode() is
// the ids of plain text, nothing added (as the library's encode(text, add_special_tokens=False));
// bos() says which token a TemplateProcessing post-processor would put first, so a caller can add it.
// Anything the reader does not implement exactly (another model type, normalizer, pre-tokenizer,
// Split pattern or decoder; added tokens with lstrip, rstrip or single_word; BPE dropout or a
// subword prefix) is refused with a DataError naming the component and its value, never guessed.
// Ids: model.vocab's and added_tokens', which together must be 0 .. size()-1 with no gap.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensor/support/json.h"
#include "transformer/data/hub_bpe.h"
#include "transformer/data/hub_decoder.h"
#include "transformer/data/hub_pipeline.h"

namespace gradformer {

/// One entry of added_tokens.
struct HubAddedToken {
  int64_t id = 0;
  std::string content;
  bool special = false;
  bool normalized = false;
};

class HubTokenizer {
 public:
  /// True for a parsed file that has "model" and "version" members: the hub's tokenizer.json.
  static bool is_hub_json(const Json& root);
  /// The tokenizer of a parsed tokenizer.json; DataError "source: component ..." for what is not
  /// supported or malformed.
  static HubTokenizer from_json(const Json& root, const std::string& source);
  /// The same from the file's text (DataError for text that is not JSON).
  static HubTokenizer parse(std::string_view text, const std::string& source);

  /// The ids of UTF-8 text (ValueError naming the offset of a byte that is not).
  std::vector<int64_t> encode(std::string_view text) const;
  /// The decoder's text of the ids, special tokens included as their text; ByteLevel's bytes as they
  /// are (possibly half a character). ValueError for an id outside [0, size()).
  std::string decode(const std::vector<int64_t>& ids) const;
  /// The token of an id as the file writes it ("Ġthe", "▁the", "<0x0A>", "<|eot_id|>").
  const std::string& token(int64_t id) const;
  /// The bytes a token stands for (a special added token: 0).
  int64_t byte_length(int64_t id) const;
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  /// The id of the added token with this text ("<|eot_id|>", "</s>"), or nullopt.
  std::optional<int64_t> added_token(std::string_view content) const;
  /// The token the post-processor's TemplateProcessing puts before a single text, if any.
  std::optional<int64_t> bos() const { return bos_; }
  /// The file as compact JSON, members in the file's order: what a checkpoint keeps.
  const std::string& json() const { return json_; }

 private:
  HubTokenizer() = default;
  void read_added_tokens(const Json* added, const std::string& source);
  void number_tokens(const std::string& source);
  /// The text between added tokens: normalized, cut again at normalized added tokens, pre-tokenized
  /// and merged.
  void encode_text(std::string_view text, bool starts_text, std::vector<int64_t>& ids) const;

  std::shared_ptr<const HubBpeModel> model_;
  HubNormalizer normalizer_;
  HubPreTokenizer pre_tokenizer_;
  HubDecoder decoder_;
  std::vector<HubAddedToken> added_;
  /// Added tokens found in a text: at the leftmost place one starts, the longest there.
  struct Matcher {
    std::vector<std::pair<std::string, int64_t>> tokens;  // longest first
    std::array<bool, 256> starts_a_token{};               // by first byte: a fast "none here"
    void add(std::string text, int64_t id);
    void sort();
    /// Calls on_text(text, offset) for each stretch between tokens and on_token(id) for each token.
    template <class OnText, class OnToken>
    void cut(std::string_view text, OnText on_text, OnToken on_token) const;
  };
  Matcher raw_, normalized_;         // added tokens matched before normalizing, and after
  std::vector<std::string> tokens_;  // by id
  std::vector<bool> special_;        // by id
  std::optional<int64_t> bos_;
  std::string json_;
};

}  // namespace gradformer
