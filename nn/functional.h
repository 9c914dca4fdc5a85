// Layers as plain functions of their inputs and parameters (PyTorch's torch.nn.functional): the
// modules in nn/layers.h hold the parameters, these do the arithmetic, so code that keeps its
// parameters elsewhere (a slice of a stacked matrix, a weight shared with an embedding) computes
// exactly what the module would.
#pragma once

#include "autograd/variable.h"

namespace gradformer {

/// y = x W^T + b.   x: [..., in], weight: [out, in] (PyTorch's layout), bias: [out] or undefined
///   -> y: [..., out]
/// The leading dimensions are folded into one, so the product is a single [rows, in] x [in, out]
/// matrix multiply rather than many small ones. ShapeError naming `linear` and the shapes unless
/// weight is 2-D, x's last dimension is `in`, and bias (if defined) is [out].
Variable linear(const Variable& x, const Variable& weight, const Variable& bias = {});

}  // namespace gradformer
