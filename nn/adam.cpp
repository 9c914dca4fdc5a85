#include "nn/adam.h"

#include <cmath>
#include <limits>

#include "tensor/kernels/parallel.h"

namespace gradformer {

double max_adam_gradient_norm(DType dtype) {
  return dispatch_floating(dtype, "max_adam_gradient_norm", [&]<class T>() {
    return std::sqrt(static_cast<double>(std::numeric_limits<T>::max())) / 2;
  });
}

Adam::Adam(std::vector<Variable> params, const AdamOptions& options)
    : Optimizer(std::move(params), options.lr, "adam", "Adam.step"), options_(options) {
  const auto in_unit_interval = [](double beta) { return beta >= 0 && beta < 1; };
  check_option("Adam", "beta1", options.beta1, in_unit_interval(options.beta1), "in [0, 1)");
  check_option("Adam", "beta2", options.beta2, in_unit_interval(options.beta2), "in [0, 1)");
  check_option("Adam", "eps", options.eps, std::isfinite(options.eps) && options.eps >= 0, "finite and >= 0");
  // Allocated up front (not at the first step) so the state always has every entry; zeros are
  // exactly what the first update expects.
  m_ = zeros_like_each(params_);
  v_ = zeros_like_each(params_);
  param_steps_ = zeros({static_cast<int64_t>(params_.size())}, DType::Int64);
  for (const Variable& p : params_)
    if (p.defined() && max_adam_gradient_norm(p.dtype()) < max_gradient_norm_)
      narrowest_ = p.dtype(), max_gradient_norm_ = max_adam_gradient_norm(p.dtype());
}

std::string Adam::second_moment_overflow(double gradient_norm) const {
  if (gradient_norm <= max_gradient_norm_) return "";
  return message("the gradient norm ", gradient_norm, " is past ", max_gradient_norm_, ", where its squares overflow ",
                 name(narrowest_), " in Adam's second moment");
}

std::vector<std::pair<std::string, Tensor>> Adam::buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < m_.size(); ++i) out.emplace_back("m." + std::to_string(i), m_[i]);
  for (size_t i = 0; i < v_.size(); ++i) out.emplace_back("v." + std::to_string(i), v_[i]);
  out.emplace_back("param_steps", param_steps_);
  return out;
}

void Adam::update() {
  const double beta1 = options_.beta1, beta2 = options_.beta2;
  int64_t* param_steps = param_steps_.data<int64_t>();
  for_each_with_grad([&](size_t i, Tensor& value, const Tensor& grad) {
    const int64_t t = ++param_steps[i];
    // The per-step scalars in double, once per parameter; the elementwise work in the parameter's dtype.
    const double step_size = lr_ / (1 - std::pow(beta1, static_cast<double>(t)));
    const double bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, static_cast<double>(t)));
    dispatch_floating(value.dtype(), "Adam.step", [&]<class T>() {
      T* p = value.data<T>();
      const T* g = grad.data<T>();
      T* m = m_[i].data<T>();
      T* v = v_[i].data<T>();
      const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2);
      const T one_minus_b1 = static_cast<T>(1 - beta1), one_minus_b2 = static_cast<T>(1 - beta2);
      const T size = static_cast<T>(step_size), bc2 = static_cast<T>(bias_correction2_sqrt);
      const T eps = static_cast<T>(options_.eps);
      // Elementwise: the split across threads never changes a result. A sqrt and a division per
      // element: 2 units of work. The loop works on copies of the scalars, not on the enclosing
      // function's variables: a float the loop reads through a reference might be one it writes
      // through m, v or p, as far as the compiler can tell, and it would not vectorise the loop.
      parallel_for(0, value.numel(), grain_for(2), [=](int64_t lo, int64_t hi) {
        const T b1_ = b1, b2_ = b2, c1 = one_minus_b1, c2 = one_minus_b2, size_ = size, bc2_ = bc2, eps_ = eps;
        T* __restrict p_ = p;
        T* __restrict m_ = m;
        T* __restrict v_ = v;
        const T* __restrict g_ = g;
        for (int64_t k = lo; k < hi; ++k) {
          m_[k] = b1_ * m_[k] + c1 * g_[k];
          v_[k] = b2_ * v_[k] + c2 * g_[k] * g_[k];
          p_[k] -= size_ * m_[k] / (std::sqrt(v_[k]) / bc2_ + eps_);
        }
      });
    });
  });
}

}  // namespace gradformer
