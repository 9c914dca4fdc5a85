#include "nn/module.h"

#include <map>
#include <set>
#include <sstream>

namespace gradformer {

void Module::check_new_name(const std::string& name) const {
  if (name.empty() || name.find('.') != std::string::npos)
    throw ValueError(message("register: invalid name '", name, "' (must be non-empty, without dots)"));
  for (const auto& [n, _] : parameters_)
    if (n == name) throw ValueError(message("register: the name '", name, "' is already taken"));
  for (const auto& [n, _] : children_)
    if (n == name) throw ValueError(message("register: the name '", name, "' is already taken"));
}

Variable Module::register_parameter(const std::string& name, const Tensor& value) {
  check_new_name(name);
  Variable p(value, /*requires_grad=*/true);
  p.set_name(name);
  parameters_.emplace_back(name, p);
  return p;
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Variable>>& out) const {
  for (const auto& [name, p] : parameters_) out.emplace_back(prefix + name, p);
  for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Variable>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Variable>> out;
  collect("", out);
  return out;
}

std::vector<Variable> Module::parameters() const {
  std::vector<Variable> out;
  for (auto& [_, p] : named_parameters()) out.push_back(p);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (const Variable& p : parameters()) n += p.numel();
  return n;
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, child] : children_) child->train(on);
}

void Module::zero_grad() {
  for (Variable& p : parameters()) p.zero_grad();
}

StateDict Module::state_dict() const {
  StateDict state;
  for (const auto& [name, p] : named_parameters()) state.emplace(name, p.value());
  return state;
}

std::vector<ParameterSpec> Module::parameter_specs() const {
  std::vector<ParameterSpec> specs;
  for (const auto& [name, p] : named_parameters()) specs.push_back({name, p.shape(), p.dtype()});
  return specs;
}

std::string state_mismatches(const std::vector<ParameterSpec>& expected, const StateDict& state,
                             const std::string& expected_where, const std::string& state_where) {
  std::vector<ParameterSpec> described;
  for (const auto& [name, t] : state) described.push_back({name, t.shape(), t.dtype()});
  return state_mismatches(expected, described, expected_where, state_where);
}

std::string state_mismatches(const std::vector<ParameterSpec>& expected, const std::vector<ParameterSpec>& state,
                             const std::string& expected_where, const std::string& state_where) {
  // The first few problems are enough to see what went wrong; a model of thousands of layers
  // against the wrong state would otherwise make a message of megabytes.
  constexpr int64_t kShown = 10;
  std::ostringstream problems;
  int64_t count = 0;
  auto problem = [&](auto&&... parts) {
    if (count++ < kShown) ((problems << "\n  ") << ... << parts);
  };
  std::set<std::string> known;
  std::map<std::string, const ParameterSpec*> found;
  for (const ParameterSpec& t : state) found.emplace(t.name, &t);
  for (const ParameterSpec& p : expected) {
    known.insert(p.name);
    const auto it = found.find(p.name);
    if (it == found.end()) {
      problem("missing: ", p.name, " ", p.shape);
    } else if (it->second->shape != p.shape || it->second->dtype != p.dtype) {
      problem("mismatched: ", p.name, " is ", p.shape, " ", p.dtype, " ", expected_where, ", ", it->second->shape, " ",
              it->second->dtype, " ", state_where);
    }
  }
  for (const auto& [name, t] : found)
    if (!known.count(name)) problem("unexpected: ", name, " ", t->shape);
  if (count > kShown) problems << "\n  ... and " << count - kShown << " more";
  return problems.str();
}

void Module::load_state_dict(const StateDict& state) {
  const std::string problems = state_mismatches(parameter_specs(), state, "in the model", "in the state");
  if (!problems.empty()) throw ShapeError(message("load_state_dict: the state does not fit the model:", problems));
  for (const auto& [name, p] : named_parameters()) {
    Tensor value = p.value();  // a handle to the parameter's storage
    value.copy_(state.at(name));
  }
}

}  // namespace gradformer
