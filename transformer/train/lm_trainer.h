// Training the decoder-only model: causal language modelling (GPT, Radford et al., 2018, section 3.1):
//
//   "Given an unsupervised corpus of tokens U = {u_1, ..., u_n}, we use a standard language modeling
//    objective to maximize the following likelihood:  L_1(U) = sum_i log P(u_i | u_{i-k}, ..., u_{i-1}; Θ)"
//
// Tasks:
//   toy-lm           the toy grammar's French sentences "<s> w_1 ... w_n </s>", drawn afresh for every
//                    batch (as the copy task), so the data follow the grammar's distribution exactly
//                    and its entropy is the floor of the validation loss (the translation corpus is
//                    deduplicated: its sentence frequencies are not the grammar's).
//   toy-translation  each toy pair as one sequence "<s> source <sep> target </s>", the loss on the
//                    target part (target and </s>) only; epochs over the toy corpus's training split.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"
#include "transformer/data/vocab.h"
#include "transformer/model/decoder_only.h"
#include "transformer/train/checkpoint.h"
#include "transformer/train/trainer.h"

namespace gradformer {

/// The defaults of a decoder-only task (toy-lm or toy-translation). ValueError for another task.
TrainOptions default_decoder_only_options(const std::string& task);

/// One sequence for the language model: tokens with <s> first and </s> last; the loss counts the
/// predictions of tokens[i] for i >= first_scored (1 for plain text: every token after <s>).
struct LmSequence {
  std::vector<int64_t> tokens;
  int64_t first_scored = 1;
};

/// inputs [B, L-1] and targets [B, L-1] int64; targets are <pad> where nothing is scored.
struct LmBatch {
  Tensor inputs, targets;
  int64_t ntokens = 0;  // scored targets
};

/// Pads sequences[indices] with <pad> into tokens [B, L] and makes the shift of causal language
/// modelling: inputs = tokens[:, :-1], targets = tokens[:, 1:] (position t predicts token t + 1).
LmBatch make_lm_batch(const std::vector<LmSequence>& sequences, const std::vector<int64_t>& indices);

/// The causal language-modelling loss: mean cross-entropy of the scored targets (label smoothing
/// optional), the model run under the causal mask AND the padding mask of the inputs.
Variable lm_loss(const DecoderOnly& model, const LmBatch& batch, double label_smoothing = 0);
/// Mean loss per scored token over the batches, without smoothing, in eval mode without a graph.
double lm_eval_loss(DecoderOnly& model, const std::vector<LmBatch>& batches);

/// "<s> source <sep> target </s>" with first_scored at the first target token.
LmSequence translation_sequence(const std::vector<int64_t>& source, const std::vector<int64_t>& target, int64_t sep);
/// Greedy translation with a decoder-only model: generate after "<s> source <sep>" until </s>.
std::vector<std::string> translate_as_lm(DecoderOnly& model, const std::vector<std::string>& source,
                                         const Vocab& vocab);

struct LoadedDecoderOnly {
  CheckpointInfo info;
  std::unique_ptr<DecoderOnly> model;
  StateDict optimizer_state;
};
/// A decoder-only checkpoint: CheckpointError (naming the path and both kinds) for another kind.
LoadedDecoderOnly load_decoder_only_checkpoint(const std::string& path);

/// What the toy-lm task's validation set says about the grammar: the mean of -log p(sentence) over
/// its sentences divided by their mean token count (</s> counted), in nats per token.
double toy_grammar_entropy_estimate(int64_t sentences, uint64_t seed);

}  // namespace gradformer
