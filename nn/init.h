// Parameter initialisation, drawn from an explicit seeded Generator so a run is reproducible.
#pragma once

#include "autograd/variable.h"
#include "tensor/random.h"

namespace gradformer {

/// Passed where a constructor takes its initialisation generator, to allocate the parameters
/// without drawing them (zeros; LayerNorm gains 1): for a module that a larger model initialises
/// as a whole, or that a checkpoint is about to overwrite. Each parameter is then drawn once, and
/// zeros cost nothing until written (fresh pages from the kernel; a loader replaces them unwritten).
///   Linear lin(512, 2048, skip_init);   // all zeros until lin.reset_parameters(gen) or a load
struct SkipInit {};
inline constexpr SkipInit skip_init{};

/// Glorot & Bengio (2010): U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)), which keeps the
/// variance of activations and of gradients about equal across a layer. For a weight [out, in, ...]
/// fan_in = in * receptive, fan_out = out * receptive. What the reference Transformer
/// implementations use for every matrix. ShapeError for fewer than 2 dimensions.
void xavier_uniform_(const Variable& weight, Generator& gen, double gain = 1.0);

/// PyTorch's default for a Linear's bias (and weight): U(-1/sqrt(fan_in), 1/sqrt(fan_in)), so each
/// output starts with a variance that does not grow with the number of inputs.
void linear_default_(const Variable& p, int64_t fan_in, Generator& gen);

/// U(lo, hi) in place.
void uniform_(const Variable& p, double lo, double hi, Generator& gen);
/// N(mean, std^2) in place.
void normal_(const Variable& p, double mean, double std, Generator& gen);
/// Every element `value` in place (no randomness: biases 0, LayerNorm gains 1).
void fill_(const Variable& p, double value);

}  // namespace gradformer
