// The encoder-only Transformer (BERT: Devlin et al., 2018): the encoder stack of the
// encoder-decoder alone, with heads for pre-training and for classification.
//
//   "BERT's model architecture is a multi-layer bidirectional Transformer encoder based on the
//    original implementation described in Vaswani et al. (2017)." (section 3)
//   "the BERT Transformer uses bidirectional self-attention, while the GPT Transformer uses
//    constrained self-attention where every token can only attend to context to its left." (section 3)
//
// So the one difference from the encoder of chapter 8 is what surrounds it: the same EncoderLayer
// with the padding mask only (no causal mask, no cross-attention), and a training objective.
//
//   ids [B, S] -> tok_embed * sqrt(d) (+ pos_embed or PE) (+ type_embed) (-> embed_norm) -> dropout
//              -> encoder (self-attention over every non-pad position) -> h [B, S, d]
//   h -> mlm_head -> logits [B, S, V]          (predict the original token at the chosen positions)
//   h[:, 0] -> pooler (tanh) -> classifier -> logits [B, C]
//
// The classifier reads the first position, <s>, as BERT reads [CLS]: "The first token of every
// sequence is always a special classification token ([CLS]). The final hidden state corresponding
// to this token is used as the aggregate sequence representation for classification tasks." (3)
// The alternative, the mean over the non-pad positions, needs no special position, but the first
// position costs nothing, lets attention decide what to gather (a learned weighting, not a fixed
// average) and keeps BERT's pooler, which BERT-base's 109.5M parameters count.
//
// Parameter names (the encoder-decoder's style; inside the layers PyTorch's):
//   tok_embed.weight [V, d]    pos_embed.weight [max_len, d] (learned positions only, N(0, 0.02))
//   type_embed.weight [types, d] (types > 0 only)    embed_norm.weight, .bias [d] (embed_norm only)
//   encoder.layers.{i}.* and, with pre-LN, encoder.norm.*   (exactly as in the encoder-decoder)
//   mlm_head.dense.weight [d, d] .bias [d]  mlm_head.norm.weight .bias [d]
//   mlm_head.weight [V, d] (untied only: tied, it is tok_embed.weight)  mlm_head.bias [V]
//   pooler.weight [d, d] .bias [d]    classifier.weight [C, d] .bias [C]
#pragma once

#include <cstdint>
#include <memory>

#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "transformer/model/config.h"
#include "transformer/model/encoder.h"
#include "transformer/model/positional_encoding.h"

namespace gradformer {

struct EncoderOnlyConfig {
  int64_t vocab = 0;
  int64_t d_model = 128, d_ff = 512, heads = 4, layers = 2;
  double dropout = 0.1;
  NormPlacement norm = NormPlacement::Post;
  int64_t max_len = 128;
  Positions positions = Positions::Sinusoidal;  // BERT's are learned, a [max_len, d] table
  Activation activation = Activation::GELU;     // "we use a gelu activation" (BERT, appendix A.2)
  int64_t types = 0;                            // BERT's segment (token type) embeddings, 2; 0 for none
  bool embed_norm = false;                      // BERT's LayerNorm over the embedding sum
  bool tie_embeddings = true;                   // the MLM output matrix is tok_embed.weight
  int64_t classes = 2;                          // C, the classifier's outputs
  DType dtype = DType::Float32;
  BlockOptions block = {};  // RMSNorm, grouped-query attention, biases, the rotary base (BERT's by default)

  /// BERT-base (section 3): "L=12, H=768, A=12", d_ff 4H, V 30522, 512 learned positions, 2 types,
  /// the embedding LayerNorm, post-LN, tied MLM output.
  static EncoderOnlyConfig bert_base();
  /// ValueError naming the field (as TransformerConfig::validate); DTypeError for a non-float dtype.
  void validate() const;
  LayerConfig layer() const {
    return {d_model, heads, d_ff, dropout, norm, dtype, activation, 1e-5, block, positions == Positions::Rotary,
            max_len};
  }
};

/// Parameter counts by part, from the formula (checked against a built model in the tests):
///   embeddings   V d + max_len d (learned positions) + types d + 2 d (embed_norm)
///   encoder      N (4 d^2 + 4 d  +  2 d d_ff + d_ff + d  +  2 * 2 d)  + 2 d (pre-LN's final norm)
///   pooler       d^2 + d
///   mlm_head     d^2 + d + 2 d + V (its bias) + V d (untied only)
///   classifier   C d + C
struct EncoderOnlyCount {
  int64_t embeddings = 0, encoder = 0, pooler = 0, mlm_head = 0, classifier = 0;
  /// What BERT's paper reports for BERT-base (110M; 109,482,240 exactly): the body and the pooler.
  int64_t body_and_pooler() const { return embeddings + encoder + pooler; }
  int64_t total() const { return body_and_pooler() + mlm_head + classifier; }
};
EncoderOnlyCount parameter_count(const EncoderOnlyConfig& config);

/// BERT's masked-LM output: "the final hidden vectors corresponding to the mask tokens are fed into
/// an output softmax over the vocabulary" (3.1), after BERT's transform dense -> GELU -> LayerNorm.
class MlmHead : public Module {
 public:
  /// Allocated only (EncoderOnly initialises it). ShapeError unless a tied weight is [vocab, d].
  MlmHead(int64_t d_model, int64_t vocab, DType dtype, Variable tied_weight = {});
  /// h [..., d] -> logits [..., V]:  norm(gelu(dense(h))) W^T + b
  Variable forward(const Variable& h) const;
  std::shared_ptr<Linear> dense;
  std::shared_ptr<LayerNorm> norm;
  Variable weight, bias;  // weight: registered untied, tok_embed.weight tied (then not registered here)
};

class EncoderOnly : public Module {
 public:
  /// Builds and initialises from `seed` (Generator(seed, 0)); dropout draws from Generator(seed, 1).
  EncoderOnly(const EncoderOnlyConfig& config, uint64_t seed);
  /// Allocated only, for loading a checkpoint (see nn/init.h).
  EncoderOnly(const EncoderOnlyConfig& config, uint64_t seed, SkipInit);
  /// Matrices Xavier-uniform (as the encoder-decoder), learned positions N(0, 0.02), biases 0,
  /// LayerNorms 1 and 0.
  void reset_parameters(Generator& init_gen);

  /// ids [B, S] int64, types [B, S] int64 or undefined (all 0) -> x [B, S, d], what the stack reads.
  /// ShapeError for ids that are not [B, S] int64 or longer than max_len.
  Variable embed(const Tensor& ids, const Tensor& types = {}) const;
  /// encoder(embed(ids, types), padding mask) -> h [B, S, d] (<pad> = 0 masked out of attention)
  Variable encode(const Tensor& ids, const Tensor& types = {}) const;
  /// h [B, S, d] -> [B, S, V]
  Variable mlm_logits(const Variable& h) const { return mlm_head->forward(h); }
  /// h [B, S, d] -> [B, C]:  classifier(dropout(tanh(pooler(h[:, 0]))))
  Variable class_logits(const Variable& h) const;

  const EncoderOnlyConfig& config() const { return config_; }
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

  std::shared_ptr<Embedding> tok_embed, type_embed;  // type_embed may be null
  std::shared_ptr<PositionalEncoding> pos_embed;     // learned: the parameter pos_embed.weight
  std::shared_ptr<LayerNorm> embed_norm;             // may be null
  std::shared_ptr<Dropout> embed_dropout;
  std::shared_ptr<Encoder> encoder;
  std::shared_ptr<MlmHead> mlm_head;
  std::shared_ptr<Linear> pooler, classifier;
  std::shared_ptr<Dropout> class_dropout;

 private:
  EncoderOnlyConfig config_;
  std::shared_ptr<Generator> dropout_gen_;
};

}  // namespace gradformer
