// Each architecture's training forward pass, and the batch as the training step sees it: pieces,
// each a forward pass to the mean loss of its scored tokens (trainer.h, train_step).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "autograd/fused.h"
#include "autograd/variable.h"
#include "transformer/data/batch.h"
#include "transformer/data/lm_batch.h"
#include "transformer/evaluate/evaluate.h"  // teacher_forced_logits, lm_loss
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"

namespace gradformer {

/// One padded rectangle of a batch: its forward pass, and the tokens its loss counts.
struct Piece {
  std::function<Variable()> loss;  // the mean loss per scored token (label smoothing as the task was asked)
  int64_t scored = 0;              // tokens scored (for a classifier: sentences)
};

/// One optimisation step's data: one piece, or several length-sorted ones whose gradients add up
/// to the whole batch's (trainer.h, train_step).
struct TrainBatch {
  std::vector<Piece> pieces;
  int64_t slots = 0, real = 0;  // the token slots computed, and how many of them held real tokens
};

/// An encoder-decoder batch, padded as `pieces`, for train_step: each piece's loss the
/// cross-entropy of its target tokens (padding ignored, label smoothing as `loss` says, section
/// 5.4), its token slots counted on both sides.
TrainBatch translation_batch(const EncoderDecoder& model, const std::vector<Batch>& pieces,
                             const CrossEntropyOptions& loss);
}  // namespace gradformer
