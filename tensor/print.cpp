#include "tensor/print.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

namespace gradformer {
namespace {

constexpr int64_t kSummarizeAbove = 1000;  // elements
constexpr int64_t kEdgeItems = 3;

std::string format_value(double v, DType dtype, bool scientific) {
  char buf[64];
  if (dtype == DType::Bool) return v != 0 ? "true" : "false";
  if (dtype == DType::Int64)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else if (std::isnan(v))
    return "nan";
  else if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  else
    std::snprintf(buf, sizeof buf, scientific ? "%.4e" : "%.4f", v);
  return buf;
}

struct Printer {
  Printer(const Tensor& tensor, bool summarize_large) : t(tensor), summarize(summarize_large) {}
  const Tensor& t;
  bool summarize;
  bool scientific = false;
  size_t width = 0;
  std::ostringstream out;

  // Indices shown along dimension d: all, or the first and last kEdgeItems with a gap (-1) between.
  std::vector<int64_t> shown(int d) const {
    const int64_t n = t.shape()[d];
    std::vector<int64_t> idx;
    if (!summarize || n <= 2 * kEdgeItems) {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      idx.push_back(-1);
      for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    }
    return idx;
  }

  void print(const Tensor& s, int d, int indent) {
    if (s.dim() == 0) {
      const std::string v = format_value(s.item(), s.dtype(), scientific);
      out << std::string(width - std::min(width, v.size()), ' ') << v;
      return;
    }
    out << '[';
    const std::vector<int64_t> idx = shown(d);
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k) {
        out << ',';
        if (s.dim() == 1)
          out << ' ';
        else
          out << std::string(static_cast<size_t>(s.dim() - 1), '\n')
              << std::string(static_cast<size_t>(indent + 1), ' ');
      }
      if (idx[k] < 0)
        out << "...";
      else
        print(s.select(0, idx[k]), d + 1, indent + 1);
    }
    out << ']';
  }
};

}  // namespace

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  Printer p(t, t.numel() > kSummarizeAbove);
  // One number format and one column width for the whole tensor, from the values shown.
  if (t.numel() > 0 && is_floating(t.dtype())) {
    double largest = 0, smallest = INFINITY;
    for (double v : t.contiguous().to_vector<double>()) {
      if (!std::isfinite(v) || v == 0) continue;
      largest = std::max(largest, std::fabs(v));
      smallest = std::min(smallest, std::fabs(v));
    }
    p.scientific = largest >= 1e8 || smallest < 1e-4;
  }
  if (t.numel() > 0)
    for (double v : t.contiguous().to_vector<double>())
      p.width = std::max(p.width, format_value(v, t.dtype(), p.scientific).size());
  p.out << "tensor(";
  p.print(t, 0, static_cast<int>(std::string("tensor(").size()));
  p.out << ", shape=" << t.shape() << ", dtype=" << t.dtype() << ')';
  return p.out.str();
}

std::ostream& operator<<(std::ostream& out, const Tensor& t) { return out << to_string(t); }

}  // namespace gradformer
