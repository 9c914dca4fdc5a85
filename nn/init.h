// Parameter initialisation, drawn from an explicit seeded Generator so a run is reproducible.
#pragma once

#include "autograd/variable.h"
#include "tensor/random.h"

namespace gradformer {

/// Glorot & Bengio (2010): U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)), which keeps the
/// variance of activations and of gradients about equal across a layer. For a weight [out, in, ...]
/// fan_in = in * receptive, fan_out = out * receptive. What the reference Transformer
/// implementations use for every matrix. ShapeError for fewer than 2 dimensions.
void xavier_uniform_(const Variable& weight, Generator& gen, double gain = 1.0);

}  // namespace gradformer
