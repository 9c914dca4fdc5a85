// The functions the exercises ask you to write. Your versions live in tutorials/exercises/NN_*.cpp
// (stubs to fill in); the reference solutions in tutorials/exercises/solutions/. The checkers
// (check_NN_*.cpp) test whichever of the two the build uses: see README.md in this folder.
#pragma once

#include <string>
#include <vector>

#include "autograd/all.h"
#include "nn/adam.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/mlm.h"
#include "transformer/model/decoding.h"
#include "transformer/train/bleu.h"

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

/// Chapter 11: the paper's learning rate at step `step` (counting from 1):
/// d_model^-0.5 * min(step^-0.5, step * warmup^-1.5).
double noam_rate(int64_t d_model, int64_t warmup, int64_t step);

/// Chapter 11: one Adam update of a parameter p with gradient g, its t-th (t = 1, 2, ...), in place:
/// m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2,
/// p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps). All four vectors one size.
void adam_step(std::vector<double>& p, const std::vector<double>& g, std::vector<double>& m, std::vector<double>& v,
               int64_t t, const gradformer::AdamOptions& options);

/// Chapter 13: corpus BLEU-4, one reference per sentence, no smoothing (every field of BleuScore:
/// clipped matches and totals of n-grams summed over the corpus, p_n, the lengths, BP and BLEU).
gradformer::BleuScore corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                                  const std::vector<std::vector<std::string>>& references);

/// Chapter 14: the batch of causal language modelling from sequences (each <s> ... </s>): pad them
/// with <pad> to the longest, L; inputs = tokens[:, :-1] [B, L-1], targets = tokens[:, 1:] [B, L-1]
/// with <pad> where a token is not scored (position < first_scored, or padding); ntokens the scored.
gradformer::LmBatch lm_batch(const std::vector<gradformer::LmSequence>& sequences);

/// Chapter 15: BERT's masked-LM corruption of ids [B, S] int64 (<s> words </s> <pad>...): each word
/// position (id >= 5) chosen with probability 0.15; a chosen one becomes <mask> (id 4) 80% of the
/// time, a word drawn uniformly from [5, vocab_size) 10%, and stays 10%. input: the corrupted ids,
/// labels: the original id at chosen positions, <pad> elsewhere (the counts may stay 0).
gradformer::MlmBatch mask_tokens(const gradformer::Tensor& ids, int64_t vocab_size, gradformer::Generator& gen);

/// Chapter 16: what an op costs, counted the profiler's way: the floating-point operations it does
/// and the bytes of the tensors it reads and writes, each once. Its intensity is flops / bytes.
struct OpCost {
  int64_t flops = 0;
  int64_t bytes = 0;
};
/// C = A B with A [M, K], B [K, N] (C [M, N]), elements of `element_bytes` bytes.
OpCost matmul_cost(int64_t M, int64_t K, int64_t N, int64_t element_bytes);
/// The backward of that product: dA = G B^T and dB = A^T G from G = dL/dC [M, N], reading G, A and
/// B and writing dA and dB.
OpCost matmul_backward_cost(int64_t M, int64_t K, int64_t N, int64_t element_bytes);
/// c = a + b elementwise over n elements of `element_bytes` bytes each.
OpCost add_cost(int64_t n, int64_t element_bytes);

}  // namespace exercises
