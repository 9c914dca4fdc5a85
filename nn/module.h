// Module: a layer or a model, holding named parameters and named sub-modules, as PyTorch's
// nn.Module does. Names compose into dotted paths, "encoder.layers.0.self_attn.in_proj_weight",
// which are also the checkpoint's tensor names.
//
//   class Linear : public Module {
//     Linear(...) { weight = register_parameter("weight", ...); }
//   };
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/variable.h"

namespace gradformer {

/// Tensors by dotted name: what state_dict() returns and load_state_dict() takes.
using StateDict = std::map<std::string, Tensor>;

/// What one parameter must be, without its values: enough to check a file of tensors against a
/// model before the model is built (a configuration gives these without allocating anything).
struct ParameterSpec {
  std::string name;  // dotted, as named_parameters() gives it
  Shape shape;
  DType dtype = DType::Float32;
};

/// How `state` fails to fit the parameters `expected`: one line per problem, each starting "\n  ",
///   missing: NAME [shape]
///   mismatched: NAME is [shape] dtype <expected_where>, [shape] dtype <state_where>
///   unexpected: NAME [shape]
/// the first 10 in `expected`'s order (then the unexpected ones), then "... and N more"; "" when
/// every name, shape and dtype agrees. load_state_dict's message, and a checkpoint reader's.
std::string state_mismatches(const std::vector<ParameterSpec>& expected, const StateDict& state,
                             const std::string& expected_where, const std::string& state_where);
/// The same against tensors described only (a file's header, before its tensors are read).
std::string state_mismatches(const std::vector<ParameterSpec>& expected, const std::vector<ParameterSpec>& state,
                             const std::string& expected_where, const std::string& state_where);

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;  // parameters are shared handles: a copy would alias them
  Module& operator=(const Module&) = delete;

  /// Every parameter, this module's first, then each sub-module's, in registration order.
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  std::vector<Variable> parameters() const;
  /// Total number of scalars in all parameters.
  int64_t parameter_count() const;
  /// Every parameter's name, shape and dtype, in named_parameters() order.
  std::vector<ParameterSpec> parameter_specs() const;

  /// Training mode (dropout active) or evaluation mode, for this module and every sub-module.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  /// Forgets every parameter's gradient.
  void zero_grad();

  /// Every parameter's value by dotted name (the tensors are shared, not copied).
  StateDict state_dict() const;
  /// Copies values into the existing parameters (so optimizers holding them stay valid).
  /// Names and shapes must match exactly; otherwise a ShapeError (or ValueError for names) lists
  /// every missing, unexpected and mis-shaped entry, and nothing is changed.
  void load_state_dict(const StateDict& state);

 protected:
  /// Registers a parameter (requires_grad) under `name` and returns its handle.
  Variable register_parameter(const std::string& name, const Tensor& value);
  /// Registers a sub-module under `name`; its parameters appear as "name.<their names>".
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    check_new_name(name);
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void check_new_name(const std::string& name) const;
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Variable>>& out) const;

  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

/// Eval mode (dropout off) for as long as it lives, the graph still recorded (to take gradients of an
/// eval-mode forward pass); the module's previous mode comes back when it goes out of scope, even by
/// an exception.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(Module& module) : module_(module), was_training_(module.is_training()) { module_.eval(); }
  ~EvalModeGuard() { module_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  Module& module_;
  bool was_training_;
};

/// Inference for as long as it lives: the module in eval mode (dropout off) and no graph recorded;
/// the module's previous mode comes back when it goes out of scope, even by an exception.
///   { InferenceGuard inference(model); auto logits = model.forward(...); }
class InferenceGuard {
 public:
  explicit InferenceGuard(Module& module) : eval_(module) {}

 private:
  EvalModeGuard eval_;
  NoGradGuard no_grad_;
};

/// A numbered list of sub-modules, named "0", "1", ... (as torch.nn.ModuleList).
template <class M>
class ModuleList : public Module {
 public:
  void push_back(std::shared_ptr<M> module) {
    items_.push_back(register_module(std::to_string(items_.size()), std::move(module)));
  }
  size_t size() const { return items_.size(); }
  M& operator[](size_t i) const { return *items_.at(i); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<std::shared_ptr<M>> items_;
};

}  // namespace gradformer
