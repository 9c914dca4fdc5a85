// A printable form a learner can read, modelled on PyTorch's:
//   tensor([[0.0000, 1.0000, 2.0000],
//           [3.0000, 4.0000, 5.0000]], shape=[2, 3], dtype=float32)
// Tensors of more than 1000 elements show their first and last three entries along each dimension.
#pragma once

#include <ostream>
#include <string>

#include "tensor/tensor.h"

namespace gradformer {

std::string to_string(const Tensor& t);
std::ostream& operator<<(std::ostream& out, const Tensor& t);

}  // namespace gradformer
