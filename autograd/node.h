// Node: one recorded op in the graph. It holds the op's inputs (the edges to earlier nodes) and a
// backward function that turns dL/d(output) into dL/d(each input): the chain rule, one op at a time.
//
// An op is written forward and backward side by side:
//
//   Variable mul(const Variable& a, const Variable& b) {
//     // d(a*b)/da = b, d(a*b)/db = a
//     return record("mul", a.value() * b.value(), {a, b}, [](const Tensor& g, Grads& dx) {
//       if (dx.wanted(0)) dx[0] = g * dx.input(1);
//       if (dx.wanted(1)) dx[1] = g * dx.input(0);
//     });
//   }
//
// The backward function may capture tensors it needs (the output of exp, the mask of dropout), but
// never the output Variable: the output owns the node, so that would be a reference cycle.
// A gradient whose shape is a broadcast of its input's shape is summed back down by the engine
// (sum_to), in one place for every op.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "autograd/anomaly.h"
#include "autograd/variable.h"
#include "tensor/support/profiler.h"

namespace gradformer {

/// Where a gradient slot's tensor goes in its input: all of it (dim < 0), or the part
/// input.narrow(dim, start, length), the rest of the input's gradient being zero.
struct GradPart {
  int64_t dim = -1, start = 0, length = 0;
};

/// Which input values an op's backward function reads, so that the node keeps only those: All (the
/// default), None (an add, a reshape, a concat: it needs the inputs' shapes, not their values), or
/// Other (two inputs, each read only to make the other's gradient: a product, whose dL/dx needs W
/// and dL/dW needs x; with W frozen, x is not kept). An input not read is held as an edge only
/// (Variable::edge_only): its memory goes back as soon as nothing else holds it. A leaf that wants a
/// gradient is always kept (its gradient lands on it).
enum class Reads { All, None, Other };

/// What a backward function reads and writes: the inputs' values, which inputs want a gradient,
/// and a slot per input for dL/d(input).
class Grads {
 public:
  Grads(std::span<const Variable> inputs, std::span<Tensor> slots, std::span<GradPart> parts)
      : inputs_(inputs), slots_(slots), parts_(parts) {}
  size_t size() const { return slots_.size(); }
  /// Whether input i needs a gradient: skip the work when it does not.
  bool wanted(size_t i) const { return inputs_[i].requires_grad(); }
  /// Input i's value, as the forward saw it. GraphError if the op declared it would not read it (Reads).
  const Tensor& input(size_t i) const;
  /// Input i's shape, kept whether or not its value is.
  const Shape& input_shape(size_t i) const { return inputs_[i].value().shape(); }
  /// The slot for dL/d(input i); leave it undefined to mean zero.
  Tensor& operator[](size_t i) { return slots_[i]; }
  /// dL/d(input i) is g on input(i).narrow(dim, start, length) and zero elsewhere. The engine adds g
  /// into that part of the input's gradient in place, instead of into a zero-filled tensor of the
  /// input's full shape that would then be added whole (what narrow's backward needs: the three
  /// narrows of a fused q/k/v projection fill one gradient, a third each).
  void set_part(size_t i, int64_t dim, int64_t start, int64_t length, Tensor g) {
    slots_[i] = std::move(g);
    parts_[i] = GradPart{dim, start, length};
  }

 private:
  std::span<const Variable> inputs_;
  std::span<Tensor> slots_;
  std::span<GradPart> parts_;
};

class Node {
 public:
  Node(const char* op, std::span<const Variable> inputs, const Tensor& output)
      : op_(op), input_count_(inputs.size()), shape_(output.shape()), dtype_(output.dtype()) {
    if (inputs.size() > kInlineInputs)
      spilled_.assign(inputs.begin(), inputs.end());
    else
      std::copy(inputs.begin(), inputs.end(), inline_.begin());
  }
  /// Unlinks the graph behind this node iteratively, so a 100,000-op chain is not destroyed by
  /// 100,000 nested destructor calls (which would overflow the stack).
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const char* op() const { return op_; }
  /// The inputs, in the op's argument order; empty once the graph has been freed.
  std::span<const Variable> inputs() const { return inputs_span(); }
  /// The output's shape and dtype (kept for error messages and the graph export).
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  /// True after a backward without retain_graph has run through this node.
  bool freed() const { return freed_; }

  /// Runs the backward function: fills grads (one slot per input) from dL/d(output).
  virtual void apply(const Tensor& grad_output, Grads& grads) = 0;
  /// Replaces the inputs whose values the backward function does not read (`reads`) by edges
  /// (Variable::edge_only); record() calls it as the node is made.
  void release_unread(Reads reads);
  /// Drops the inputs and saved tensors: the memory of the graph goes back once backward is done.
  void free_graph() {
    release_inputs();
    free_saved();
    freed_ = true;
  }

 protected:
  virtual void free_saved() = 0;

 private:
  friend struct Engine;
  // Most ops have at most three inputs: keep them inside the node (no second allocation).
  static constexpr size_t kInlineInputs = 3;
  std::span<Variable> inputs_span() {
    return input_count_ > kInlineInputs ? std::span<Variable>(spilled_)
                                        : std::span<Variable>(inline_.data(), input_count_);
  }
  std::span<const Variable> inputs_span() const { return const_cast<Node*>(this)->inputs_span(); }
  void release_inputs() {
    for (Variable& v : inputs_span()) v = Variable();
    spilled_.clear();
    input_count_ = 0;
  }

  const char* op_;  // first, so tutorials/debug/gradformer_gdb.py finds it even without debug information
  std::array<Variable, kInlineInputs> inline_;
  std::vector<Variable> spilled_;
  size_t input_count_;
  Shape shape_;
  DType dtype_;
  bool freed_ = false;
  // Engine state during one backward: the gradient gathered so far, and a visit stamp.
  Tensor grad_;
  uint64_t visited_ = 0;
  std::weak_ptr<VariableImpl> retained_;  // set by Variable::retain_grad()
  friend class Variable;
};

/// A node whose backward function is the lambda F, stored inline (one allocation per op, no
/// std::function). std::optional so that free_graph() can release what F captured.
template <class F>
class LambdaNode final : public Node {
 public:
  LambdaNode(const char* op, std::span<const Variable> inputs, const Tensor& output, F fn)
      : Node(op, inputs, output), fn_(std::move(fn)) {}
  void apply(const Tensor& grad_output, Grads& grads) override { (*fn_)(grad_output, grads); }

 protected:
  void free_saved() override { fn_.reset(); }

 private:
  std::optional<F> fn_;
};

/// The nodes behind root in the order backward visits them: each node before the nodes that made
/// its inputs (a reversed post-order of a depth-first search). For teaching and debugging.
/// GraphError if part of the graph was freed.
std::vector<std::shared_ptr<Node>> topological_order(const Variable& root);

namespace detail {
Variable make_result(Tensor value, std::shared_ptr<Node> node);
/// The profiler's forward event for an op that has just recorded (or computed, without a graph)
/// its result: the bytes are its inputs' and its output's. Call only when profiler::enabled().
void profile_forward(const char* op, const Variable& result, std::span<const Variable> inputs);
inline Variable make_constant(Tensor value) { return Variable(std::move(value)); }
}  // namespace detail

namespace detail {
// record's body for both signatures below (output by reference: the Tensor is moved only once).
template <class F>
Variable record_op(const char* op, Tensor& output, std::span<const Variable> inputs, Reads reads, F&& backward) {
  if (anomaly_enabled()) check_forward_finite(op, output, inputs);
  bool any = false;
  if (grad_enabled())
    for (const Variable& v : inputs) any = any || (v.defined() && v.requires_grad());
  if (!any) {
    Variable result = make_constant(std::move(output));
    if (profiler::enabled()) profile_forward(op, result, inputs);
    return result;
  }
  auto node = std::make_shared<LambdaNode<std::decay_t<F>>>(op, inputs, output, std::forward<F>(backward));
  if (reads != Reads::All) node->release_unread(reads);
  Variable result = make_result(std::move(output), std::move(node));
  if (profiler::enabled()) profile_forward(op, result, inputs);
  return result;
}
}  // namespace detail

/// Wraps an op's result: when grad mode is on and any input requires grad, records a node with
/// `backward` (signature void(const Tensor& grad_output, Grads& grads)); else returns a constant.
/// In anomaly mode, a non-finite output is reported here, naming the op. When the profiler is on,
/// the op's forward event ends here, after the node is made, so making it is part of the op's time.
template <class F>
Variable record(const char* op, Tensor output, std::initializer_list<Variable> inputs, F&& backward) {
  return detail::record_op(op, output, std::span<const Variable>(inputs.begin(), inputs.size()), Reads::All,
                           std::forward<F>(backward));
}
/// As above, the node keeping only the input values `reads` says the backward reads.
template <class F>
Variable record(const char* op, Tensor output, std::initializer_list<Variable> inputs, Reads reads, F&& backward) {
  return detail::record_op(op, output, std::span<const Variable>(inputs.begin(), inputs.size()), reads,
                           std::forward<F>(backward));
}

/// As above, for ops with a variable number of inputs (concat, stack).
template <class F>
Variable record(const char* op, Tensor output, const std::vector<Variable>& inputs, Reads reads, F&& backward) {
  return detail::record_op(op, output, std::span<const Variable>(inputs), reads, std::forward<F>(backward));
}

}  // namespace gradformer
