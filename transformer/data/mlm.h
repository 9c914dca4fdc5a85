// Data for an encoder-only (BERT-style) model: sentences as one sequence <s> w_1 ... w_n </s>, the
// masked-language-model corruption of a batch, and a labelled task for fine-tuning.
//
// BERT (Devlin et al., 2018, section 3.1, "Task #1: Masked LM"):
//   "we simply mask some percentage of the input tokens at random, and then predict those masked
//    tokens ... we mask 15% of all WordPiece tokens in each sequence at random."
//   "If the i-th token is chosen, we replace the i-th token with (1) the [MASK] token 80% of the
//    time (2) a random token 10% of the time (3) the unchanged i-th token 10% of the time. Then,
//    T_i will be used to predict the original token with cross entropy loss."
//
// Vocabularies. Every vocabulary starts with the four fixed specials <pad> <s> </s> <unk> (vocab.h),
// and the checkpoints of the other architectures hold exactly those. An encoder-only vocabulary
// adds one more, <mask>, as its fifth line (id 4), before the words; to Vocab::from_text it is an
// ordinary token, so nothing that reads vocabularies changes. <s> plays BERT's [CLS]: the first
// position, whose final vector the classifier reads; </s> plays [SEP].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"
#include "transformer/data/tsv.h"
#include "transformer/data/vocab.h"

namespace gradformer {

inline constexpr int64_t kMaskId = 4;  // <mask> in an encoder-only vocabulary
inline constexpr std::string_view kMaskToken = "<mask>";
inline constexpr int64_t kFirstWordId = 5;  // ids below are specials, never chosen or drawn

/// The four specials, <mask>, then the words of `sentences` as Vocab::build orders them.
Vocab encoder_only_vocab(const std::vector<std::vector<std::string>>& sentences);
/// DataError naming `source` unless id 4 is <mask> and there is at least one word.
void check_encoder_only_vocab(const Vocab& vocab, const std::string& source);

/// Sentences (ids without specials) -> [B, S] int64: <s> ids </s>, then <pad> to the longest.
/// ValueError for no sentences or an empty one.
Tensor encode_sequences(const std::vector<std::vector<int64_t>>& sentences);

struct MlmOptions {
  double select = 0.15;  // of the word positions, chosen for prediction
  double mask = 0.8;     // of the chosen, replaced by <mask>
  double random = 0.1;   // of the chosen, replaced by a word drawn uniformly from [5, V)
};                       // the rest (0.1) of the chosen keep their token

struct MlmBatch {
  Tensor input;   // [B, S] int64: the corrupted ids the model reads
  Tensor labels;  // [B, S] int64: the original id at chosen positions, <pad> (ignored by the loss) elsewhere
  int64_t candidates = 0, chosen = 0, masked = 0, randomized = 0, kept = 0;  // counts of this draw
};

/// BERT's corruption of ids [B, S] (from encode_sequences): each word position (id >= 5) is chosen
/// with probability select; a chosen one becomes <mask>, a random word, or stays, in the ratio
/// mask : random : rest. One uniform draw decides each word position, in row-major order, so the
/// result depends only on the generator's state. ValueError for probabilities outside [0, 1] or
/// mask + random > 1, vocab_size <= 5; DTypeError/ShapeError for ids that are not [B, S] int64.
MlmBatch mask_tokens(const Tensor& ids, int64_t vocab_size, Generator& gen, const MlmOptions& options = {});

// ---- a labelled task: is the sentence negated? ----------------------------------------------------

/// Label 1 when the French sentence is negated (it holds "pas": "il ne mange pas", "elle n' est pas
/// heureuse"), else 0. The word that decides it is word 3 to 6 (counting from 0) depending on the subject
/// ("je", "le chat", "les chats noirs") and the elision, so no single position gives the answer.
int64_t negation_label(const std::vector<std::string>& french);
/// The class names of the negation task, in label order: affirmative, negated.
std::vector<std::string> negation_labels();

struct LabelledSentence {
  std::vector<std::string> tokens;
  int64_t label = 0;
};
/// The source side of each pair with its negation_label.
std::vector<LabelledSentence> negation_task(const std::vector<SentencePair>& pairs);

struct ClassifyBatch {
  Tensor ids;     // [B, S] int64 (encode_sequences)
  Tensor labels;  // [B] int64
};
/// examples[indices] encoded with `vocab` (unknown words <unk>). IndexError for a bad index.
ClassifyBatch collate_labelled(const std::vector<LabelledSentence>& examples, const std::vector<int64_t>& indices,
                               const Vocab& vocab);

}  // namespace gradformer
