// Multi-head attention (Vaswani et al., 2017, section 3.2.2):
//
//   "Multi-head attention allows the model to jointly attend to information from different
//    representation subspaces at different positions."
//
//       MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O,
//       head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V),     d_k = d_v = d_model / h
//
// Layout and names are PyTorch's nn.MultiheadAttention, so a checkpoint loads into it unchanged:
//   in_proj_weight [3d, d]  = the rows of W^Q, W^K, W^V stacked (every head's columns side by side)
//   in_proj_bias   [3d]
//   out_proj.weight [d, d], out_proj.bias [d]   (W^O)
//
// This decade's attention (AttentionShape) changes three things, each a setting:
//   grouped-query attention: N key/value heads for H query heads (N divides H); W^K and W^V are
//     [N d_k, d], so in_proj_weight is [(H + 2N) d_k, d], and the cache holds N heads, not H.
//     Query head h reads key/value head h / (H / N) (multi-query attention: N = 1).
//   the head width d_k may be set apart from d / H (then W^O is [d, H d_k]);
//   the biases may be dropped: all, q/k/v only (Qwen2), or none (Llama);
// and, given rotary tables, each self-attention's queries and keys are turned by their positions
// (rotary.h) before the scores; cross-attention's are not (they are positions in two sequences).
//
// The work is split into three steps — project the query, project the keys and values, attend —
// so that incremental decoding can keep the projected keys and values of earlier positions
// (KVCache) instead of recomputing them for every new token.
#pragma once

#include <memory>
#include <utility>

#include "autograd/fused_attention.h"
#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "transformer/model/config.h"
#include "transformer/model/rotary.h"

namespace gradformer {

/// Keys and values already projected and split into heads: k, v [B, N, T, d_k] (N = H without
/// grouped-query attention). For decoder
/// self-attention it grows by one position per decoding step; for cross-attention it holds the
/// encoder memory's keys and values, computed once per sentence.
/// Room for a KVCache to grow into without copying what it holds (used when no gradient is being
/// recorded): k and v [B, H, capacity, d_k], of which the first `filled` positions are written and
/// the cache's k and v view the first length() of them. The capacity doubles when full, so appending
/// a token costs O(1) copying on average instead of O(T). A copy of a KVCache does not take its
/// spare room (the copy's first append makes its own), so appending to one copy never changes
/// what another sees.
struct KVCacheStorage {
  Tensor k, v;
  int64_t filled = 0;
  KVCacheStorage() = default;
  KVCacheStorage(const KVCacheStorage&) {}
  KVCacheStorage& operator=(const KVCacheStorage&) { return *this = KVCacheStorage(); }
  KVCacheStorage(KVCacheStorage&&) = default;
  KVCacheStorage& operator=(KVCacheStorage&&) = default;
};

struct KVCache {
  KVCache() = default;
  KVCache(Variable keys, Variable values) : k(std::move(keys)), v(std::move(values)) {}
  Variable k, v;
  KVCacheStorage storage;
  bool empty() const { return !k.defined(); }
  int64_t length() const { return k.defined() ? k.size(2) : 0; }
  /// Keeps the first `length` positions (0 <= length <= length(), else ValueError); the next
  /// appends write over the dropped ones in place, so a view of them taken earlier changes.
  void truncate(int64_t length);
};

/// The settings of grouped-query attention, the head width and the biases (see the top of the file);
/// zeros: as many key/value heads as heads, d_k = d / H.
struct AttentionShape {
  int64_t kv_heads = 0, head_dim = 0;
  Bias bias = Bias::All;
};

class MultiheadAttention : public Module {
 public:
  /// ValueError unless d_model and heads are positive and heads divides d_model, and 0 <= dropout_p < 1.
  /// Initialised as PyTorch's nn.MultiheadAttention (reset_parameters).
  MultiheadAttention(int64_t d_model, int64_t heads, double dropout_p, Generator& init_gen,
                     std::shared_ptr<Generator> dropout_gen, DType dtype = DType::Float32);
  /// The same, allocated but not initialised (see nn/init.h).
  MultiheadAttention(int64_t d_model, int64_t heads, double dropout_p, SkipInit, std::shared_ptr<Generator> dropout_gen,
                     DType dtype = DType::Float32, AttentionShape shape = {});
  /// PyTorch's scheme: in_proj_weight Xavier-uniform as one [3d, d] matrix, out_proj.weight a
  /// Linear's default U(-1/sqrt(d), 1/sqrt(d)), both biases 0.
  void reset_parameters(Generator& init_gen);

  /// query [B, Tq, d], key and value [B, Tk, d]; mask bool, true where allowed: [B, 1 or Tq, Tk]
  /// (a head dimension is inserted) or anything that broadcasts to [B, H, Tq, Tk].
  ///   -> output [B, Tq, d], weights [B, H, Tq, Tk]
  /// Self-attention (query, key and value the same variable) projects with one [B*Tq, d] x [d, 3d]
  /// product; cross-attention (key and value the same) with [B*Tq, d] x [d, d] and [B*Tk, d] x [d, 2d].
  Attention forward(const Variable& query, const Variable& key, const Variable& value, const Tensor& mask = {}) const;

  // ---- the steps, for incremental decoding ---------------------------------------------------------
  /// x [B, T, d] -> q [B, H, T, d_k]
  Variable project_query(const Variable& x) const;
  /// x [B, T, d] -> k, v [B, H, T, d_k]
  KVCache project_key_value(const Variable& x) const;
  /// x [B, T, d] -> q [B, H, T, d_k], k, v [B, N, T, d_k] (one matrix product); q and k turned by the
  /// positions start, ..., start + T - 1 when the attention has rotary tables
  std::pair<Variable, KVCache> project_query_key_value(const Variable& x, int64_t start = 0) const;
  /// q [B, H, Tq, d_k], keys and values [B, N, Tk, d_k] -> output [B, Tq, d] (heads merged, then W^O)
  Attention attend(const Variable& q, const KVCache& kv, const Tensor& mask = {}) const;
  /// Decoder self-attention for new positions x [B, Tn, d] (usually Tn = 1): their keys and values
  /// are appended to `cache`, and they attend to every cached position (all earlier ones and
  /// themselves: several new positions see each other causally; a mask [B, Tn, T_cached] if more is needed).
  Attention forward_step(const Variable& x, KVCache& cache, const Tensor& mask = {}) const;

  int64_t d_model() const { return d_model_; }
  int64_t heads() const { return heads_; }
  int64_t kv_heads() const { return kv_heads_; }
  int64_t head_dim() const { return head_dim_; }
  /// Turn self-attention's queries and keys by their positions from now on (tables shared by the layers).
  void use_rotary(std::shared_ptr<const RotaryTables> tables) { rotary_ = std::move(tables); }
  bool rotary() const { return rotary_ != nullptr; }

  /// LoRA updates (nn/lora.h) of rank `rank` beside the rows of W^Q, W^K, W^V (each its own adapter,
  /// "lora_q", "lora_k", "lora_v") for those of `q`, `k`, `v` that are true, added to what their rows
  /// of in_proj give; W^O's is out_proj's (Linear::add_lora). Drawn from `gen`, or only allocated when
  /// it is null.
  void add_lora(bool q, bool k, bool v, int64_t rank, double alpha, Generator* gen);

  Variable in_proj_weight, in_proj_bias;                // in_proj_bias undefined without q/k/v biases
  std::shared_ptr<LoraAdapter> lora_q, lora_k, lora_v;  // null without an update
  std::shared_ptr<Linear> out_proj;
  double dropout_p;

 private:
  Variable split_heads(const Variable& x, int64_t heads) const;  // [B, T, heads d_k] -> [B, heads, T, d_k]
  Variable project(const Variable& x, int64_t first_row, int64_t rows) const;  // rows of in_proj
  Attention grouped_query_attention(const Variable& q, const KVCache& kv, const Tensor& mask,
                                    const AttentionOptions& options) const;
  void check_input(const char* what, const Variable& x) const;
  int64_t d_model_, heads_, kv_heads_, head_dim_;
  std::shared_ptr<const RotaryTables> rotary_;
  std::shared_ptr<Generator> dropout_gen_;
};

}  // namespace gradformer
