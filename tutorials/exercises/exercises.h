// The functions the exercises ask you to write. Your versions live in tutorials/exercises/NN_*.cpp
// (stubs to fill in); the reference solutions in tutorials/exercises/solutions/. The checkers
// (check_NN_*.cpp) test whichever of the two the build uses: see README.md in this folder.
#pragma once

#include "autograd/all.h"
#include "transformer/model/decoding.h"

namespace exercises {

/// Chapter 3: a * b (elementwise, with broadcasting) whose backward you write.
gradformer::Variable mul(const gradformer::Variable& a, const gradformer::Variable& b);

/// Chapter 4: softmax's backward along the last dimension. P: the softmax's output [rows, C],
/// dP: dL/dP [rows, C] -> dL/dS [rows, C].
gradformer::Tensor softmax_backward(const gradformer::Tensor& P, const gradformer::Tensor& dP);

/// Chapter 5: one attention head, softmax(q k^T / sqrt(d_k)) v. q: [Tq, d_k], k: [Tk, d_k],
/// v: [Tk, d_v], allowed: [Tq, Tk] bool (true where query i may attend to key j) or undefined (no
/// mask) -> [Tq, d_v]. Every row of the checker's masks allows at least one key.
gradformer::Tensor attention_head(const gradformer::Tensor& q, const gradformer::Tensor& k, const gradformer::Tensor& v,
                                  const gradformer::Tensor& allowed);

/// Chapter 7: the sinusoidal positional encoding, [max_len, d_model] float64:
/// PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
gradformer::Tensor positional_encoding(int64_t max_len, int64_t d_model);

/// Chapter 12: one beam-search step. alive_log_probs [rows]: log P of each live prefix (-inf: a row
/// not alive); log_probs [rows, V] float64: log P(next token | prefix). -> the `count` best extensions
/// (row, token, alive_log_probs[row] + log_probs[row, token]), best first; none of log-probability
/// -inf; of equal ones, the smaller row * V + token first.
std::vector<gradformer::BeamCandidate> beam_step(const std::vector<double>& alive_log_probs,
                                                 const gradformer::Tensor& log_probs, int64_t count);

}  // namespace exercises
