#include "nn/lora.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "autograd/all.h"
#include "nn/functional.h"

namespace gradformer {

LoraAdapter::LoraAdapter(int64_t in, int64_t out, int64_t rank, double alpha, SkipInit, DType dtype)
    : scale_(alpha / static_cast<double>(rank)) {
  if (in <= 0 || out <= 0 || rank < 1 || rank > std::min(in, out) || !(alpha > 0 && std::isfinite(alpha)))
    throw ValueError(message("LoraAdapter: rank must be from 1 to min(in, out) = ", std::min(in, out),
                             " and alpha positive; got in ", in, ", out ", out, ", rank ", rank, ", alpha ", alpha));
  A = register_parameter("A", zeros({rank, in}, dtype));
  B = register_parameter("B", zeros({out, rank}, dtype));
}

LoraAdapter::LoraAdapter(int64_t in, int64_t out, int64_t rank, double alpha, Generator& gen, DType dtype)
    : LoraAdapter(in, out, rank, alpha, skip_init, dtype) {
  reset_parameters(gen);
}

void LoraAdapter::reset_parameters(Generator& gen) {
  linear_default_(A, A.size(1), gen);
  fill_(B, 0.0);  // the update starts at nothing
}

// (alpha / r) (x A^T) B^T: [..., in] -> [..., r] -> [..., out]. The scale multiplies the narrow
// [..., r] activation, not the [..., out] result, and not at all when it is 1 (alpha = r, the default).
Variable LoraAdapter::forward(const Variable& x) const {
  const Variable u = linear(x, A);  // [..., r]
  return linear(scale_ == 1 ? u : u * scale_, B);
}

Tensor LoraAdapter::delta() const { return mul(matmul(B.value(), A.value()), scalar(scale_, B.value().dtype())); }

bool is_lora_parameter(const std::string& name) {
  size_t start = 0;
  while (start < name.size()) {
    const size_t dot = std::min(name.find('.', start), name.size());
    const std::string_view part(name.data() + start, dot - start);
    if (part == "lora" || part.rfind("lora_", 0) == 0) return true;
    start = dot + 1;
  }
  return false;
}

// An adapter's A [r, in] as LoraAdapter draws it, its B [out, r] zero.
void reset_lora_adapters(const Module& model, Generator& gen) {
  for (const auto& [name, p] : model.named_parameters()) {
    if (!is_lora_parameter(name)) continue;
    if (name.ends_with(".A"))
      linear_default_(p, p.size(1), gen);
    else
      fill_(p, 0.0);
  }
}

int64_t freeze_all_but_lora(const Module& model) {
  int64_t trained = 0;
  for (auto& [name, p] : model.named_parameters()) {  // p: a handle on the model's own parameter
    const bool adapter = is_lora_parameter(name);
    p.set_requires_grad(adapter);
    if (adapter) trained += p.numel();
  }
  return trained;
}

}  // namespace gradformer
