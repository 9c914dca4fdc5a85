#include "autograd/variable.h"

#include "autograd/engine.h"
#include "autograd/node.h"
#include "tensor/print.h"

namespace gradformer {

namespace {
thread_local bool grad_mode = true;
}  // namespace

bool grad_enabled() { return grad_mode; }
NoGradGuard::NoGradGuard() : previous_(grad_mode) { grad_mode = false; }
NoGradGuard::~NoGradGuard() { grad_mode = previous_; }

Variable::Variable(Tensor value, bool requires_grad) {
  if (!value.defined()) throw ValueError("Variable: the value is an undefined tensor");
  if (requires_grad && !is_floating(value.dtype()))
    throw DTypeError(
        message("Variable: only floating tensors can require grad, got ", value.dtype(), " of shape ", value.shape()));
  impl_ = std::make_shared<VariableImpl>();
  impl_->value = std::move(value);
  impl_->requires_grad = requires_grad;
}

namespace {

// One zero of the dtype, shared by every edge of it (never written): an edge costs no allocation
// beyond its VariableImpl.
const Tensor& shared_zero(DType dtype) {
  static const Tensor f32 = scalar(0.0, DType::Float32), f64 = scalar(0.0, DType::Float64);
  thread_local Tensor other;
  if (dtype == DType::Float32) return f32;
  if (dtype == DType::Float64) return f64;
  return other = scalar(0.0, dtype);
}

}  // namespace

Variable Variable::edge_only() const {
  const VariableImpl& v = checked("edge_only");
  auto edge = std::make_shared<VariableImpl>();
  edge->value = shared_zero(v.value.dtype()).expand(v.value.shape());  // stride 0: one number for any shape
  edge->grad_fn = v.grad_fn, edge->requires_grad = v.requires_grad, edge->name = v.name;
  edge->value_released = true, edge->released_from = impl_;
  return from_impl(std::move(edge));
}

Variable Variable::from_impl(std::shared_ptr<VariableImpl> impl) {
  Variable v;
  v.impl_ = std::move(impl);
  return v;
}

VariableImpl& Variable::checked(const char* op) const {
  if (!impl_) throw ValueError(message(op, ": the variable is undefined (default-constructed)"));
  return *impl_;
}

const Tensor& Variable::value() const { return checked("value").value; }

void Variable::set_value(const Tensor& value) {
  VariableImpl& v = checked("set_value");
  if (v.grad_fn)
    throw GraphError(
        message("set_value: '", v.grad_fn->op(), "' made this variable; only a leaf's value can be replaced"));
  if (value.shape() != v.value.shape())
    throw ShapeError(message("set_value: new shape ", value.shape(), " differs from ", v.value.shape()));
  v.value = value;
}

bool Variable::requires_grad() const { return impl_ && impl_->requires_grad; }

Variable& Variable::set_requires_grad(bool requires_grad) {
  VariableImpl& v = checked("set_requires_grad");
  if (v.grad_fn)
    throw GraphError(message("set_requires_grad: '", v.grad_fn->op(),
                             "' made this variable; only leaves can change requires_grad (use detach())"));
  if (requires_grad && !is_floating(v.value.dtype()))
    throw DTypeError(message("set_requires_grad: only floating tensors can require grad, got ", v.value.dtype()));
  v.requires_grad = requires_grad;
  return *this;
}

bool Variable::is_leaf() const { return checked("is_leaf").grad_fn == nullptr; }

const Tensor& Variable::grad() const { return checked("grad").grad; }

void Variable::set_grad(const Tensor& grad) {
  VariableImpl& v = checked("set_grad");
  if (grad.defined() && (grad.shape() != v.value.shape() || grad.dtype() != v.value.dtype()))
    throw ShapeError(message("set_grad: gradient ", grad.shape(), " ", grad.dtype(), " does not match the value's ",
                             v.value.shape(), " ", v.value.dtype()));
  v.grad = grad;
}

void Variable::zero_grad() { checked("zero_grad").grad = Tensor(); }

void Variable::retain_grad() {
  VariableImpl& v = checked("retain_grad");
  if (v.grad_fn) v.grad_fn->retained_ = impl_;
}

// Checks what the engine cannot (a one-element output, a matching upstream gradient), then runs it.
void Variable::backward(bool retain_graph) const {
  VariableImpl& v = checked("backward");
  if (v.value.numel() != 1)
    throw ShapeError(message("backward: the output has shape ", v.value.shape(),
                             "; backward() without an upstream gradient needs a one-element output"));
  Tensor seed = Tensor::empty(v.value.shape(), v.value.dtype());  // dL/dL = 1
  dispatch_floating(seed.dtype(), "backward", [&]<class T>() { *seed.data<T>() = T(1); });
  backward(seed, retain_graph);
}

void Variable::backward(const Tensor& grad_output, bool retain_graph) const {
  VariableImpl& v = checked("backward");
  if (!v.requires_grad)
    throw GraphError(message("backward: this variable (shape ", v.value.shape(),
                             ") does not require grad: no input of the ops that made it requires grad"));
  if (!grad_output.defined() || grad_output.shape() != v.value.shape())
    throw ShapeError(message("backward: the upstream gradient has shape ",
                             grad_output.defined() ? to_string(grad_output.shape()) : std::string("(undefined)"),
                             ", the output has shape ", v.value.shape()));
  if (grad_output.dtype() != v.value.dtype())
    throw DTypeError(
        message("backward: the upstream gradient is ", grad_output.dtype(), ", the output is ", v.value.dtype()));
  Engine::run(v, grad_output, retain_graph);
}

Variable Variable::detach() const { return Variable(checked("detach").value); }

const std::shared_ptr<Node>& Variable::grad_fn() const { return checked("grad_fn").grad_fn; }

Variable& Variable::set_name(std::string name) {
  checked("set_name").name = std::move(name);
  return *this;
}
const std::string& Variable::name() const { return checked("name").name; }

std::ostream& operator<<(std::ostream& out, const Variable& v) {
  if (!v.defined()) return out << "variable(undefined)";
  out << "variable(" << v.value();
  if (v.grad_fn()) return out << ", grad_fn=" << v.grad_fn()->op() << ")";
  return out << (v.requires_grad() ? ", leaf, requires_grad)" : ", constant)");
}

namespace detail {
Variable make_result(Tensor value, std::shared_ptr<Node> node) {
  auto impl = std::make_shared<VariableImpl>();
  impl->value = std::move(value);
  impl->grad_fn = std::move(node);
  impl->requires_grad = true;
  return Variable::from_impl(std::move(impl));
}

void profile_forward(const char* op, const Variable& result, std::span<const Variable> inputs) {
  auto bytes = [](const Tensor& t) { return t.numel() * static_cast<int64_t>(itemsize(t.dtype())); };
  int64_t total = bytes(result.value());
  for (const Variable& in : inputs)
    if (in.defined()) total += bytes(in.value());
  profiler::op_recorded(op, total);
}
}  // namespace detail

}  // namespace gradformer
