#include "transformer/model/feed_forward.h"

#include "autograd/all.h"

namespace gradformer {

// FFN(x) = max(0, x W_1 + b_1) W_2 + b_2          (relu, the paper)
// FFN(x) = GELU(x W_1 + b_1) W_2 + b_2,  GELU(u) = u Phi(u) = u (1 + erf(u / sqrt 2)) / 2   (GPT, BERT)
//   GPT-2's GELU: u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))) / 2
Variable feed_forward(const Variable& x, const Linear& linear1, const Linear& linear2, const Dropout& dropout,
                      Activation activation) {
  const Variable hidden = linear1.forward(x);  // [..., d_ff]
  const Variable active = activation == Activation::GELU       ? gelu(hidden)
                          : activation == Activation::GELUTanh ? gelu_tanh(hidden)
                                                               : relu(hidden);
  return linear2.forward(dropout.forward(active));
}

FeedForward::FeedForward(int64_t d_model, int64_t d_ff, double dropout_p, SkipInit,
                         std::shared_ptr<Generator> dropout_gen, DType dtype, Activation activation_)
    : activation(activation_) {
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, d_ff, skip_init, true, dtype));
  linear2 = register_module("linear2", std::make_shared<Linear>(d_ff, d_model, skip_init, true, dtype));
  dropout = register_module("dropout", std::make_shared<Dropout>(dropout_p, std::move(dropout_gen)));
}

FeedForward::FeedForward(int64_t d_model, int64_t d_ff, double dropout_p, Generator& init_gen,
                         std::shared_ptr<Generator> dropout_gen, DType dtype, Activation activation_)
    : FeedForward(d_model, d_ff, dropout_p, skip_init, std::move(dropout_gen), dtype, activation_) {
  reset_parameters(init_gen);
}

void FeedForward::reset_parameters(Generator& init_gen) {
  linear1->reset_parameters(init_gen);
  linear2->reset_parameters(init_gen);
}

}  // namespace gradformer
