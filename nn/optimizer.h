// Optimizer: what SGD and Adam share. It holds the parameters (shared handles, so it updates the
// model's own tensors in place), forgets their gradients, counts steps, lets a schedule change the
// learning rate, and saves and restores its state, so a resumed run continues bit for bit.
//
//   Adam opt(model.parameters(), {.lr = 1e-3, .beta2 = 0.98, .eps = 1e-9});
//   opt.zero_grad();  loss.backward();  opt.step();
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"
#include "nn/module.h"

namespace gradformer {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;  // the state tensors are per optimizer
  Optimizer& operator=(const Optimizer&) = delete;

  /// Forgets every parameter's gradient (call before each backward: gradients accumulate).
  void zero_grad();
  /// Updates every parameter that has a gradient; parameters without one are left alone: the
  /// optimizer's own rule, update(), timed by the profiler as one event ("Adam.step").
  void step();

  double lr() const { return lr_; }
  /// For learning-rate schedules. ValueError unless lr is finite and >= 0.
  void set_lr(double lr);

  const std::vector<Variable>& parameters() const { return params_; }
  /// How many times step() has run.
  int64_t step_count() const { return steps_; }

  /// Everything a later step depends on besides the parameters and the options, by name:
  /// "<name>.step" (int64 scalar) and the optimizer's buffers ("adam.m.0", ...). The buffers are
  /// shared, not copied: save them before the next step.
  StateDict state() const;
  /// Restores a state() taken from an optimizer of the same kind over parameters of the same shapes.
  /// Names, shapes and dtypes must match exactly; otherwise a ValueError lists every difference and
  /// nothing changes.
  void load_state(const StateDict& state);

 protected:
  /// `name` ("sgd", "adam") prefixes the state's names and the error messages. ValueError for an
  /// empty list, an undefined, non-floating or repeated parameter, or a bad learning rate.
  /// `step_event` ("Adam.step") names step() in the profiler's trace: a literal, since a trace keeps
  /// the pointer and may outlive the optimizer.
  Optimizer(std::vector<Variable> params, double lr, std::string name, const char* step_event);
  /// One step's arithmetic, each parameter with a gradient updated by the optimizer's rule.
  virtual void update() = 0;
  /// How many times update() reads or writes each parameter's bytes, for the profiler's bytes moved
  /// (0: not counted).
  virtual int passes_over_parameters() const = 0;

  /// The optimizer's tensors (momentum buffers, moments, ...), by name without the prefix. They are
  /// the live tensors: load_state copies into them.
  virtual std::vector<std::pair<std::string, Tensor>> buffers() const = 0;

  /// Calls update(index, value, grad) for each parameter with a gradient, with contiguous value and
  /// gradient tensors of the parameter's dtype (a non-contiguous value is updated through a copy).
  template <class F>
  void for_each_with_grad(F&& update);

  std::vector<Variable> params_;
  double lr_;
  int64_t steps_ = 0;
  std::string name_;
  const char* step_event_;  // the profiler's name for step(): "Adam.step", a literal
};

/// Zeros of each parameter's shape and dtype: the initial moments and momentum buffers.
std::vector<Tensor> zeros_like_each(const std::vector<Variable>& params);

/// ValueError "Adam: beta1 must be in [0, 1), got 1" unless `valid`.
void check_option(const std::string& op, const char* what, double value, bool valid, const char* expected);

// ---- template definitions ------------------------------------------------------------------
template <class F>
void Optimizer::for_each_with_grad(F&& update) {
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& grad = params_[i].grad();
    if (!grad.defined()) continue;
    const Tensor& value = params_[i].value();
    Tensor work = value.contiguous();
    update(i, work, grad.dtype() == value.dtype() ? grad.contiguous() : grad.to(value.dtype()));
    if (!work.shares_storage_with(value)) Tensor(value).copy_(work);
  }
}

}  // namespace gradformer
