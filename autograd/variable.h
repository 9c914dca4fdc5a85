// Variable: a Tensor plus what reverse-mode differentiation needs: an optional gradient, whether
// one is wanted (requires_grad), and the Node (the recorded op) that produced it.
//
//   Variable w(randn({3, 2}, gen), /*requires_grad=*/true);   // a leaf: made by the user
//   Variable y = matmul(x, w);                                 // a non-leaf: made by an op
//   sum(y).backward();                                         // w.grad() is now dL/dw
//
// Like Tensor, a Variable is a cheap handle: copies share the same value, gradient and history.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "tensor/support/error.h"
#include "tensor/tensor.h"

namespace gradformer {

class Node;

/// A misuse of the graph: backward through a graph freed by an earlier backward, backward on a
/// variable that does not require grad, requires_grad on a non-leaf, ...
struct GraphError : Error {
  using Error::Error;
};

/// What a Variable handle points at. Ops and the engine use it; users go through Variable.
struct VariableImpl {
  Tensor value;
  Tensor grad;                    // dL/d(value), undefined until a backward reaches it
  std::shared_ptr<Node> grad_fn;  // the op that made this value; null for a leaf
  bool requires_grad = false;
  std::string name;  // optional, shown by the graph export
  /// An edge a node keeps to an input whose value its backward does not read (Node's Reads): the
  /// same grad_fn, shape and dtype, the value a stand-in of no memory, so that the input's own
  /// memory goes back as soon as nothing else holds it.
  bool value_released = false;
  std::weak_ptr<const VariableImpl> released_from;  // the variable it is the edge to, while it lives (its name)
};

class Variable {
 public:
  /// An undefined variable (defined() is false), e.g. an absent LayerNorm bias.
  Variable() = default;
  /// A leaf holding `value`. A Tensor converts implicitly, so `x * mask_tensor` treats the tensor
  /// as a constant. requires_grad needs a floating dtype (DTypeError otherwise).
  Variable(Tensor value, bool requires_grad = false);

  // ---- the value ----------------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  const Tensor& value() const;
  /// Replaces the value (an optimizer step, loading a checkpoint); GraphError on a non-leaf,
  /// ShapeError if the shape changes.
  void set_value(const Tensor& value);
  const Shape& shape() const { return value().shape(); }
  DType dtype() const { return value().dtype(); }
  int dim() const { return value().dim(); }
  int64_t size(int64_t dim) const { return value().size(dim); }
  int64_t numel() const { return value().numel(); }
  double item() const { return value().item(); }

  // ---- gradients ------------------------------------------------------------------------------
  bool requires_grad() const;
  /// Turns gradient tracking on or off for a leaf; GraphError on a non-leaf (its flag follows its inputs).
  Variable& set_requires_grad(bool requires_grad = true);
  /// True for variables made by the user rather than by a recorded op.
  bool is_leaf() const;
  /// dL/d(this), summed over every backward since the last zero_grad(); undefined if none reached it.
  /// Only leaves keep their gradient, unless retain_grad() was called.
  const Tensor& grad() const;
  /// Replaces the gradient (gradient clipping, tests); its shape must match the value's.
  void set_grad(const Tensor& grad);
  /// Forgets the gradient, so the next backward starts from zero.
  void zero_grad();
  /// Asks a non-leaf to keep its gradient too (for teaching and debugging).
  void retain_grad();

  /// The same value (shared storage) with no history: gradients stop here.
  Variable detach() const;

  /// Back-propagates from this one-element variable (dL/dL = 1) into every leaf that requires grad.
  /// The graph is freed afterwards unless retain_graph is true; a second backward through a freed
  /// graph is a GraphError.
  void backward(bool retain_graph = false) const;
  /// As above, with an explicit upstream gradient dL/d(this) of this variable's shape and dtype.
  void backward(const Tensor& grad_output, bool retain_graph = false) const;

  // ---- the graph --------------------------------------------------------------------------------
  /// The op that made this variable (null for a leaf).
  const std::shared_ptr<Node>& grad_fn() const;
  /// A name shown by the graph export ("a", "loss", ...).
  Variable& set_name(std::string name);
  const std::string& name() const;

  /// For ops and the engine.
  const std::shared_ptr<VariableImpl>& impl() const { return impl_; }
  /// The edge to this variable without its value (VariableImpl::value_released): its grad_fn,
  /// requires_grad, name, shape and dtype, the value a zero broadcast to the shape (no memory).
  Variable edge_only() const;
  static Variable from_impl(std::shared_ptr<VariableImpl> impl);

 private:
  VariableImpl& checked(const char* op) const;
  std::shared_ptr<VariableImpl> impl_;
};

/// variable(tensor([...], shape=[2], dtype=float32), grad_fn=mul) or (..., leaf, requires_grad)
std::ostream& operator<<(std::ostream& out, const Variable& v);

// ---- grad mode -----------------------------------------------------------------------------

/// Whether ops record the graph on this thread (true unless a NoGradGuard is alive).
bool grad_enabled();

/// While alive, ops on this thread record nothing: evaluation, decoding, optimizer updates.
///   { NoGradGuard no_grad; auto logits = model.forward(src); }
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace gradformer
