// How text becomes the ids a model reads, and back: one class for the three ways this library
// cuts text into tokens.
//   words  the whitespace-separated words of a closed vocabulary (vocab.h): simple, readable, and
//          a word the training data lacked becomes <unk>
//   bytes  every byte is a token: 256 tokens, nothing is ever unknown, sequences as long as the
//          text in bytes
//   bpe    byte-level byte-pair encoding (bpe.h): bytes joined by learned merges into frequent
//          pieces ("Ġthe", "ing"), so common words are one token and nothing is unknown either
//   hub    a Hugging Face tokenizer.json's BPE tokenizer (hub_tokenizer.h: GPT-2's, Llama 2's,
//          Mistral's, Llama 3's, ...), its ids exactly the file's, its added tokens (<|eot_id|>, </s>)
//          found by special()
// Ids: the specials first (<pad> <s> </s> <unk>, then any the task adds, such as <sep>), then the
// words, or the 256 bytes and the merged tokens in the order they were learned. GPT-2's released
// tokenizer (Tokenizer::gpt2) has no specials in front: its ids are exactly GPT-2's; nor has a hub one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transformer/data/bpe.h"
#include "transformer/data/learn_bpe.h"
#include "transformer/data/vocab.h"

namespace gradformer {

class HubTokenizer;  // hub_tokenizer.h

class Tokenizer {
 public:
  enum class Kind { Words, Bytes, Bpe, Hub };

  /// The words of `vocab` (implicit: every model trained on words keeps its Vocab as before).
  Tokenizer(Vocab vocab = Vocab());  // NOLINT(google-explicit-constructor)

  /// Vocab::specials, then extra_specials, then the 256 bytes (id = specials + byte value).
  static Tokenizer bytes(const std::vector<std::string>& extra_specials = {});
  /// Vocab::specials, then extra_specials, then bpe's tokens in bpe's order. ValueError for an
  /// extra special that is not "<name>" or repeats one, and for a token of bpe that spells a special
  /// (its text would then be read back as the special).
  static Tokenizer byte_pairs(BytePairEncoding bpe, const std::vector<std::string>& extra_specials = {});
  /// Merges learned from `texts` (each cut by GPT-2's pre-tokenizer; merges never cross a
  /// pre-token) until the tokenizer has vocab_size ids, specials included, or no pair is left.
  /// ValueError for a vocab_size below the specials and the 256 bytes.
  static Tokenizer learn_bpe(const std::vector<std::string_view>& texts, int64_t vocab_size,
                             const std::vector<std::string>& extra_specials = {});
  /// The same, from the pre-tokens' counts: a text too long to hold can be counted a piece at a time
  /// (count_pre_tokens), so that only its distinct pre-tokens are kept.
  static Tokenizer learn_bpe_from_counts(const PreTokenCounts& counts, int64_t vocab_size,
                                         const std::vector<std::string>& extra_specials = {});
  /// Adds the pre-tokens of `text` (GPT-2's pre-tokenizer; UTF-8 text) to `counts`.
  static void count_pre_tokens(PreTokenCounts& counts, std::string_view text);
  /// GPT-2's released tokenizer: its ids exactly, no specials in front (its <|endoftext|> is a
  /// token of its encoder.json, 50256).
  static Tokenizer gpt2(BytePairEncoding bpe);
  /// A Hugging Face tokenizer.json's tokenizer (hub_tokenizer.h), its ids exactly the file's.
  static Tokenizer hub(HubTokenizer hub);
  /// hub() of a tokenizer.json file; DataError "path: ..." for a file that cannot be read, is not
  /// JSON, or holds a part the reader does not support (named).
  static Tokenizer read_hub_file(const std::string& path);

  Kind kind() const { return kind_; }
  std::string kind_name() const;  // "words", "bytes", "bpe", "hub"
  int64_t size() const;
  /// The ids before the byte-level tokens (0 for words: their specials are part of the vocab).
  int64_t special_count() const { return specials_; }
  /// The id of a special by name ("<sep>"), or nullopt. GPT-2's: any token by its text. A hub
  /// tokenizer's: an added token by its text ("<|endoftext|>", "<|eot_id|>", "</s>", "<|im_end|>").
  std::optional<int64_t> special(std::string_view name) const;
  /// This tokenizer with `names` added as special tokens after every id it has (ids size(),
  /// size() + 1, ...), for a model whose embedding grows by as many rows: what fine-tuning with a
  /// chat template adds to a tokenizer that lacks the template's tokens. Names special() already
  /// finds are left out. special() finds the added ones, decode() writes their text, encode() never
  /// produces them (no text can spell a turn's end). ValueError for a words tokenizer, and for a name
  /// not written <name> without spaces.
  Tokenizer with_added(const std::vector<std::string>& names) const;
  /// The tokens with_added appended, in order: ids size() - added().size() on.
  const std::vector<std::string>& added() const { return added_; }

  /// The token a hub tokenizer's post-processor puts before a text (Llama's <s> or
  /// <|begin_of_text|>), which encode() does not add; nullopt for the other kinds.
  std::optional<int64_t> bos() const;

  /// The ids of a text, no specials added. Words: split at spaces and tabs, an unknown word <unk>.
  /// Bytes: any bytes. Bpe and hub: the text must be UTF-8 (ValueError naming the byte offset
  /// otherwise); hub: the file's pipeline, its post-processor not applied (see bos()).
  std::vector<int64_t> encode(std::string_view text) const;
  /// The ids a model reads for a text it is to continue: bos() first when there is one (the model
  /// was trained with it before every text, as the tokenizers library's post-processor adds it), then
  /// encode(text). An empty text gives no ids.
  std::vector<int64_t> encode_prompt(std::string_view text) const;
  /// The bytes the ids stand for, exactly (words: joined by single spaces); a special as its name.
  /// Hub: the file's decoder's text (Llama 2's drops the space its normalizer put first).
  /// ValueError for an id outside [0, size()).
  std::string decode_bytes(const std::vector<int64_t>& ids) const;
  /// decode_bytes as text: each invalid UTF-8 sequence (a byte-level model may emit half of a
  /// character) replaced by U+FFFD, as GPT-2's decode does (Python's errors='replace').
  std::string decode(const std::vector<int64_t>& ids) const;
  /// One id's token as a person reads it: the word, the special's name, or a byte-level token in
  /// GPT-2's byte characters ("Ġthe": a leading space shows as Ġ, a newline as Ċ).
  std::string piece(int64_t id) const;
  /// How many bytes the id's token stands for (a special: 0), to count bits per byte. Words: the
  /// word's length, the space between words not counted; 0 for <pad> <s> </s> <unk> only, as a
  /// vocabulary of words does not tell a task's special (<sep>) from a word.
  int64_t byte_length(int64_t id) const;

  /// The id table a model of this library keeps in its checkpoint, one token a line: words as they
  /// are, byte-level tokens in GPT-2's byte characters. ValueError for gpt2 (no specials in front).
  const Vocab& vocab() const;
  /// The byte-pair encoding of a bytes or bpe tokenizer (ValueError for words).
  const BytePairEncoding& byte_pair_encoding() const;

  /// False for GPT-2's and hub ones: a checkpoint then stores no vocab.* entry, only metadata()'s.
  bool has_vocab() const { return has_vocab_; }

  /// What a checkpoint stores besides vocab(), under `prefix` ("tokenizer.target"): prefix.kind,
  /// prefix.specials (their count) and prefix.merges (one merge a line, GPT-2's vocab.bpe format
  /// without its version line); and for any kind with added tokens, prefix.added (one a line). Words: nothing, so
  /// checkpoints of word models are as they were. GPT-2's: prefix.kind "gpt2", prefix.tokens (every token by id, one a
  /// line, in GPT-2's byte characters: encoder.json's order) and prefix.merges. Hub: prefix.kind "hub" and prefix.json,
  /// the tokenizer.json as compact JSON (hub_tokenizer.h's json()).
  std::map<std::string, std::string> metadata(const std::string& prefix) const;
  /// The inverse: the tokenizer of a checkpoint's vocab and entries (`vocab` unused for gpt2).
  /// DataError naming `source` for an unknown kind, a specials count that does not fit, merges that do not make the
  /// vocabulary's tokens, a bytes tokenizer whose tokens are not the 256 bytes in byte order.
  static Tokenizer from_metadata(const Vocab& vocab, const std::map<std::string, std::string>& metadata,
                                 const std::string& prefix, const std::string& source);

  /// The file `gradformer learn-bpe` writes: one JSON object {"format": "gradformer-tokenizer",
  /// "kind": ..., "specials": [names], "tokens": [every byte-level token in byte characters, by
  /// id], "merges": ["Ġ t", ...]}. Words: the vocab as "tokens" and no merges.
  std::string to_json() const;
  /// The inverse; DataError naming `source` and what is wrong.
  static Tokenizer from_json(std::string_view json, const std::string& source);
  /// from_json of a file, or read_hub_file's tokenizer if the file is the hub's tokenizer.json (its
  /// "model" and "version" members tell); DataError "path: ..." for a file that cannot be read.
  static Tokenizer read_file(const std::string& path);

  friend bool operator==(const Tokenizer& a, const Tokenizer& b);

 private:
  Tokenizer(Kind kind, BytePairEncoding bpe, const std::vector<std::string>& extra_specials, bool has_vocab);

  Kind kind_ = Kind::Words;
  Vocab vocab_;                          // words: the vocabulary; bytes, bpe: specials, then tokens in byte characters
  int64_t specials_ = 0;                 // ids before the byte-level tokens
  bool has_vocab_ = true;                // false for GPT-2's, whose ids have no specials in front
  std::optional<BytePairEncoding> bpe_;  // bytes, bpe
  std::shared_ptr<const HubTokenizer> hub_;  // hub: shared by copies, never changed
  std::vector<std::string> added_;           // with_added's, after every other id (in vocab_ too)
  int64_t base_size() const;                 // the ids before added_
};

}  // namespace gradformer
