// Measuring a model: teacher-forced loss, translation quality (BLEU, exact match), the copy task's
// exact match, pictures of what it attends to; a language model's loss and its translations; the
// encoder-only model's masked-LM score and its classifications.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "transformer/data/batch.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/mlm.h"
#include "transformer/data/text_blocks.h"
#include "transformer/data/tsv.h"
#include "transformer/evaluate/bleu.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/decoding.h"
#include "transformer/model/encoder_only.h"

namespace gradformer {

// ---- a batch through a model: the forward passes training and evaluation share ---------------------

/// The batch through the encoder-decoder, teacher-forced: logits [B, T, V_tgt] for tgt_out, with
/// the source masked where it is padding (Vocab::pad) and the target also where it is the future:
///   model.forward(src, tgt_in, padding_mask(src), target_mask(tgt_in))
Variable teacher_forced_logits(const EncoderDecoder& model, const Batch& batch);
/// The causal language-modelling loss: mean cross-entropy of the scored targets (label smoothing
/// optional), the model run under the causal mask AND the padding mask of the inputs.
Variable lm_loss(const DecoderOnly& model, const LmBatch& batch, double label_smoothing = 0);

/// Teacher-forced log P(target | source) of each sentence of the batch: the sum over its non-pad
/// tgt_out tokens of log_softmax(logits) at the true token (as marian-scorer and fairseq score).
std::vector<double> sentence_log_probs(EncoderDecoder& model, const Batch& batch);

/// Mean cross-entropy per non-pad target token over the batches (no label smoothing: the number a
/// reader compares across runs), in eval mode without a graph.
double teacher_forced_loss(EncoderDecoder& model, const std::vector<Batch>& batches);

struct TranslationReport {
  BleuScore bleu;
  double exact_match = 0;  // 0..1
  std::vector<std::vector<std::string>> hypotheses;
};

/// Translates every source (greedy when beam == 1, else beam search with alpha) and scores the
/// translations against the references, word by word: each hypothesis is the target tokenizer's
/// text cut at spaces (hypothesis_words), so BLEU and exact match are those of the detokenized
/// output whatever the tokenizer. A source is encoded as encode_source does (a tokenizer of words
/// maps an unknown word to <unk>); each ends in </s> unless source_eos is false (the checkpoint's
/// data.source_eos). A Vocab converts to the tokenizer of its words.
TranslationReport evaluate_translation(EncoderDecoder& model, const std::vector<SentencePair>& pairs,
                                       const Tokenizer& source_tokenizer, const Tokenizer& target_tokenizer,
                                       int64_t beam = 1, double alpha = 0.6, int64_t batch_size = 64,
                                       bool source_eos = true);

/// Translates one sentence of whitespace-separated words (fed as encode_source(source_tokenizer,
/// source, source_eos)); the translation's words, as hypothesis_words gives them. DataError for a
/// sentence of more tokens than the model takes, or text the tokenizer cannot encode.
std::vector<std::string> translate(EncoderDecoder& model, const std::vector<std::string>& source,
                                   const Tokenizer& source_tokenizer, const Tokenizer& target_tokenizer,
                                   int64_t beam = 1, double alpha = 0.6, bool source_eos = true);

/// The words of a decoded hypothesis: its ids without specials (strip_specials), decoded to text
/// and cut at spaces. For a tokenizer of words, the tokens themselves.
std::vector<std::string> hypothesis_words(const std::vector<int64_t>& ids, const Tokenizer& target_tokenizer);

/// Fresh copy-task sequences decoded greedily: how many of `count` come back exactly
/// (the Annotated Transformer's check, and the one its PyTorch code makes).
int64_t copy_task_exact_match(EncoderDecoder& model, int64_t count, Generator& gen);

// ---- the decoder-only model ------------------------------------------------------------------------

/// Mean loss per scored token over the batches, without smoothing, in eval mode without a graph.
double lm_eval_loss(DecoderOnly& model, const std::vector<LmBatch>& batches);
/// A language model on running text: the mean loss per predicted token, and bits per byte,
///   bits/byte = (sum of -ln p over the predicted tokens) / (ln 2 x the bytes those tokens stand for)
///             = loss x tokens / (bytes x ln 2),
/// which, unlike the loss per token, compares models whatever their tokenizer.
struct TextScore {
  double loss = 0;                // nats per predicted token
  int64_t tokens = 0, bytes = 0;  // predicted tokens, and the bytes they stand for
  double perplexity() const { return std::exp(loss); }
  double bits_per_byte() const {
    return loss * static_cast<double>(tokens) / (static_cast<double>(bytes) * std::log(2.0));
  }
};
/// The tokens cut into consecutive blocks of context + 1 (text_eval_batches: each token but the
/// first predicted once), in eval mode.
TextScore score_text(DecoderOnly& model, const Tokenizer& tokenizer, const std::vector<int64_t>& tokens,
                     int64_t context);
/// Greedy translation with a decoder-only model: generate after "<s> source <sep>" until </s>.
std::vector<std::string> translate_as_lm(DecoderOnly& model, const std::vector<std::string>& source,
                                         const Vocab& vocab);

// ---- the encoder-only model ----------------------------------------------------------------------

struct MlmScore {
  double loss = 0;      // per chosen token
  double accuracy = 0;  // of the chosen tokens, the share whose original token the model recovers
};
/// The masked-LM objective over sentences in batches of 100, masked with Generator(seed, 3) (the
/// same draw every time), in eval mode.
MlmScore mlm_evaluate(const EncoderOnly& model, const Vocab& vocab,
                      const std::vector<std::vector<std::string>>& sentences, uint64_t seed);
/// The predicted class of each sentence (tokens split on whitespace), in batches of 100.
std::vector<int64_t> classify(const EncoderOnly& model, const Vocab& vocab,
                              const std::vector<std::vector<std::string>>& sentences);
/// The share of labelled sentences classified right, and their mean cross-entropy (eval mode).
double classify_accuracy(const EncoderOnly& model, const Vocab& vocab, const std::vector<LabelledSentence>& examples);
double classify_loss(const EncoderOnly& model, const Vocab& vocab, const std::vector<LabelledSentence>& examples);

}  // namespace gradformer
