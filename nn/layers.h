// The basic layers: Linear, Embedding, LayerNorm, Dropout, ReLU. Parameter names and layouts are
// PyTorch's (a Linear's weight is [out, in]), so checkpoints load into PyTorch unchanged.
//
// Initialisation: a constructor given a Generator draws PyTorch's default for that layer (its
// reset_parameters); given skip_init it only allocates, for a model that initialises all its
// parameters in one pass (EncoderDecoder) or is about to load a checkpoint.
#pragma once

#include <memory>

#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/module.h"
#include "tensor/random.h"

namespace gradformer {

/// y = x W^T + b (nn/functional.h's linear).   x: [..., in] -> y: [..., out];  weight: [out, in], bias: [out]
/// Initialised as PyTorch does: W and b ~ U(-1/sqrt(in), 1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, Generator& gen, bool bias = true, DType dtype = DType::Float32);
  Linear(int64_t in_features, int64_t out_features, SkipInit, bool bias = true, DType dtype = DType::Float32);
  Variable forward(const Variable& x) const;
  /// Draws W and b again from U(-1/sqrt(in), 1/sqrt(in)).
  void reset_parameters(Generator& gen);
  Variable weight, bias;  // bias is undefined when constructed without one
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

/// y = (x - mean) / sqrt(var + eps) * weight + bias over the last dimension (Ba et al., 2016),
/// with the biased variance.   x: [..., d] -> y: [..., d];  weight = 1, bias = 0 at first
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5, DType dtype = DType::Float32);
  Variable forward(const Variable& x) const;
  /// weight = 1, bias = 0 again (nothing random: the identity, up to normalisation).
  void reset_parameters();
  Variable weight, bias;
  double eps;
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
