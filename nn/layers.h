// The basic layers: Linear, Embedding, LayerNorm and RMSNorm, Dropout, ReLU. Parameter names and layouts are
// PyTorch's (a Linear's weight is [out, in]), so checkpoints load into PyTorch unchanged.
//
// Initialisation: a constructor given a Generator draws PyTorch's default for that layer (its
// reset_parameters); given skip_init it only allocates, for a model that initialises all its
// parameters in one pass (EncoderDecoder) or is about to load a checkpoint.
#pragma once

#include <memory>

#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/lora.h"
#include "nn/module.h"
#include "tensor/random.h"

namespace gradformer {

/// y = x W^T + b (nn/functional.h's linear).   x: [..., in] -> y: [..., out];  weight: [out, in], bias: [out]
/// Initialised as PyTorch does: W and b ~ U(-1/sqrt(in), 1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, Generator& gen, bool bias = true, DType dtype = DType::Float32);
  Linear(int64_t in_features, int64_t out_features, SkipInit, bool bias = true, DType dtype = DType::Float32);
  /// x W^T + b, and the LoRA update when there is one.
  Variable forward(const Variable& x) const;
  /// Draws W and b again from U(-1/sqrt(in), 1/sqrt(in)).
  void reset_parameters(Generator& gen);
  /// A LoRA update of rank `rank` beside W (nn/lora.h), registered as "lora" (lora.A, lora.B); drawn
  /// from `gen`, or only allocated when it is null (a checkpoint's are loaded). ValueError if it has one.
  void add_lora(int64_t rank, double alpha, Generator* gen);
  Variable weight, bias;              // bias is undefined when constructed without one
  std::shared_ptr<LoraAdapter> lora;  // null without an update
};

/// A lookup table: row i of the weight is the vector of token i.
///   ids: [...] int64 -> out: [..., dim];  weight: [num_embeddings, dim] ~ N(0, 1), as in PyTorch
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, Generator& gen, DType dtype = DType::Float32);
  Embedding(int64_t num_embeddings, int64_t dim, SkipInit, DType dtype = DType::Float32);
  Variable forward(const Tensor& ids) const;  // IndexError for an id outside [0, num_embeddings)
  /// Draws the weight again from N(0, 1).
  void reset_parameters(Generator& gen);
  Variable weight;
};

/// What a Transformer layer normalises its sub-layers by: LayerNorm or RMSNorm, one interface.
class Norm : public Module {
 public:
  virtual Variable forward(const Variable& x) const = 0;
  /// The gain 1 again (and LayerNorm's bias 0): nothing random, the identity up to normalisation.
  virtual void reset_parameters() = 0;
  /// "LayerNorm", "RMSNorm": for traces and messages.
  virtual const char* kind() const = 0;
  Variable weight;    // the gain g [d], 1 at first
  double eps = 1e-5;  // added to the variance (LayerNorm) or the mean square (RMSNorm) under the root
};

/// y = (x - mean) / sqrt(var + eps) * weight + bias over the last dimension (Ba et al., 2016),
/// with the biased variance.   x: [..., d] -> y: [..., d];  weight = 1, bias = 0 at first
class LayerNorm : public Norm {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5, DType dtype = DType::Float32);
  Variable forward(const Variable& x) const override;
  void reset_parameters() override;
  const char* kind() const override { return "LayerNorm"; }
  Variable bias;
};

/// y = x / sqrt(mean(x^2) + eps) * weight over the last dimension (Zhang and Sennrich, 2019): no
/// mean subtracted, no bias.   x: [..., d] -> y: [..., d];  weight = 1 at first
class RMSNorm : public Norm {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6, DType dtype = DType::Float32);
  Variable forward(const Variable& x) const override;
  void reset_parameters() override;
  const char* kind() const override { return "RMSNorm"; }
};

/// Zeroes each element with probability p while training and scales the rest by 1/(1-p), so the
/// expected value is unchanged; the identity in eval mode. The generator is shared with the rest
/// of the model, so one seed (and one saved state) covers all its dropout.
class Dropout : public Module {
 public:
  Dropout(double p, std::shared_ptr<Generator> gen);  // ValueError unless 0 <= p < 1
  Variable forward(const Variable& x) const;
  double p;

 private:
  std::shared_ptr<Generator> gen_;
};

/// max(0, x), elementwise.
class ReLU : public Module {
 public:
  Variable forward(const Variable& x) const;
};

}  // namespace gradformer
