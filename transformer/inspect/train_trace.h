// One training step of an encoder-decoder, stage by stage, as trace.h walks one translation: the
// pair (source tokens; the decoder's input and the target it must predict, side by side: teacher
// forcing), each target position's probability of the right word and its loss, the mean loss the
// step minimises (label-smoothed if the model was trained so), then the backward pass from that
// loss down to the embeddings (the gradient's norm at every sub-layer's output: the decoder's layers
// top to bottom, then the encoder's, reached through cross-attention), the parameters' gradient
// norms per layer, and what one step of gradient descent does to the loss on the same pair. What
// `gradformer trace --train` prints, and draws as one HTML page.
//
// The forward pass is spelled out from the layers' own modules (as trace.cpp does for the encoder),
// every sub-layer's output a Variable that keeps its gradient (retain_grad); a test checks that its
// loss is, bit for bit, the training loss of the model's own forward pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transformer/data/vocab.h"
#include "transformer/model/encoder_decoder.h"

namespace gradformer {

/// One target position under teacher forcing: the decoder read `input` (and everything before it)
/// and had to predict `target`.
struct PositionLoss {
  std::string input, target;
  double probability = 0;        // P(target | source, inputs so far)
  double loss = 0;               // -log probability
  double smoothed_loss = 0;      // -sum_c q_c log P(c), q = (1 - eps) onehot(target) + eps / V
  double probability_after = 0;  // the same probability after the gradient step
};

/// The gradient of the loss with respect to one activation: its norm, ||dL/dx||.
struct GradientAt {
  std::string name;  // "feed-forward", "add & norm (norm3)", ...
  Shape shape;
  double norm = 0;
};

/// The activations of one part of the model (a layer, the embeddings), in backward order: the
/// gradient reaches the first one first.
struct BackwardStage {
  std::string name;  // "decoder layer 1", "target embedding", ...
  std::vector<GradientAt> gradients;
};

/// The gradient's norm over one group of parameters (one layer, an embedding, the output layer).
struct ParameterGradient {
  std::string name;  // "decoder.layers.1", "src_embed", "generator", ...
  int64_t parameters = 0;
  double norm = 0;
};

struct TrainStepTrace {
  TransformerConfig config;
  std::vector<std::string> source_tokens;  // as typed, then </s> when source_eos
  std::vector<int64_t> source_ids;
  std::vector<bool> unknown;            // per source word (the </s> left out): it became <unk>
  std::vector<bool> unknown_target;     // per target word
  std::vector<PositionLoss> positions;  // tgt_in[i] -> tgt_out[i]
  double label_smoothing = 0;
  double loss = 0;                      // the mean loss per target token that the step minimises (smoothed if eps > 0)
  double nll = 0;                       // the mean of -log P(target): the loss without smoothing
  std::vector<BackwardStage> backward;  // loss -> logits -> decoder layers (top first) -> ... -> source embedding
  std::vector<ParameterGradient> parameter_gradients;  // in the order the backward pass reaches them
  double gradient_norm = 0;                            // over every parameter: ||dL/dw||
  double lr = 0;                                       // the step: w <- w - lr * dL/dw
  double loss_after = 0, nll_after = 0;                // the same losses on the same pair after the step
};

struct TrainTraceOptions {
  double label_smoothing = 0;  // the model's training's (the checkpoint's options.label_smoothing)
  double lr = 0.5;             // the gradient step's rate
  bool source_eos = true;      // the source ends in </s> (the checkpoint's data.source_eos)
};

/// Runs one training step on the pair (source, target; whitespace tokens) and records it: forward
/// in eval mode (dropout off, so every number is the model's own and the loss is the one `score`
/// gives), backward, and one plain gradient-descent step (SGD: w <- w - lr dL/dw, no momentum, no
/// clipping) applied to `model`'s parameters: the model is changed (reload it to undo). ValueError
/// for an empty sentence or bad options; DataError for a sentence longer than the model takes.
TrainStepTrace trace_train_step(EncoderDecoder& model, const Vocab& source_vocab, const Vocab& target_vocab,
                                const std::vector<std::string>& source, const std::vector<std::string>& target,
                                const TrainTraceOptions& options = {});

/// The step as text, stage by stage (what `gradformer trace --train` prints).
std::string train_trace_text(const TrainStepTrace& trace);

/// The step as one HTML page, in the translation trace's style: tables and bars, no scripts.
std::string train_trace_html(const TrainStepTrace& trace);

}  // namespace gradformer
