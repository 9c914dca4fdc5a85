#include "transformer/model/multihead_attention.h"

#include <algorithm>

#include "autograd/all.h"
#include "nn/functional.h"
#include "tensor/all.h"

namespace gradformer {

MultiheadAttention::MultiheadAttention(int64_t d_model, int64_t heads, double dropout_p_, SkipInit,
                                       std::shared_ptr<Generator> dropout_gen, DType dtype)
    : dropout_p(dropout_p_), d_model_(d_model), heads_(heads), dropout_gen_(std::move(dropout_gen)) {
  if (d_model <= 0 || heads <= 0 || d_model % heads != 0)
    throw ValueError(message("MultiheadAttention: d_model must be a positive multiple of heads, got d_model ", d_model,
                             ", heads ", heads));
  if (!(dropout_p >= 0 && dropout_p < 1))
    throw ValueError(message("MultiheadAttention: dropout must be in [0, 1), got ", dropout_p));
  if (dropout_p > 0 && !dropout_gen_) throw ValueError("MultiheadAttention: dropout needs a generator");
  in_proj_weight = register_parameter("in_proj_weight", zeros({3 * d_model, d_model}, dtype));  // W^Q, W^K, W^V stacked
  in_proj_bias = register_parameter("in_proj_bias", zeros({3 * d_model}, dtype));
  out_proj = register_module("out_proj", std::make_shared<Linear>(d_model, d_model, skip_init, true, dtype));  // W^O
}

MultiheadAttention::MultiheadAttention(int64_t d_model, int64_t heads, double dropout_p_, Generator& init_gen,
                                       std::shared_ptr<Generator> dropout_gen, DType dtype)
    : MultiheadAttention(d_model, heads, dropout_p_, skip_init, std::move(dropout_gen), dtype) {
  reset_parameters(init_gen);
}

// As PyTorch: W^Q, W^K, W^V Xavier-uniform as one [3d, d] matrix (so fan_out is 3d, not d); W^O
// keeps a Linear's default; the biases start at 0.
void MultiheadAttention::reset_parameters(Generator& init_gen) {
  xavier_uniform_(in_proj_weight, init_gen);
  fill_(in_proj_bias, 0.0);
  linear_default_(out_proj->weight, d_model_, init_gen);
  fill_(out_proj->bias, 0.0);
}

void MultiheadAttention::check_input(const char* what, const Variable& x) const {
  if (x.dim() != 3 || x.size(2) != d_model_)
    throw ShapeError(message("MultiheadAttention: ", what, " must be [B, T, ", d_model_, "], got ", x.shape()));
}

// [B, T, d] -> [B, T, H, d_k] (a view) -> [B, H, T, d_k] (a transposed view: no copy)
Variable MultiheadAttention::split_heads(const Variable& x) const {
  return transpose(view(x, {x.size(0), x.size(1), heads_, d_model_ / heads_}), 1, 2);
}

// x W^T + b for rows [first, first + count) of the stacked in_proj: x [B, T, d] -> [B, T, count]
static Variable project_rows(const Variable& x, const Variable& weight, const Variable& bias, int64_t first,
                             int64_t count) {
  const bool all = first == 0 && count == weight.size(0);  // self-attention: no narrow, no zero-filled gradient
  const Variable w = all ? weight : narrow(weight, 0, first, count), b = all ? bias : narrow(bias, 0, first, count);
  return linear(x, w, b);
}

// Q = x W^Q + b^Q   x: [B, T, d] -> [B, H, T, d_k]
Variable MultiheadAttention::project_query(const Variable& x) const {
  check_input("query", x);
  return split_heads(project_rows(x, in_proj_weight, in_proj_bias, 0, d_model_));
}

// K = x W^K + b^K, V = x W^V + b^V in one product   x: [B, T, d] -> k, v [B, H, T, d_k]
KVCache MultiheadAttention::project_key_value(const Variable& x) const {
  check_input("key/value", x);
  const Variable kv = project_rows(x, in_proj_weight, in_proj_bias, d_model_, 2 * d_model_);  // [B, T, 2d]
  return {split_heads(narrow(kv, 2, 0, d_model_)), split_heads(narrow(kv, 2, d_model_, d_model_))};
}

// Q, K, V in one [B*T, d] x [d, 3d] product   x: [B, T, d] -> each [B, H, T, d_k]
std::pair<Variable, KVCache> MultiheadAttention::project_query_key_value(const Variable& x) const {
  check_input("input", x);
  const int64_t d = d_model_;
  const Variable qkv = project_rows(x, in_proj_weight, in_proj_bias, 0, 3 * d);  // [B, T, 3d]
  return {split_heads(narrow(qkv, 2, 0, d)),
          {split_heads(narrow(qkv, 2, d, d)), split_heads(narrow(qkv, 2, 2 * d, d))}};
}

// Concat(head_1, ..., head_h) W^O   q: [B, H, Tq, d_k], kv: [B, H, Tk, d_k] -> [B, Tq, d]
Attention MultiheadAttention::attend(const Variable& q, const KVCache& kv, const Tensor& mask) const {
  if (kv.empty()) throw ValueError("MultiheadAttention: attend needs keys and values (the cache is empty)");
  // A [B, Tq or 1, Tk] mask gets the head dimension: [B, 1, Tq or 1, Tk] broadcasts over heads.
  const Tensor m = mask.defined() && mask.dim() == 3 ? mask.unsqueeze(1) : mask;
  AttentionOptions options;
  if (is_training() && dropout_p > 0) options.dropout_p = dropout_p, options.dropout_gen = dropout_gen_.get();
  Attention heads = scaled_dot_product_attention(q, kv.k, kv.v, m, options);  // [B, H, Tq, d_k]
  // [B, H, Tq, d_k] -> [B, Tq, H, d_k] -> [B, Tq, d]: Concat(head_1, ..., head_h)
  const Variable merged = reshape(transpose(heads.output, 1, 2), {q.size(0), q.size(2), d_model_});
  return {out_proj->forward(merged), heads.weights};
}

Attention MultiheadAttention::forward(const Variable& query, const Variable& key, const Variable& value,
                                      const Tensor& mask) const {
  check_input("query", query);
  check_input("key", key);
  check_input("value", value);
  if (key.size(0) != query.size(0) || value.shape() != key.shape())
    throw ShapeError(message("MultiheadAttention: query ", query.shape(), ", key ", key.shape(), " and value ",
                             value.shape(), " need one batch size, and key and value one shape"));
  if (query.impl() == key.impl() && key.impl() == value.impl()) {  // self-attention
    auto [q, kv] = project_query_key_value(query);
    return attend(q, kv, mask);
  }
  if (key.impl() == value.impl()) return attend(project_query(query), project_key_value(key), mask);  // cross-attention
  const KVCache kv{split_heads(project_rows(key, in_proj_weight, in_proj_bias, d_model_, d_model_)),
                   split_heads(project_rows(value, in_proj_weight, in_proj_bias, 2 * d_model_, d_model_))};
  return attend(project_query(query), kv, mask);
}

void KVCache::truncate(int64_t length) {
  if (length < 0 || length > this->length())
    throw ValueError(message("KVCache::truncate: length ", length, " is not in [0, ", this->length(), "]"));
  if (length == this->length()) return;
  if (storage.k.defined() && storage.filled == this->length() && k.value().shares_storage_with(storage.k))
    storage.filled = length;  // the dropped positions are free to write over
  k = narrow(k, 2, 0, length), v = narrow(v, 2, 0, length);
}

// Whether cache.k and cache.v are the first cache.length() positions of the cache's own storage, all
// of them written (not truncated by someone else's narrow, not replaced by other tensors).
static bool views_own_storage(const KVCache& cache) {
  const KVCacheStorage& s = cache.storage;
  auto views = [&](const Tensor& x, const Tensor& room) {
    return x.shares_storage_with(room) && x.offset() == room.offset() && x.strides() == room.strides() &&
           x.size(0) == room.size(0);
  };
  return !cache.empty() && s.k.defined() && s.filled == cache.length() && views(cache.k.value(), s.k) &&
         views(cache.v.value(), s.v);
}

// cache.k, cache.v [B, H, T, d_k] <- themselves followed by fresh.k, fresh.v [B, H, Tn, d_k].
// Recording a gradient: a concatenation, which the gradient flows back through to every step's
// projection. Otherwise the new positions are copied into the cache's storage (KVCacheStorage),
// reallocated at twice the length when full: the same values, without copying all T every token.
static void append_to_cache(KVCache& cache, const KVCache& fresh) {
  if (grad_enabled()) {
    const bool first = cache.empty();
    cache.k = first ? fresh.k : concat({cache.k, fresh.k}, 2);
    cache.v = first ? fresh.v : concat({cache.v, fresh.v}, 2);
    return;
  }
  KVCacheStorage& s = cache.storage;
  const int64_t past = cache.length(), tn = fresh.k.size(2), length = past + tn;
  if (!views_own_storage(cache) || length > s.k.size(2)) {
    Shape shape = fresh.k.shape();
    shape[2] = std::max<int64_t>(2 * length, 16);
    Tensor k = Tensor::empty(shape, fresh.k.dtype()), v = Tensor::empty(shape, fresh.v.dtype());
    if (past > 0) k.narrow(2, 0, past).copy_(cache.k.value()), v.narrow(2, 0, past).copy_(cache.v.value());
    s.k = k, s.v = v;
  }
  s.k.narrow(2, past, tn).copy_(fresh.k.value());
  s.v.narrow(2, past, tn).copy_(fresh.v.value());
  s.filled = length;
  cache.k = Variable(s.k.narrow(2, 0, length));
  cache.v = Variable(s.v.narrow(2, 0, length));
}

Attention MultiheadAttention::forward_step(const Variable& x, KVCache& cache, const Tensor& mask) const {
  auto [q, kv] = project_query_key_value(x);
  if (!cache.empty() && (cache.k.size(0) != x.size(0)))
    throw ShapeError(message("MultiheadAttention: forward_step input ", x.shape(),
                             " does not match the cache's batch of ", cache.k.size(0)));
  append_to_cache(cache, kv);  // [B, H, T_cached + Tn, d_k]
  if (mask.defined() || x.size(1) == 1) return attend(q, cache, mask);
  // Several new positions at once: each sees the cached ones and the new ones up to itself.
  const int64_t tn = x.size(1), past = cache.length() - tn;
  const Tensor allowed =
      le(arange(0, static_cast<double>(cache.length()), 1.0, DType::Int64).unsqueeze(0),
         arange(static_cast<double>(past), static_cast<double>(past + tn), 1.0, DType::Int64).unsqueeze(1));
  return attend(q, cache, allowed);  // [Tn, T_cached]
}

}  // namespace gradformer
