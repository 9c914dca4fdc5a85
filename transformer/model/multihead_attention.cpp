#include "transformer/model/multihead_attention.h"

#include <algorithm>

#include "autograd/all.h"
#include "nn/functional.h"
#include "tensor/all.h"

namespace gradformer {

MultiheadAttention::MultiheadAttention(int64_t d_model, int64_t heads, double dropout_p_, SkipInit,
                                       std::shared_ptr<Generator> dropout_gen, DType dtype, AttentionShape shape)
    : dropout_p(dropout_p_), d_model_(d_model), heads_(heads), dropout_gen_(std::move(dropout_gen)) {
  if (d_model <= 0 || heads <= 0 || (shape.head_dim == 0 && d_model % heads != 0))
    throw ValueError(message("MultiheadAttention: d_model must be a positive multiple of heads, got d_model ", d_model,
                             ", heads ", heads));
  if (shape.kv_heads < 0 || (shape.kv_heads > 0 && heads % shape.kv_heads != 0) || shape.head_dim < 0)
    throw ValueError(message("MultiheadAttention: kv_heads ", shape.kv_heads, " must divide heads ", heads,
                             ", and head_dim ", shape.head_dim, " must not be negative"));
  if (!(dropout_p >= 0 && dropout_p < 1))
    throw ValueError(message("MultiheadAttention: dropout must be in [0, 1), got ", dropout_p));
  if (dropout_p > 0 && !dropout_gen_) throw ValueError("MultiheadAttention: dropout needs a generator");
  kv_heads_ = shape.kv_heads > 0 ? shape.kv_heads : heads;
  head_dim_ = shape.head_dim > 0 ? shape.head_dim : d_model / heads;
  const int64_t rows = (heads + 2 * kv_heads_) * head_dim_;  // W^Q [H d_k, d], W^K and W^V [N d_k, d]
  in_proj_weight = register_parameter("in_proj_weight", zeros({rows, d_model}, dtype));  // stacked
  if (shape.bias != Bias::None) in_proj_bias = register_parameter("in_proj_bias", zeros({rows}, dtype));
  const bool out_bias = shape.bias == Bias::All || shape.bias == Bias::Attention;
  out_proj = register_module("out_proj", std::make_shared<Linear>(heads * head_dim_, d_model, skip_init, out_bias,
                                                                  dtype));  // W^O
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
  if (in_proj_bias.defined()) fill_(in_proj_bias, 0.0);
  linear_default_(out_proj->weight, out_proj->weight.size(1), init_gen);
  if (out_proj->bias.defined()) fill_(out_proj->bias, 0.0);
  for (LoraAdapter* adapter : {lora_q.get(), lora_k.get(), lora_v.get(), out_proj->lora.get()})
    if (adapter) adapter->reset_parameters(init_gen);
}

void MultiheadAttention::check_input(const char* what, const Variable& x) const {
  if (x.dim() != 3 || x.size(2) != d_model_)
    throw ShapeError(message("MultiheadAttention: ", what, " must be [B, T, ", d_model_, "], got ", x.shape()));
}

// [B, T, heads d_k] -> [B, T, heads, d_k] (a view) -> [B, heads, T, d_k] (a transposed view: no copy)
Variable MultiheadAttention::split_heads(const Variable& x, int64_t heads) const {
  return transpose(view(x, {x.size(0), x.size(1), heads, head_dim_}), 1, 2);
}

// x W^T + b for rows [first, first + count) of the stacked in_proj: x [B, T, d] -> [B, T, count];
// with LoRA updates, each block of rows (q, k, v) gets its adapter's (alpha / r) x A^T B^T, or zeros.
Variable MultiheadAttention::project(const Variable& x, int64_t first, int64_t count) const {
  const bool all = first == 0 && count == in_proj_weight.size(0);  // self-attention: no narrow, no zero-filled gradient
  const Variable w = all ? in_proj_weight : narrow(in_proj_weight, 0, first, count);
  const Variable b = !in_proj_bias.defined() ? Variable() : all ? in_proj_bias : narrow(in_proj_bias, 0, first, count);
  const Variable y = linear(x, w, b);
  if (!lora_q && !lora_k && !lora_v) return y;
  const int64_t q_rows = heads_ * head_dim_, kv_rows = kv_heads_ * head_dim_;
  const std::tuple<int64_t, int64_t, const LoraAdapter*> blocks[] = {
      {0, q_rows, lora_q.get()}, {q_rows, kv_rows, lora_k.get()}, {q_rows + kv_rows, kv_rows, lora_v.get()}};
  std::vector<Variable> updates;  // [B, T, rows] each, for the blocks in [first, first + count)
  for (const auto& [start, rows, adapter] : blocks) {
    if (start < first || start + rows > first + count) continue;
    updates.push_back(adapter ? adapter->forward(x) : Variable(zeros({x.size(0), x.size(1), rows}, x.value().dtype())));
  }
  return y + concat(updates, -1);
}

void MultiheadAttention::add_lora(bool q, bool k, bool v, int64_t rank, double alpha, Generator* gen) {
  if ((q && lora_q) || (k && lora_k) || (v && lora_v))
    throw ValueError("MultiheadAttention: a projection asked for has a LoRA update already");
  const int64_t q_rows = heads_ * head_dim_, kv_rows = kv_heads_ * head_dim_;
  const DType dtype = in_proj_weight.value().dtype();
  auto adapter = [&](const char* name, int64_t rows) {
    return register_module(name, gen ? std::make_shared<LoraAdapter>(d_model_, rows, rank, alpha, *gen, dtype)
                                     : std::make_shared<LoraAdapter>(d_model_, rows, rank, alpha, skip_init, dtype));
  };
  if (q) lora_q = adapter("lora_q", q_rows);
  if (k) lora_k = adapter("lora_k", kv_rows);
  if (v) lora_v = adapter("lora_v", kv_rows);
}

// Q = x W^Q + b^Q   x: [B, T, d] -> [B, H, T, d_k]
Variable MultiheadAttention::project_query(const Variable& x) const {
  check_input("query", x);
  return split_heads(project(x, 0, heads_ * head_dim_), heads_);
}

// K = x W^K + b^K, V = x W^V + b^V in one product   x: [B, T, d] -> k, v [B, N, T, d_k]
KVCache MultiheadAttention::project_key_value(const Variable& x) const {
  check_input("key/value", x);
  const int64_t width = kv_heads_ * head_dim_;
  const Variable kv = project(x, heads_ * head_dim_, 2 * width);  // [B, T, 2 N d_k]
  return {split_heads(narrow(kv, 2, 0, width), kv_heads_), split_heads(narrow(kv, 2, width, width), kv_heads_)};
}

// Q, K, V in one [B*T, d] x [d, (H + 2N) d_k] product   x: [B, T, d] -> q [B, H, T, d_k], k, v [B, N, T, d_k]
// With rotary positions, q and k turned by the angles of positions start, ..., start + T - 1.
std::pair<Variable, KVCache> MultiheadAttention::project_query_key_value(const Variable& x, int64_t start) const {
  check_input("input", x);
  const int64_t q_width = heads_ * head_dim_, kv_width = kv_heads_ * head_dim_;
  const Variable qkv = project(x, 0, q_width + 2 * kv_width);  // [B, T, (H + 2N) d_k]
  Variable q = split_heads(narrow(qkv, 2, 0, q_width), heads_);
  Variable k = split_heads(narrow(qkv, 2, q_width, kv_width), kv_heads_);
  const Variable v = split_heads(narrow(qkv, 2, q_width + kv_width, kv_width), kv_heads_);
  if (rotary_) {
    q = gradformer::rotary(q, rotary_->cos, rotary_->sin, start);
    k = gradformer::rotary(k, rotary_->cos, rotary_->sin, start);
  }
  return {q, {k, v}};
}

// A mask for the scores [B, H, Tq, Tk] made one for grouped queries' [B, N, G Tq, Tk] (see attend):
// its head dimension 1 or H, its query dimension 1 or Tq.
static Tensor grouped_mask(const Tensor& mask, int64_t N, int64_t G, int64_t Tq) {
  if (!mask.defined()) return mask;
  Tensor m = mask;
  while (m.dim() < 4) m = m.unsqueeze(0);
  const int64_t b = m.size(0), h = m.size(1), tk = m.size(3);
  if (m.size(2) == 1 && h == 1) return m;  // broadcasts over the stacked queries as it is
  m = m.expand({b, h, Tq, tk});
  if (h == 1) return m.unsqueeze(2).expand({b, 1, G, Tq, tk}).reshape({b, 1, G * Tq, tk});
  return m.reshape({b, N, G * Tq, tk});  // head h = n G + g: [b, N, G, Tq, tk]
}

// Grouped-query attention without copying a key or value: the G = H / N query heads that share a
// key/value head are stacked along the query axis, [B, H, Tq, d_k] -> [B, N, G Tq, d_k], and attend
// to their one head [B, N, Tk, d_k] as one head of G Tq queries would. Query head h = n G + g lands
// in group n = h / G, as the definition asks; the output is unstacked the same way.
//   q: [B, H, Tq, d_k], kv: [B, N, Tk, d_k] -> output [B, H, Tq, d_k], weights [B, H, Tq, Tk]
Attention MultiheadAttention::grouped_query_attention(const Variable& q, const KVCache& kv, const Tensor& mask,
                                                      const AttentionOptions& options) const {
  const int64_t B = q.size(0), Tq = q.size(2), N = kv_heads_, G = heads_ / kv_heads_;
  Attention a = scaled_dot_product_attention(reshape(q, {B, N, G * Tq, head_dim_}), kv.k, kv.v,
                                             grouped_mask(mask, N, G, Tq), options);
  a.output = reshape(a.output, {B, heads_, Tq, head_dim_});
  if (a.weights.defined()) a.weights = a.weights.reshape({B, heads_, Tq, a.weights.size(-1)});
  return a;
}

// Concat(head_1, ..., head_h) W^O   q: [B, H, Tq, d_k], kv: [B, N, Tk, d_k] -> [B, Tq, d]
Attention MultiheadAttention::attend(const Variable& q, const KVCache& kv, const Tensor& mask) const {
  if (kv.empty()) throw ValueError("MultiheadAttention: attend needs keys and values (the cache is empty)");
  // A [B, Tq or 1, Tk] mask gets the head dimension: [B, 1, Tq or 1, Tk] broadcasts over heads.
  const Tensor m = mask.defined() && mask.dim() == 3 ? mask.unsqueeze(1) : mask;
  AttentionOptions options;
  if (is_training() && dropout_p > 0) options.dropout_p = dropout_p, options.dropout_gen = dropout_gen_.get();
  const Attention heads = kv_heads_ == heads_ ? scaled_dot_product_attention(q, kv.k, kv.v, m, options)
                                              : grouped_query_attention(q, kv, m, options);  // [B, H, Tq, d_k]
  // [B, H, Tq, d_k] -> [B, Tq, H, d_k] -> [B, Tq, H d_k]: Concat(head_1, ..., head_h)
  const Variable merged = reshape(transpose(heads.output, 1, 2), {q.size(0), q.size(2), heads_ * head_dim_});
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
  const int64_t q_width = heads_ * head_dim_, kv_width = kv_heads_ * head_dim_;
  const KVCache kv{split_heads(project(key, q_width, kv_width), kv_heads_),
                   split_heads(project(value, q_width + kv_width, kv_width), kv_heads_)};
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
  auto [q, kv] = project_query_key_value(x, cache.length());
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
