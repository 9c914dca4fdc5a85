#include "autograd/gradcheck.h"

#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/random.h"
#include "tensor/reduce.h"

namespace gradformer {

namespace {

// Element `flat` (row-major position) of t, as an offset into its storage.
int64_t storage_offset(const Tensor& t, int64_t flat, std::vector<int64_t>* index = nullptr) {
  int64_t offset = 0;
  if (index) index->assign(static_cast<size_t>(t.dim()), 0);
  for (int d = t.dim() - 1; d >= 0; --d) {
    const int64_t i = flat % t.shape()[d];
    flat /= t.shape()[d];
    offset += i * t.strides()[d];
    if (index) (*index)[static_cast<size_t>(d)] = i;
  }
  return offset;
}

bool has_overlap(const Tensor& t) {
  for (int d = 0; d < t.dim(); ++d)
    if (t.shape()[d] > 1 && t.strides()[d] == 0) return true;
  return false;
}

// L = sum(f(x) * u), the scalar whose gradient backward(u) computes.
double projected(const GradcheckFunction& f, const std::vector<Variable>& xs, const Tensor& u) {
  return sum(mul(f(xs).value(), u)).item();
}

std::string index_string(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

}  // namespace

static GradcheckResult check_leaves(const GradcheckFunction& f, const std::vector<Variable>& xs,
                                    const GradcheckOptions& options);

GradcheckResult gradcheck(const GradcheckFunction& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options) {
  std::vector<Variable> xs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!is_floating(t.dtype())) {
      xs.emplace_back(t);
      continue;
    }
    if (has_overlap(t))
      throw ValueError(message("gradcheck: input ", i, " (shape ", t.shape(), ", strides ", t.strides(),
                               ") has overlapping elements; pass a contiguous copy"));
    xs.emplace_back(t.to(DType::Float64), true);
  }
  return check_leaves(f, xs, options);
}

GradcheckResult gradcheck(const std::function<Variable()>& f, const std::vector<Variable>& leaves,
                          const GradcheckOptions& options) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    Variable leaf = leaves[i];
    if (!leaf.is_leaf() || !leaf.requires_grad() || leaf.dtype() != DType::Float64)
      throw ValueError(message("gradcheck: leaf ", i, " (", leaf.name(), ", shape ", leaf.shape(),
                               ") must be a float64 leaf that requires grad"));
    if (has_overlap(leaf.value())) throw ValueError(message("gradcheck: leaf ", i, " has overlapping elements"));
    leaf.zero_grad();
  }
  return check_leaves([&](const std::vector<Variable>&) { return f(); }, leaves, options);
}

// The check itself, on leaves xs: the floating ones that require grad are perturbed in place.
static GradcheckResult check_leaves(const GradcheckFunction& f, const std::vector<Variable>& xs,
                                    const GradcheckOptions& options) {
  // Analytic gradients, twice: the second backward must add the same amount again.
  const Variable out = f(xs);
  if (out.dtype() != DType::Float64)
    throw DTypeError(message("gradcheck: f must return float64 for float64 inputs, got ", out.dtype()));
  Generator gen(options.seed);
  const Tensor u = randn(out.shape(), gen, DType::Float64);
  out.backward(u, /*retain_graph=*/options.check_accumulation);
  std::vector<Tensor> first(xs.size()), second(xs.size());
  auto grad_or_zeros = [](const Variable& x) {
    return x.grad().defined() ? x.grad().contiguous().clone() : zeros_like(x.value());
  };
  for (size_t i = 0; i < xs.size(); ++i)
    if (xs[i].requires_grad()) first[i] = grad_or_zeros(xs[i]);
  if (options.check_accumulation) {
    out.backward(u);
    for (size_t i = 0; i < xs.size(); ++i)
      if (xs[i].requires_grad()) second[i] = grad_or_zeros(xs[i]);
  }

  GradcheckResult result;
  std::string failure;
  NoGradGuard no_grad;  // the numeric side needs no graph
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!xs[i].requires_grad()) continue;
    const Tensor& x = xs[i].value();
    double* base = x.data<double>();
    const double* analytic = first[i].data<double>();
    for (int64_t e = 0; e < x.numel(); ++e) {
      std::vector<int64_t> index;
      double& xe = base[storage_offset(x, e, &index)];
      const double saved = xe;
      xe = saved + options.eps;
      const double plus = projected(f, xs, u);
      xe = saved - options.eps;
      const double minus = projected(f, xs, u);
      xe = saved;
      const double numeric = (plus - minus) / (2 * options.eps);
      const double score = std::abs(analytic[e] - numeric) / (options.atol + options.rtol * std::abs(numeric));
      ++result.elements_checked;
      if (result.elements_checked == 1 || !(score <= result.score)) {  // NaN counts as the worst
        result.score = std::isnan(score) ? INFINITY : score;
        result.input = i, result.index = index, result.analytic = analytic[e], result.numeric = numeric;
      }
      if (options.check_accumulation && failure.empty()) {
        const double twice = second[i].data<double>()[e];
        if (!(std::abs(twice - 2 * analytic[e]) <= options.atol + options.rtol * std::abs(2 * analytic[e])))
          failure = message("gradcheck: gradients do not accumulate: input ", i, " element ", index_string(index),
                            " is ", twice, " after two backward passes, expected 2 x ", analytic[e]);
      }
    }
  }
  result.ok = result.score <= 1 && failure.empty();
  result.report = message(result.score <= 1 ? "gradcheck passed" : "gradcheck FAILED", ": worst element is input ",
                          result.input, " ", index_string(result.index), ": analytic ", result.analytic, ", numeric ",
                          result.numeric, " (|difference| / (atol + rtol |numeric|) = ", result.score, "), ",
                          result.elements_checked, " elements checked");
  if (!failure.empty()) result.report += "; " + failure;
  return result;
}

}  // namespace gradformer
