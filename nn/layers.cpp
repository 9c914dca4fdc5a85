#include "nn/layers.h"

#include <cmath>

#include "autograd/all.h"
#include "nn/init.h"

namespace gradformer {

Linear::Linear(int64_t in_features, int64_t out_features, Generator& gen, bool with_bias, DType dtype) {
  if (in_features <= 0 || out_features <= 0)
    throw ValueError(message("Linear: sizes must be positive, got in ", in_features, ", out ", out_features));
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  weight = register_parameter("weight", uniform({out_features, in_features}, -bound, bound, gen, dtype));
  if (with_bias) bias = register_parameter("bias", uniform({out_features}, -bound, bound, gen, dtype));
}

Variable Linear::forward(const Variable& x) const {
  const int64_t in = weight.size(1);
  if (x.dim() < 1 || x.size(-1) != in)
    throw ShapeError(message("Linear: input has shape ", x.shape(), ", its last dimension should be ", in));
  // Fold the leading dimensions into one, so the product is one large matrix multiply
  // [N, in] x [in, out] rather than many small ones.
  Shape out_shape = x.shape();
  out_shape[out_shape.rank() - 1] = weight.size(0);
  Variable y = matmul(reshape(x, {-1, in}), transpose(weight, 0, 1));  // [N, out]
  if (bias.defined()) y = y + bias;
  return reshape(y, out_shape);
}

Embedding::Embedding(int64_t num_embeddings, int64_t dim, Generator& gen, DType dtype) {
  if (num_embeddings <= 0 || dim <= 0)
    throw ValueError(message("Embedding: sizes must be positive, got ", num_embeddings, " x ", dim));
  weight = register_parameter("weight", randn({num_embeddings, dim}, gen, dtype));
}

Variable Embedding::forward(const Tensor& ids) const { return embedding(weight, ids); }

LayerNorm::LayerNorm(int64_t dim, double eps_, DType dtype) : eps(eps_) {
  if (dim <= 0) throw ValueError(message("LayerNorm: size must be positive, got ", dim));
  weight = register_parameter("weight", ones({dim}, dtype));
  bias = register_parameter("bias", zeros({dim}, dtype));
}

Variable LayerNorm::forward(const Variable& x) const { return layer_norm(x, weight, bias, eps); }

Dropout::Dropout(double p_, std::shared_ptr<Generator> gen) : p(p_), gen_(std::move(gen)) {
  if (!(p >= 0 && p < 1)) throw ValueError(message("Dropout: p must be in [0, 1), got ", p));
  if (!gen_) throw ValueError("Dropout: needs a generator");
}

Variable Dropout::forward(const Variable& x) const {
  if (!is_training() || p == 0) return x;
  return dropout(x, p, *gen_, true);
}

Variable ReLU::forward(const Variable& x) const { return relu(x); }

}  // namespace gradformer
