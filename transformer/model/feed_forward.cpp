#include "transformer/model/feed_forward.h"

#include "autograd/all.h"

namespace gradformer {

// FFN(x) = max(0, x W_1 + b_1) W_2 + b_2          (relu, the paper)
// FFN(x) = GELU(x W_1 + b_1) W_2 + b_2,  GELU(u) = u Phi(u) = u (1 + erf(u / sqrt 2)) / 2   (GPT, BERT)
//   GPT-2's GELU: u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))) / 2
// FFN(x) = (silu(x W_1) * x W_3) W_2,  silu(u) = u sigmoid(u)   (SwiGLU: Shazeer, 2020; Llama)
Variable feed_forward(const Variable& x, const Linear& linear1, const Linear& linear2, const Dropout& dropout,
                      Activation activation, const Linear* linear3) {
  const Variable hidden = linear1.forward(x);  // [..., d_ff]
  if (activation == Activation::SwiGLU) {
    if (!linear3) throw ValueError("feed_forward: SwiGLU needs its third matrix (linear3, the up projection)");
    return linear2.forward(dropout.forward(silu(hidden) * linear3->forward(x)));
  }
  const Variable active = activation == Activation::GELU       ? gelu(hidden)
                          : activation == Activation::GELUTanh ? gelu_tanh(hidden)
                                                               : relu(hidden);
  return linear2.forward(dropout.forward(active));
}

}  // namespace gradformer
