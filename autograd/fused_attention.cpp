#include "autograd/fused_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/all.h"
#include "tensor/all.h"
#include "tensor/kernels/exp_kernel.h"

namespace gradformer {

namespace {

// ---- argument checks, shared by both versions ----------------------------------------------------

struct AttentionShape {
  Shape lead;            // the leading dimensions, [B, H] in a Transformer
  int64_t matrices = 1;  // how many [Tq, Tk] score matrices: the product of lead (B * H)
  int64_t tq = 0, tk = 0, dk = 0, dv = 0;
  Tensor mask;  // expanded to [lead..., Tq, Tk] (a view), or undefined
};

AttentionShape check(const char* op, const Variable& q, const Variable& k, const Variable& v, const Tensor& mask,
                     const AttentionOptions& options) {
  if (!q.defined() || !k.defined() || !v.defined()) throw ValueError(message(op, ": q, k and v must all be defined"));
  if (q.dim() < 2 || k.dim() != q.dim() || v.dim() != q.dim())
    throw ShapeError(message(op, ": q, k and v need the same rank (at least 2: [..., T, d]), got q ", q.shape(), ", k ",
                             k.shape(), ", v ", v.shape()));
  if (k.dtype() != q.dtype() || v.dtype() != q.dtype())
    throw DTypeError(message(op, ": q, k and v must share a dtype, got ", q.dtype(), ", ", k.dtype(), ", ", v.dtype()));
  if (q.dtype() != DType::Float32 && q.dtype() != DType::Float64)
    throw DTypeError(message(op, ": expected float32 or float64, got ", q.dtype()));
  AttentionShape s;
  const int r = q.dim();
  for (int i = 0; i < r - 2; ++i) {
    if (k.size(i) != q.size(i) || v.size(i) != q.size(i))
      throw ShapeError(message(op, ": leading dimensions differ: q ", q.shape(), ", k ", k.shape(), ", v ", v.shape()));
    s.lead.push_back(q.size(i));
  }
  s.matrices = s.lead.numel();
  s.tq = q.size(-2), s.tk = k.size(-2), s.dk = q.size(-1), s.dv = v.size(-1);
  if (k.size(-1) != s.dk)
    throw ShapeError(message(op, ": q and k need the same last dimension d_k, got q ", q.shape(), ", k ", k.shape()));
  if (v.size(-2) != s.tk)
    throw ShapeError(message(op, ": k and v need the same number of positions, got k ", k.shape(), ", v ", v.shape()));
  if (mask.defined()) {
    if (mask.dtype() != DType::Bool)
      throw DTypeError(message(op, ": mask must be bool (true where attention is allowed), got ", mask.dtype()));
    Shape scores = s.lead;
    scores.push_back(s.tq);
    scores.push_back(s.tk);
    if (mask.dim() > scores.rank() || !broadcasts_to(mask.shape(), scores))
      throw ShapeError(message(op, ": mask ", mask.shape(), " does not broadcast to the scores ", scores, " (q ",
                               q.shape(), ", k ", k.shape(), ")"));
    s.mask = mask.expand(scores);
  }
  if (!(options.dropout_p >= 0 && options.dropout_p < 1))
    throw ValueError(message(op, ": dropout_p must be in [0, 1), got ", options.dropout_p));
  if (options.dropout_p > 0 && options.dropout_gen == nullptr)
    throw ValueError(message(op, ": dropout_p ", options.dropout_p, " needs a dropout generator"));
  return s;
}

double scale_of(const AttentionOptions& options, int64_t dk) {
  return options.scale ? *options.scale : 1.0 / std::sqrt(static_cast<double>(dk));
}

}  // namespace

// ---- the definition, composed from differentiable ops (the reference, and chapter 5's version) --------

Attention scaled_dot_product_attention_unfused(const Variable& q, const Variable& k, const Variable& v,
                                               const Tensor& mask, const AttentionOptions& options) {
  const AttentionShape s = check("scaled_dot_product_attention_unfused", q, k, v, mask, options);
  // scores: [..., Tq, Tk]
  Variable scores = matmul(q, transpose(k, -2, -1)) * scale_of(options, s.dk);
  Variable p;
  if (s.mask.defined()) {
    // A large finite negative rather than -inf: a row with every key masked then gets a finite
    // uniform softmax (no NaN, in the forward or the backward), which the mask multiplies to 0.
    const Tensor allowed = s.mask.to(q.dtype());
    p = softmax(masked_fill(scores, logical_not(s.mask), -1e30), -1) * Variable(allowed);
  } else {
    p = softmax(scores, -1);
  }
  const Tensor weights = p.value();
  if (options.dropout_p > 0) p = dropout(p, options.dropout_p, *options.dropout_gen, true);
  return {matmul(p, v), weights};
}

namespace {

// ---- the mask, read in place --------------------------------------------------------------------------

// Offset of matrix n (n runs over the leading dimensions, row-major) for every n.
std::vector<int64_t> lead_offsets(const Tensor& t) {
  const int lead = t.dim() - 2;
  int64_t n = 1;
  for (int i = 0; i < lead; ++i) n *= t.size(i);
  std::vector<int64_t> off(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, o = 0;
    for (int d = lead - 1; d >= 0; --d) {
      o += (rest % t.size(d)) * t.strides()[d];
      rest /= t.size(d);
    }
    off[static_cast<size_t>(i)] = o;
  }
  return off;
}

// The mask as one [Tq, Tk] matrix per score matrix n: allowed(n, i, j) = base[off[n] + i * rs + j * cs] (strides may be
// 0).
struct MaskRows {
  Tensor t;
  const bool* base = nullptr;
  std::vector<int64_t> off;
  int64_t rs = 0, cs = 0;
  bool allowed(int64_t n, int64_t i, int64_t j) const {
    return base == nullptr || base[off[static_cast<size_t>(n)] + i * rs + j * cs];
  }
  /// Row i of matrix n: allowed(n, i, j) is row[j * cs]; nullptr without a mask.
  const bool* row(int64_t n, int64_t i) const {
    return base == nullptr ? nullptr : base + off[static_cast<size_t>(n)] + i * rs;
  }
};

// row[j] = allowed[j * cs] ? row[j] * sc : -inf for j < n (no mask: allowed is null), and the
// largest of them. The maximum kept in 16 running maxima, so that the compiler can keep them in
// vector registers; max is exact, so the order changes nothing.
template <class T>
T scale_mask_max(T* row, int64_t n, T sc, const bool* allowed, int64_t cs) {
  constexpr T minus_inf = -std::numeric_limits<T>::infinity();
  if (allowed == nullptr)
    for (int64_t j = 0; j < n; ++j) row[j] *= sc;
  else if (cs == 1)
    for (int64_t j = 0; j < n; ++j) row[j] = allowed[j] ? row[j] * sc : minus_inf;
  else
    for (int64_t j = 0; j < n; ++j) row[j] = allowed[j * cs] ? row[j] * sc : minus_inf;
  constexpr int kLanes = 16;
  T lane[kLanes];
  std::fill(lane, lane + kLanes, minus_inf);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] = row[j + l] > lane[l] ? row[j + l] : lane[l];
  T m = minus_inf;
  for (; j < n; ++j) m = std::max(m, row[j]);
  for (T x : lane) m = std::max(m, x);
  return m;
}

MaskRows mask_rows(const Tensor& mask) {  // mask: [lead..., Tq, Tk], any strides
  MaskRows m;
  if (!mask.defined()) return m;
  m.t = mask;
  m.base = mask.data<bool>();
  m.off = lead_offsets(mask);
  m.rs = mask.strides()[mask.dim() - 2];
  m.cs = mask.strides()[mask.dim() - 1];
  return m;
}

}  // namespace

// ---- the fused op ---------------------------------------------------------------------------------

// The backward pass, a function of its own so a debugger can stop in it by name
// (break scaled_dot_product_attention_backward). P: the attention weights [..., Tq, Tk];
// kept: the elements dropout kept (bool) or undefined, p its rate; g = dO: [..., Tq, d_v] -> dQ, dK,
// dV into dx.
static void scaled_dot_product_attention_backward(const Tensor& P, const Tensor& kept, double p, double scale,
                                                  const Tensor& g, Grads& dx) {
  const int64_t Tk = P.size(-1);
  const Tensor& qv = dx.input(0);
  const Tensor& kv = dx.input(1);
  const Tensor& vv = dx.input(2);
  const Tensor Pd = kept.defined() ? times_dropout_factors(P, kept, p) : P;  // P * F
  if (dx.wanted(2)) dx[2] = matmul(Pd.transpose(-2, -1), g);                 // dV = (P * F)^T dO
  if (!dx.wanted(0) && !dx.wanted(1)) return;
  Tensor dS = matmul(g, vv.transpose(-2, -1));  // dP (before dropout): [..., Tq, Tk], contiguous
  dispatch_floating(P.dtype(), "scaled_dot_product_attention_backward", [&]<class T>() {
    const T* pp = P.data<T>();
    const bool* pk = kept.defined() ? kept.data<bool>() : nullptr;
    const T keep = p == 1 ? T(0) : static_cast<T>(1 / (1 - p));  // F where kept (apply_dropout's factor)
    T* pd = dS.data<T>();
    const T sc = static_cast<T>(scale);
    const int64_t rows = P.numel() / std::max<int64_t>(Tk, 1);
    // dP, P: [rows, Tk] -> dS: [rows, Tk]
    parallel_for(0, rows, grain_for(2 * Tk), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* pr = pp + r * Tk;
        T* dr = pd + r * Tk;
        if (pk)
          for (int64_t j = 0; j < Tk; ++j) dr[j] *= pk[r * Tk + j] ? keep : T(0);
        T dot = 0;
        for (int64_t j = 0; j < Tk; ++j) dot += pr[j] * dr[j];
        for (int64_t j = 0; j < Tk; ++j) dr[j] = sc * pr[j] * (dr[j] - dot);  // 0 where P is 0 (masked)
      }
    });
  });
  if (dx.wanted(0)) dx[0] = matmul(dS, kv);                    // dQ = dS K
  if (dx.wanted(1)) dx[1] = matmul(dS.transpose(-2, -1), qv);  // dK = dS^T Q
}

// The products go to the fast batched matmul, which reads the heads of a projection (strided views)
// and K^T (a transposed view) in place; what is fused is everything between them: scaling, masking
// and the softmax in one pass over the scores, written over the scores themselves, and in backward
// the softmax's Jacobian, in one pass over dP.
//   forward:  S = Q K^T;  P = softmax(scale * S, masked);  O = (P * F) V
//   backward: dV = (P * F)^T dO;  dP = (dO V^T) * F;  dS = scale * P * (dP - rowsum(dP * P));
//             dQ = dS K;  dK = dS^T Q
// F is the dropout factor (0 or 1/(1-p)), kept as a bool per weight; absent without dropout.
Attention scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v, const Tensor& mask,
                                       const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention";
  const AttentionShape s = check(op, q, k, v, mask, options);
  const double scale = scale_of(options, s.dk);
  const int64_t Tq = s.tq, Tk = s.tk;
  const DType dtype = q.dtype();

  Tensor P = matmul(q.value(), k.value().transpose(-2, -1));  // S: [..., Tq, Tk], contiguous; becomes P in place
  const MaskRows rm = mask_rows(s.mask);
  dispatch_floating(dtype, op, [&]<class T>() {
    T* pp = P.data<T>();
    const T sc = static_cast<T>(scale);
    // S: [B*H*Tq, Tk] -> P: [B*H*Tq, Tk]: scale, mask and take the max a row at a time; the exps of
    // all the rows of a piece in one call (rows of a few positions are shorter than a vector).
    parallel_for(0, s.matrices * Tq, grain_for(2 * Tk), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t matrix = r / Tq, i = r % Tq;
        T* pr = pp + r * Tk;
        const T m = scale_mask_max(pr, Tk, sc, rm.row(matrix, i), rm.cs);
        if (m == -std::numeric_limits<T>::infinity()) continue;  // every key masked: every score -inf
        for (int64_t j = 0; j < Tk; ++j) pr[j] -= m;
      }
      exp_shifted(pp + lo * Tk, T(0), pp + lo * Tk, (hi - lo) * Tk);  // the library's exp (tensor/kernels/exp_kernel.h)
      for (int64_t r = lo; r < hi; ++r) {
        T* pr = pp + r * Tk;
        T total = 0;
        for (int64_t j = 0; j < Tk; ++j) total += pr[j];
        if (total == 0) continue;  // every key masked: weights 0 (exp(-inf)), output 0
        const T inv = 1 / total;
        for (int64_t j = 0; j < Tk; ++j) pr[j] *= inv;
      }
    });
  });
  Tensor kept, Pd = P;  // which weights dropout kept (bool) and P * F, made in one pass: [..., Tq, Tk]
  if (options.dropout_p > 0) {
    Dropped dropped = apply_dropout(P, options.dropout_p, *options.dropout_gen);
    kept = std::move(dropped.kept), Pd = std::move(dropped.output);
  }
  const Tensor out = matmul(Pd, v.value());  // [..., Tq, d_v]

  Variable output = record(op, out, {q, k, v}, [P, kept, p = options.dropout_p, scale](const Tensor& g, Grads& dx) {
    scaled_dot_product_attention_backward(P, kept, p, scale, g, dx);
  });
  return {output, P};
}

}  // namespace gradformer
