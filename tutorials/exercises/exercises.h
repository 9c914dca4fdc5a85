// The functions the exercises ask you to write. Your versions live in tutorials/exercises/NN_*.cpp
// (stubs to fill in); the reference solutions in tutorials/exercises/solutions/. Each checker
// (check_NN_*.cpp) is built twice: exercise_NN_* with the reference solution (the test suite's, to
// prove the checker works) and exercise_NN_*_yours with your file: see README.md in this folder.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autograd/all.h"
#include "nn/adam.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/mlm.h"
#include "transformer/evaluate/bleu.h"
#include "transformer/model/decoding.h"
#include "transformer/model/encoder_decoder.h"

namespace exercises {

/// What every stub throws until you write its body: the checker then says which file to fill in.
struct NotWrittenYet : std::logic_error {
  NotWrittenYet() : std::logic_error("this exercise's function is still the stub") {}
};

/// A checker's main: runs `checks` (which print what they find and return the number that failed)
/// and turns a stub's NotWrittenYet, or any other exception, into a message and exit status 1.
/// `file` is the exercise's file name (06_split_heads.cpp), `chapter` the chapter that asks for it.
inline int run_checks(const char* file, int chapter, int (*checks)()) {
  try {
    return checks() == 0 ? 0 : 1;
  } catch (const NotWrittenYet&) {
    std::printf(
        "tutorials/exercises/%s still throws NotWrittenYet, the stub's placeholder: write the function body "
        "(chapter %d, Try this)\n",
        file, chapter);
  } catch (const std::exception& e) {
    std::printf("tutorials/exercises/%s threw an exception the checks did not expect: %s\n", file, e.what());
  }
  return 1;
}

/// For the checkers: the largest |a - b| over two tensors of one shape (infinity if the shapes
/// differ or one is missing).
inline double max_difference(const gradformer::Tensor& a, const gradformer::Tensor& b) {
  using gradformer::DType;
  if (!a.defined() || !b.defined() || a.shape() != b.shape()) return INFINITY;
  const std::vector<double> x = a.to(DType::Float64).to_vector<double>(), y = b.to(DType::Float64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

/// Chapter 1: the row-major (contiguous) strides of a shape, in elements: {2, 3, 4} -> {12, 4, 1}.
gradformer::Shape row_major_strides(const gradformer::Shape& shape);
/// Chapter 1: where element `index` of `t` lives in its storage, in elements from the storage's
/// start (t.offset() plus the index dotted with the strides).
int64_t element_offset(const gradformer::Tensor& t, const std::vector<int64_t>& index);

/// Chapter 2: out = a^T, with a [rows, cols] and out [cols, rows] both row-major, walked in
/// tile x tile blocks so that the reads and the writes both stay in the cache.
void blocked_transpose(const float* a, float* out, int64_t rows, int64_t cols, int64_t tile);

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

/// Chapter 6: [B, T, d] -> [B, h, T, d_k] (d_k = d / h): head i is features [i d_k, (i + 1) d_k).
gradformer::Tensor split_heads(const gradformer::Tensor& x, int64_t heads);
/// Chapter 6: the inverse, [B, h, T, d_k] -> [B, T, h d_k].
gradformer::Tensor merge_heads(const gradformer::Tensor& x);

/// Chapter 7: the sinusoidal positional encoding, [max_len, d_model] float64:
/// PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
gradformer::Tensor positional_encoding(int64_t max_len, int64_t d_model);

/// Chapter 8: LayerNorm's backward. y = gamma * (x - mean) / sqrt(var + eps) + beta over the last
/// dimension (var: the mean of the squared deviations, divided by d). x: [rows, d], gamma: [d],
/// dy: dL/dy [rows, d], all float64 -> dL/dx [rows, d].
gradformer::Tensor layer_norm_backward(const gradformer::Tensor& x, const gradformer::Tensor& gamma,
                                       const gradformer::Tensor& dy, double eps);

/// Chapter 9: [T, T] bool, true where query i may see key j: j <= i.
gradformer::Tensor causal_mask(int64_t length);
/// Chapter 9: ids [B, S] int64 -> [B, 1, S] bool, true where the token is not `pad`.
gradformer::Tensor padding_mask(const gradformer::Tensor& ids, int64_t pad);

/// Chapter 10: the number of parameters of an encoder-decoder of this configuration (sinusoidal or
/// learned positions, post- or pre-LN, tied or separate embeddings).
int64_t parameter_count(const gradformer::TransformerConfig& config);

/// Chapter 11: the paper's learning rate at step `step` (counting from 1):
/// d_model^-0.5 * min(step^-0.5, step * warmup^-1.5).
double noam_rate(int64_t d_model, int64_t warmup, int64_t step);

/// Chapter 11: one Adam update of a parameter p with gradient g, its t-th (t = 1, 2, ...), in place:
/// m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2,
/// p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps). All four vectors one size.
void adam_step(std::vector<double>& p, const std::vector<double>& g, std::vector<double>& m, std::vector<double>& v,
               int64_t t, const gradformer::AdamOptions& options);

/// Chapter 13: one beam-search step. alive_log_probs [rows]: log P of each live prefix (-inf: a row
/// not alive); log_probs [rows, V] float64: log P(next token | prefix). -> the `count` best extensions
/// (row, token, alive_log_probs[row] + log_probs[row, token]), best first; none of log-probability
/// -inf; of equal ones, the smaller row * V + token first.
std::vector<gradformer::BeamCandidate> beam_step(const std::vector<double>& alive_log_probs,
                                                 const gradformer::Tensor& log_probs, int64_t count);

/// Chapter 14: corpus BLEU-4, one reference per sentence, no smoothing (every field of BleuScore:
/// clipped matches and totals of n-grams summed over the corpus, p_n, the lengths, BP and BLEU).
gradformer::BleuScore corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                                  const std::vector<std::vector<std::string>>& references);

/// Chapter 15: the batch of causal language modelling from sequences (each <s> ... </s>): pad them
/// with <pad> to the longest, L; inputs = tokens[:, :-1] [B, L-1], targets = tokens[:, 1:] [B, L-1]
/// with <pad> where a token is not scored (its flag in scored is false, or padding); ntokens the scored.
gradformer::LmBatch lm_batch(const std::vector<gradformer::LmSequence>& sequences);

/// Chapter 17: BERT's masked-LM corruption of ids [B, S] int64 (<s> words </s> <pad>...): each word
/// position (id >= 5) chosen with probability 0.15; a chosen one becomes <mask> (id 4) 80% of the
/// time, a word drawn uniformly from [5, vocab_size) 10%, and stays 10%. input: the corrupted ids,
/// labels: the original id at chosen positions, <pad> elsewhere (the counts may stay 0).
gradformer::MlmBatch mask_tokens(const gradformer::Tensor& ids, int64_t vocab_size, gradformer::Generator& gen);

/// Chapter 18: what an op costs, counted the profiler's way: the floating-point operations it does
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

/// Chapter 16: a distinct pre-token of a text as token ids, and how often it occurs in the text.
struct WordCount {
  std::vector<int64_t> ids;
  int64_t count = 0;
};
/// The pair a merge step joined, and its count.
struct ChosenPair {
  int64_t left = -1, right = -1;
  int64_t count = 0;
};
/// Chapter 16: one step of learning byte-pair merges. Count every pair of neighbouring ids inside
/// each word, weighted by the word's count (each place i, i + 1 once: "7 7 7" holds (7, 7) twice);
/// choose the most frequent pair, of equal counts the smaller (smaller left id, then smaller right
/// id); replace its occurrences in every word, left to right without overlap, by new_id ("7 7 7"
/// -> "new_id 7"). Returns the pair and its count; {-1, -1, 0}, the words unchanged, when no word
/// has two tokens left.
ChosenPair merge_step(std::vector<WordCount>& words, int64_t new_id);

/// Chapter 19: block i of a GPT-2 file (names h.{i}.ln_1.*, attn.c_attn.*, attn.c_proj.*, ln_2.*,
/// mlp.c_fc.*, mlp.c_proj.*; Conv1D weights [in, out]) as the twelve tensors of gradformer's
/// decoder-only model (decoder.layers.{i}.norm1.*, self_attn.in_proj_weight, self_attn.in_proj_bias,
/// self_attn.out_proj.*, norm2.*, linear1.*, linear2.*; Linear weights [out, in], contiguous).
gradformer::StateDict gpt2_block(const gradformer::StateDict& gpt2, int64_t i);

/// Chapter 20: rotary positions on one head. x: [T, d_k] float64 (d_k even), row t the query or key
/// at position start + t -> [T, d_k], each pair (x_i, x_{i+h}), h = d_k / 2, turned by the angle
/// (start + t) theta^(-2i / d_k).
gradformer::Tensor rotate_pairs(const gradformer::Tensor& x, double theta, int64_t start);

/// Chapter 21: LoRA's backward. x [N, in], A [r, in], B [out, r], G = dL/dh [N, out] for the
/// adapter's h = scale (x A^T) B^T, all float64 -> dL/dA [r, in], dL/dB [out, r] and the adapter's
/// part of dL/dx [N, in].
struct LoraGradients {
  gradformer::Tensor dA, dB, dx;
};
LoraGradients lora_backward(const gradformer::Tensor& x, const gradformer::Tensor& A, const gradformer::Tensor& B,
                            double scale, const gradformer::Tensor& G);

}  // namespace exercises
