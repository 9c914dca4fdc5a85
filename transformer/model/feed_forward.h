// Position-wise feed-forward network (Vaswani et al., 2017, section 3.3):
//
//   "In addition to attention sub-layers, each of the layers in our encoder and decoder contains a
//    fully connected feed-forward network, which is applied to each position separately and
//    identically. This consists of two linear transformations with a ReLU activation in between."
//
//       FFN(x) = max(0, x W_1 + b_1) W_2 + b_2        d_model -> d_ff -> d_model
//
// PyTorch registers the two Linears on the encoder/decoder layer itself (encoder.layers.0.linear1),
// not on a sub-module, so the layers own linear1, linear2 and the inner dropout and call
// feed_forward() below; FeedForward is the same thing as a stand-alone module.
#pragma once

#include <memory>

#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "transformer/model/config.h"

namespace gradformer {

/// linear2(dropout(act(linear1(x)))), act relu (the paper) or gelu (GPT, BERT)   x: [..., d_model] -> [..., d_ff] ->
/// [..., d_model] (dropout on the hidden activations, as PyTorch's TransformerEncoderLayer and the Annotated
/// Transformer do.)
Variable feed_forward(const Variable& x, const Linear& linear1, const Linear& linear2, const Dropout& dropout,
                      Activation activation = Activation::ReLU);

/// The feed-forward network as a module with parameters linear1.* and linear2.*.
class FeedForward : public Module {
 public:
  /// Initialised as PyTorch's Linears (reset_parameters).
  FeedForward(int64_t d_model, int64_t d_ff, double dropout_p, Generator& init_gen,
              std::shared_ptr<Generator> dropout_gen, DType dtype = DType::Float32,
              Activation activation = Activation::ReLU);
  /// The same, allocated but not initialised (see nn/init.h).
  FeedForward(int64_t d_model, int64_t d_ff, double dropout_p, SkipInit, std::shared_ptr<Generator> dropout_gen,
              DType dtype = DType::Float32, Activation activation = Activation::ReLU);
  void reset_parameters(Generator& init_gen);
  Variable forward(const Variable& x) const {
    return feed_forward(x, *linear1, *linear2, *dropout, activation);
  }  // [..., d] -> [..., d]
  std::shared_ptr<Linear> linear1, linear2;
  std::shared_ptr<Dropout> dropout;
  Activation activation;
};

}  // namespace gradformer
