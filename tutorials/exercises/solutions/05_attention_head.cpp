// The reference solution of tutorials/exercises/05_attention_head.cpp (chapter 5's attention_by_hand).
#include <cmath>

#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor attention_head(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed) {
  const double d_k = static_cast<double>(q.size(-1));
  Variable scores = matmul(Variable(q), transpose(Variable(k), -2, -1)) / std::sqrt(d_k);  // [Tq, Tk]
  if (allowed.defined()) scores = masked_fill(scores, logical_not(allowed), -1e30);
  return matmul(softmax(scores, -1), Variable(v)).value();  // [Tq, d_v]
}

}  // namespace exercises
