// Measuring a model: teacher-forced loss, translation quality (BLEU, exact match), the copy task's
// exact match, and pictures of what it attends to.
#pragma once

#include <string>
#include <vector>

#include "transformer/data/batch.h"
#include "transformer/data/tsv.h"
#include "transformer/model/decoding.h"
#include "transformer/train/bleu.h"

namespace gradformer {

/// The batch through the model, teacher-forced: logits [B, T, V_tgt] for tgt_out, with the source
/// masked where it is padding (Vocab::pad) and the target also where it is the future:
///   model.forward(src, tgt_in, padding_mask(src), target_mask(tgt_in))
Variable teacher_forced_logits(const EncoderDecoder& model, const Batch& batch);

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
/// translations against the references. Unknown source words map to <unk>.
TranslationReport evaluate_translation(EncoderDecoder& model, const std::vector<SentencePair>& pairs,
                                       const Vocab& source_vocab, const Vocab& target_vocab, int64_t beam = 1,
                                       double alpha = 0.6, int64_t batch_size = 64);

/// Translates one tokenised sentence; the output tokens without specials.
std::vector<std::string> translate(EncoderDecoder& model, const std::vector<std::string>& source,
                                   const Vocab& source_vocab, const Vocab& target_vocab, int64_t beam = 1,
                                   double alpha = 0.6);

/// Fresh copy-task sequences decoded greedily: how many of `count` come back exactly
/// (the Annotated Transformer's check, and the one its PyTorch code makes).
int64_t copy_task_exact_match(EncoderDecoder& model, int64_t count, Generator& gen);

/// For as long as it lives, every encoder and decoder layer keeps the attention weights of its
/// last forward pass (EncoderLayer::attention, DecoderLayer::self_attention and cross_attention);
/// on the way out, even by an exception, they stop keeping them and the weights are dropped.
class KeepAttention {
 public:
  explicit KeepAttention(EncoderDecoder& model) : model_(model) { keep(true); }
  ~KeepAttention() { keep(false); }
  KeepAttention(const KeepAttention&) = delete;
  KeepAttention& operator=(const KeepAttention&) = delete;

 private:
  void keep(bool on);
  EncoderDecoder& model_;
};

/// The file name of one attention map: "encoder-layer0-head1.svg" (kind encoder, decoder-self or
/// decoder-cross), and whether a file name is one of those (what a replaced run removes).
std::string attention_map_name(const std::string& kind, int64_t layer, int64_t head);
bool is_attention_map_name(const std::string& file_name);

/// SVG heatmaps of every layer and head for a batch of one sentence pair, teacher-forced: encoder
/// self-attention, decoder self-attention and cross-attention, labelled with one label per
/// position of src and tgt_in, written as
/// `directory`/{encoder,decoder-self,decoder-cross}-layer<L>-head<H>.svg. Returns the paths.
/// The layers keep their weights only during the call, also when it throws (a DataError if the
/// directory cannot be created or a file written).
std::vector<std::string> write_attention_maps(EncoderDecoder& model, const Batch& one,
                                              const std::vector<std::string>& source_labels,
                                              const std::vector<std::string>& target_labels,
                                              const std::string& directory);

}  // namespace gradformer
