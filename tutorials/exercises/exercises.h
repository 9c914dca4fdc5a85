// The functions the exercises ask you to write. Your versions live in tutorials/exercises/NN_*.cpp
// (stubs to fill in); the reference solutions in tutorials/exercises/solutions/. The checkers
// (check_NN_*.cpp) test whichever of the two the build uses: see README.md in this folder.
#pragma once

#include "autograd/all.h"

namespace exercises {

/// Chapter 3: a * b (elementwise, with broadcasting) whose backward you write.
gradformer::Variable mul(const gradformer::Variable& a, const gradformer::Variable& b);

/// Chapter 4: softmax's backward along the last dimension. P: the softmax's output [rows, C],
/// dP: dL/dP [rows, C] -> dL/dS [rows, C].
gradformer::Tensor softmax_backward(const gradformer::Tensor& P, const gradformer::Tensor& dP);

}  // namespace exercises
