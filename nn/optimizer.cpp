#include "nn/optimizer.h"

#include <cmath>
#include <set>

#include "autograd/all.h"
#include "tensor/support/profiler.h"

namespace gradformer {

void check_option(const std::string& op, const char* what, double value, bool valid, const char* expected) {
  if (!valid || std::isnan(value)) throw ValueError(message(op, ": ", what, " must be ", expected, ", got ", value));
}

Optimizer::Optimizer(std::vector<Variable> params, double lr, std::string name, const char* step_event)
    : params_(std::move(params)), lr_(0), name_(std::move(name)), step_event_(step_event) {
  if (params_.empty()) throw ValueError(message(name_, ": the parameter list is empty"));
  std::set<const VariableImpl*> seen;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Variable& p = params_[i];
    if (!p.defined()) throw ValueError(message(name_, ": parameter ", i, " is undefined"));
    if (!is_floating(p.dtype()))
      throw ValueError(message(name_, ": parameter ", i, " is ", p.dtype(), ", not a floating dtype"));
    // Updating the same tensor twice per step would silently double its learning rate.
    if (!seen.insert(p.impl().get()).second)
      throw ValueError(message(name_, ": parameter ", i, " appears twice in the parameter list"));
  }
  set_lr(lr);
}

void Optimizer::set_lr(double lr) {
  check_option(name_, "lr", lr, std::isfinite(lr) && lr >= 0, "finite and >= 0");
  lr_ = lr;
}

// The profiler enters every optimizer's step here, and only here.
void Optimizer::step() {
  profiler::Scope event(step_event_, profiler::Phase::Optimizer);
  if (event.active() && passes_over_parameters() > 0)
    for (const Variable& p : params_)
      if (p.grad().defined())
        event.add_bytes(passes_over_parameters() * p.value().numel() * static_cast<int64_t>(itemsize(p.dtype())));
  update();
  ++steps_;
}

void Optimizer::zero_grad() {
  const profiler::Scope event("zero_grad", profiler::Phase::Optimizer);
  for (Variable& p : params_) p.zero_grad();
}

std::vector<Tensor> zeros_like_each(const std::vector<Variable>& params) {
  std::vector<Tensor> out;
  out.reserve(params.size());
  for (const Variable& p : params) out.push_back(zeros(p.shape(), p.dtype()));
  return out;
}

StateDict Optimizer::state() const {
  StateDict out;
  out[name_ + ".step"] = from_vector(std::vector<int64_t>{steps_}, Shape{});
  for (const auto& [name, tensor] : buffers()) out[name_ + "." + name] = tensor;
  return out;
}

void Optimizer::load_state(const StateDict& state) {
  const std::string step_name = name_ + ".step";
  std::vector<std::pair<std::string, Tensor>> expected{{step_name, Tensor()}};
  for (const auto& [name, tensor] : buffers()) expected.emplace_back(name_ + "." + name, tensor);

  // Check everything first and list every difference, so a wrong file changes nothing.
  std::string problems;
  std::set<std::string> known;
  for (const auto& [name, live] : expected) {
    known.insert(name);
    const auto found = state.find(name);
    if (found == state.end()) {
      problems += message("\n  missing: ", name);
      continue;
    }
    const Tensor& t = found->second;
    const Shape want_shape = live.defined() ? live.shape() : Shape{};
    const DType want_dtype = live.defined() ? live.dtype() : DType::Int64;
    if (!t.defined() || t.shape() != want_shape || t.dtype() != want_dtype)
      problems +=
          message("\n  ", name, ": expected ", want_shape, " ", want_dtype, ", got ",
                  t.defined() ? to_string(t.shape()) + " " + std::string(gradformer::name(t.dtype())) : "undefined");
    else if (!live.defined() && t.item() < 0)
      problems += message("\n  ", name, ": a step count cannot be negative, got ", t.item());
  }
  for (const auto& [name, t] : state)
    if (!known.count(name)) problems += message("\n  unexpected: ", name);
  if (!problems.empty()) throw ValueError(message(name_, ".load_state: the state does not match:", problems));

  steps_ = static_cast<int64_t>(state.at(step_name).item());
  for (auto& [name, live] : expected)
    if (live.defined()) live.copy_(state.at(name));
}

}  // namespace gradformer
