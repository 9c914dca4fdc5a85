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

/// One token's row of dL/dlogits at one target position: cross-entropy's gradient with respect to the
/// logits is (P - q) / n, softmax's probabilities P minus the target distribution q, over the n tokens
/// the loss averages; `backward` is what the backward pass computed there.
struct LogitGradientRow {
  std::string token;
  int64_t id = 0;
  double p = 0, q = 0;
  double formula = 0;   // (P - q) / n
  double backward = 0;  // dL/dlogit from loss.backward()
};

struct LogitGradient {
  int64_t position = 0;                // the target position opened (tgt_in[position] -> tgt_out[position])
  int64_t tokens = 0;                  // n: the target tokens the loss averages over
  std::vector<LogitGradientRow> rows;  // the right word, then the most probable others
  double largest_difference = 0;       // max over the whole vocabulary of |backward - formula|
};

/// One weight's Adam update from fresh moments (training's first step) beside SGD's:
///   m = (1 - beta1) g, v = (1 - beta2) g^2, update = lr * m/(1 - beta1) / (sqrt(v/(1 - beta2)) + eps)
/// about lr * sign(g) whatever the size of g; SGD's is lr * g.
struct AdamStepAt {
  std::string parameter;  // "generator.weight[12, 3]": the weight of the largest |g|
  double g = 0, m = 0, v = 0;
  double adam_update = 0, sgd_update = 0;  // how much each step moves the weight (w_new - w)
  double lr = 0, beta1 = 0, beta2 = 0;
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
  LogitGradient logit_gradient;         // where the backward pass starts: dL/dlogits at one position
  std::vector<BackwardStage> backward;  // loss -> logits -> decoder layers (top first) -> ... -> source embedding
  std::vector<ParameterGradient> parameter_gradients;  // in the order the backward pass reaches them
  double gradient_norm = 0;                            // over every parameter: ||dL/dw||
  double lr = 0;                                       // the step: w <- w - lr * dL/dw
  double loss_after = 0, nll_after = 0;                // the same losses on the same pair after the step
  AdamStepAt adam;                                     // what training's optimizer would do to one weight
};

struct TrainTraceOptions {
  double label_smoothing = 0;  // the model's training's (the checkpoint's options.label_smoothing)
  double lr = 0.5;             // the gradient step's rate
  bool source_eos = true;      // the source ends in </s> (the checkpoint's data.source_eos)
  int64_t position = -1;       // the target position whose dL/dlogits to open; -1: the one of the largest loss
  int64_t top = 5;             // the logit gradient's rows: the right word and the top - 1 most probable others
};

/// Runs one training step on the pair (source, target; whitespace tokens) and records it: forward
/// in eval mode (dropout off, so every number is the model's own and the loss is the one `score`
/// gives), backward, and one plain gradient-descent step (SGD: w <- w - lr dL/dw, no momentum, no
/// clipping) applied to `model`'s parameters: the model is changed (reload it to undo). Before that
/// step, the library's Adam (fresh moments, lr and the paper's betas) is run on the weight of the
/// largest |dL/dw| alone and undone, to show its update beside SGD's. ValueError for an empty
/// sentence or bad options (a position outside the target, top < 1); DataError for a sentence longer
/// than the model takes.
TrainStepTrace trace_train_step(EncoderDecoder& model, const Vocab& source_vocab, const Vocab& target_vocab,
                                const std::vector<std::string>& source, const std::vector<std::string>& target,
                                const TrainTraceOptions& options = {});

/// The step as text, stage by stage (what `gradformer trace --train` prints).
std::string train_trace_text(const TrainStepTrace& trace);

/// The step as one HTML page, in the translation trace's style: tables and bars, no scripts.
std::string train_trace_html(const TrainStepTrace& trace);

}  // namespace gradformer
