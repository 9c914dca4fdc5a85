#include "transformer/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/all.h"
#include "tensor/all.h"

namespace gradformer {

namespace {

// ---- argument checks, shared by both versions ----------------------------------------------------

struct AttentionShape {
  Shape lead;  // the leading dimensions, [B, H] in a Transformer
  int64_t n = 1, tq = 0, tk = 0, dk = 0, dv = 0;
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
  s.n = s.lead.numel();
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
      throw ShapeError(message(op, ": mask ", mask.shape(), " does not broadcast to the scores ", scores, " (q ", q.shape(),
                               ", k ", k.shape(), ")"));
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

// ---- strided row access for the fused kernel --------------------------------------------------------

// A tensor [lead..., T, D] whose last dimension is contiguous, read as N = prod(lead) matrices:
// element (n, t, c) is at base[off[n] + t * rs + c]. Views such as the heads of a projection
// ([B, T, H, d] permuted to [B, H, T, d]) are read in place, without a copy.
struct Rows {
  Tensor t;
  std::vector<int64_t> off;
  int64_t rs = 0;
};

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

Rows rows_of(const Tensor& x) {
  Rows r;
  r.t = (x.size(-1) == 1 || x.strides().back() == 1) ? x : x.contiguous();
  r.off = lead_offsets(r.t);
  r.rs = r.t.strides()[r.t.dim() - 2];
  return r;
}

// A new tensor of shape [lead..., T, D]. For rank 4 ([B, H, T, D]) its memory is [B, T, H, D], so
// that merging the heads afterwards (transpose(1, 2) then a view to [B, T, H * D]) copies nothing.
Tensor new_heads_tensor(const Shape& lead, int64_t t, int64_t d, DType dtype) {
  if (lead.rank() == 2)
    return Tensor::empty({lead[0], t, lead[1], d}, dtype).permute({0, 2, 1, 3});
  Shape s = lead;
  s.push_back(t);
  s.push_back(d);
  return Tensor::empty(s, dtype);
}

// The mask as N matrices: allowed(n, i, j) = base[off[n] + i * rs + j * cs] (strides may be 0).
struct MaskRows {
  Tensor t;
  const bool* base = nullptr;
  std::vector<int64_t> off;
  int64_t rs = 0, cs = 0;
  bool allowed(int64_t n, int64_t i, int64_t j) const {
    return base == nullptr || base[off[static_cast<size_t>(n)] + i * rs + j * cs];
  }
};

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

// S = scale * Q K^T, masked;  P = softmax(S) (rows of zeros where every key is masked);
// O = (P * F) V, where F is the dropout factor (0 or 1/(1-p)), or 1 without dropout.
Attention scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v, const Tensor& mask,
                                       const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention";
  const AttentionShape s = check(op, q, k, v, mask, options);
  const double scale = scale_of(options, s.dk);
  const int64_t N = s.n, Tq = s.tq, Tk = s.tk, dk = s.dk, dv = s.dv;
  const DType dtype = q.dtype();

  Shape weights_shape = s.lead;
  weights_shape.push_back(Tq);
  weights_shape.push_back(Tk);
  Tensor P = Tensor::empty(weights_shape, dtype);  // contiguous [N, Tq, Tk]
  Tensor F;                                        // dropout factors, [N, Tq, Tk]
  if (options.dropout_p > 0) {
    // Drawn serially before the parallel loop, so the result does not depend on the thread count.
    F = rand(weights_shape, *options.dropout_gen, dtype);
    const Tensor keep = ge(F, full({}, options.dropout_p, dtype));
    F = where(keep, full({}, 1.0 / (1.0 - options.dropout_p), dtype), zeros({}, dtype));
  }
  Tensor out = new_heads_tensor(s.lead, Tq, dv, dtype);

  const Rows rq = rows_of(q.value()), rk = rows_of(k.value()), rv = rows_of(v.value()), ro = rows_of(out);
  const MaskRows rm = mask_rows(s.mask);

  dispatch_floating(dtype, op, [&]<class T>() {
    const T *pq = rq.t.data<T>(), *pk = rk.t.data<T>(), *pv = rv.t.data<T>();
    const T* pf = F.defined() ? F.data<T>() : nullptr;
    T *pp = P.data<T>(), *po = ro.t.data<T>();
    const T sc = static_cast<T>(scale);
    // q, k: [N, T, d_k], v: [N, Tk, d_v] -> P: [N, Tq, Tk], out: [N, Tq, d_v]
    parallel_for(0, N, 1, [&](int64_t lo, int64_t hi) {
      std::vector<T> kt(static_cast<size_t>(dk * Tk)), srow(static_cast<size_t>(Tk));
      for (int64_t n = lo; n < hi; ++n) {
        const T* kn = pk + rk.off[static_cast<size_t>(n)];
        const T* vn = pv + rv.off[static_cast<size_t>(n)];
        // K^T once per (batch, head), so every inner loop below runs over contiguous memory.
        for (int64_t j = 0; j < Tk; ++j)
          for (int64_t c = 0; c < dk; ++c) kt[static_cast<size_t>(c * Tk + j)] = kn[j * rk.rs + c];
        for (int64_t i = 0; i < Tq; ++i) {
          const T* qi = pq + rq.off[static_cast<size_t>(n)] + i * rq.rs;
          T* pi = pp + (n * Tq + i) * Tk;
          T* oi = po + ro.off[static_cast<size_t>(n)] + i * ro.rs;
          std::fill(srow.begin(), srow.end(), T(0));
          for (int64_t c = 0; c < dk; ++c) {  // s = q_i K^T
            const T a = qi[c];
            const T* kc = kt.data() + c * Tk;
            for (int64_t j = 0; j < Tk; ++j) srow[static_cast<size_t>(j)] += a * kc[j];
          }
          T m = -std::numeric_limits<T>::infinity();
          for (int64_t j = 0; j < Tk; ++j)
            if (rm.allowed(n, i, j)) m = std::max(m, srow[static_cast<size_t>(j)] * sc);
          std::fill(oi, oi + dv, T(0));
          if (m == -std::numeric_limits<T>::infinity()) {  // every key masked: weights and output 0
            std::fill(pi, pi + Tk, T(0));
            continue;
          }
          T total = 0;
          for (int64_t j = 0; j < Tk; ++j)
            total += (pi[j] = rm.allowed(n, i, j) ? std::exp(srow[static_cast<size_t>(j)] * sc - m) : T(0));
          const T inv = 1 / total;
          const T* fi = pf ? pf + (n * Tq + i) * Tk : nullptr;
          for (int64_t j = 0; j < Tk; ++j) {  // o_i = sum_j p_ij v_j
            pi[j] *= inv;
            const T w = fi ? pi[j] * fi[j] : pi[j];
            if (w == T(0)) continue;
            const T* vj = vn + j * rv.rs;
            for (int64_t c = 0; c < dv; ++c) oi[c] += w * vj[c];
          }
        }
      }
    });
  });

  Variable output = record(op, out, {q, k, v}, [P, F, rm, scale, s](const Tensor& g, Grads& dx) {
    const int64_t N = s.n, Tq = s.tq, Tk = s.tk, dk = s.dk, dv = s.dv;
    const DType dtype = P.dtype();
    Tensor dq = new_heads_tensor(s.lead, Tq, dk, dtype), dkey = new_heads_tensor(s.lead, Tk, dk, dtype),
           dval = new_heads_tensor(s.lead, Tk, dv, dtype);
    const Rows rq = rows_of(dx.input(0)), rk = rows_of(dx.input(1)), rv = rows_of(dx.input(2)), rg = rows_of(g);
    const Rows rdq = rows_of(dq), rdk = rows_of(dkey), rdv = rows_of(dval);
    dispatch_floating(dtype, "scaled_dot_product_attention_backward", [&]<class T>() {
      const T *pq = rq.t.data<T>(), *pk = rk.t.data<T>(), *pv = rv.t.data<T>(), *pg = rg.t.data<T>(), *pp = P.data<T>();
      const T* pf = F.defined() ? F.data<T>() : nullptr;
      T *pdq = rdq.t.data<T>(), *pdk = rdk.t.data<T>(), *pdv = rdv.t.data<T>();
      const T sc = static_cast<T>(scale);
      // g: [N, Tq, d_v] -> dq: [N, Tq, d_k], dk: [N, Tk, d_k], dv: [N, Tk, d_v]
      parallel_for(0, N, 1, [&](int64_t lo, int64_t hi) {
        std::vector<T> vt(static_cast<size_t>(dv * Tk)), dp(static_cast<size_t>(Tk));
        for (int64_t n = lo; n < hi; ++n) {
          const size_t un = static_cast<size_t>(n);
          const T *vn = pv + rv.off[un], *kn = pk + rk.off[un];
          T *dkn = pdk + rdk.off[un], *dvn = pdv + rdv.off[un];
          for (int64_t j = 0; j < Tk; ++j) {
            std::fill(dkn + j * rdk.rs, dkn + j * rdk.rs + dk, T(0));
            std::fill(dvn + j * rdv.rs, dvn + j * rdv.rs + dv, T(0));
            for (int64_t c = 0; c < dv; ++c) vt[static_cast<size_t>(c * Tk + j)] = vn[j * rv.rs + c];
          }
          for (int64_t i = 0; i < Tq; ++i) {
            const T* gi = pg + rg.off[un] + i * rg.rs;
            const T* qi = pq + rq.off[un] + i * rq.rs;
            const T* pi = pp + (n * Tq + i) * Tk;
            const T* fi = pf ? pf + (n * Tq + i) * Tk : nullptr;
            T* dqi = pdq + rdq.off[un] + i * rdq.rs;
            std::fill(dp.begin(), dp.end(), T(0));
            for (int64_t c = 0; c < dv; ++c) {  // dP = g_i V^T
              const T a = gi[c];
              const T* vc = vt.data() + c * Tk;
              for (int64_t j = 0; j < Tk; ++j) dp[static_cast<size_t>(j)] += a * vc[j];
            }
            T dot = 0;
            for (int64_t j = 0; j < Tk; ++j) {
              const T w = fi ? pi[j] * fi[j] : pi[j];
              if (w != T(0)) {  // dV_j += (p_ij f_ij) g_i
                T* dvj = dvn + j * rdv.rs;
                for (int64_t c = 0; c < dv; ++c) dvj[c] += w * gi[c];
              }
              if (fi) dp[static_cast<size_t>(j)] *= fi[j];
              dot += pi[j] * dp[static_cast<size_t>(j)];
            }
            std::fill(dqi, dqi + dk, T(0));
            for (int64_t j = 0; j < Tk; ++j) {
              const T ds = pi[j] * (dp[static_cast<size_t>(j)] - dot) * sc;  // dS_ij
              if (ds == T(0)) continue;
              const T* kj = kn + j * rk.rs;
              T* dkj = dkn + j * rdk.rs;
              for (int64_t c = 0; c < dk; ++c) {
                dqi[c] += ds * kj[c];  // dQ_i += dS_ij k_j
                dkj[c] += ds * qi[c];  // dK_j += dS_ij q_i
              }
            }
          }
        }
      });
    });
    if (dx.wanted(0)) dx[0] = dq;
    if (dx.wanted(1)) dx[1] = dkey;
    if (dx.wanted(2)) dx[2] = dval;
  });
  return {output, P};
}

// ---- the unfused composition -------------------------------------------------------------------------

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

}  // namespace gradformer
