// Gradient clipping by global norm (Pascanu et al., 2013), as torch.nn.utils.clip_grad_norm_:
// one rare huge gradient should not throw the parameters far from where training had brought them.
#pragma once

#include <vector>

#include "autograd/variable.h"

namespace gradformer {

///   norm = sqrt(sum over every parameter with a gradient of sum(grad^2))
///   if norm > max_norm: every gradient *= max_norm / (norm + 1e-6)
/// Returns the norm before clipping (to log it). The sum is taken in double whatever the dtype.
/// ValueError if max_norm is not positive and finite, or if the norm is not finite (a NaN or inf
/// gradient: scaling would spread it everywhere; the message names the first such parameter).
double clip_grad_norm(const std::vector<Variable>& params, double max_norm);

}  // namespace gradformer
