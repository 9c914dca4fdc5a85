#include "transformer/model/feed_forward.h"

namespace gradformer {

// FFN(x) = max(0, x W_1 + b_1) W_2 + b_2
Variable feed_forward(const Variable& x, const Linear& linear1, const Linear& linear2, const Dropout& dropout) {
  return linear2.forward(dropout.forward(relu(linear1.forward(x))));
}

FeedForward::FeedForward(int64_t d_model, int64_t d_ff, double dropout_p, Generator& init_gen,
                         std::shared_ptr<Generator> dropout_gen, DType dtype) {
  linear1 = register_module("linear1", std::make_shared<Linear>(d_model, d_ff, init_gen, true, dtype));
  linear2 = register_module("linear2", std::make_shared<Linear>(d_ff, d_model, init_gen, true, dtype));
  dropout = register_module("dropout", std::make_shared<Dropout>(dropout_p, std::move(dropout_gen)));
}

}  // namespace gradformer
