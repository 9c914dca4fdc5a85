#include "autograd/index.h"

#include "autograd/node.h"
#include "tensor/index.h"

namespace gradformer {

// out = x[index] along dim  =>  dx[index[j]] += g[j]  (index_add_, which accumulates repeats)
Variable index_select(const Variable& x, int64_t dim, const Tensor& index) {
  return record("index_select", gradformer::index_select(x.value(), dim, index), {x}, Reads::None,
                [dim, index](const Tensor& g, Grads& dx) {
                  Tensor grad = zeros(dx.input_shape(0), g.dtype());
                  index_add_(grad, dim, index, g);
                  dx[0] = grad;
                });
}

// out[i][j] = x[i][index[i][j]]  =>  dx[i][index[i][j]] += g[i][j]  (scatter_add_)
Variable gather(const Variable& x, int64_t dim, const Tensor& index) {
  return record("gather", gradformer::gather(x.value(), dim, index), {x}, Reads::None,
                [dim, index](const Tensor& g, Grads& dx) {
                  Tensor grad = zeros(dx.input_shape(0), g.dtype());
                  scatter_add_(grad, dim, index, g);
                  dx[0] = grad;
                });
}

}  // namespace gradformer
