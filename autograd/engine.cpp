// The backward engine: the chain rule applied to the whole graph, in topological order.
//
//   1. Order: list the nodes so that every node comes after all the nodes that use its output.
//      A depth-first search gives that order (reversed post-order), done with an explicit stack:
//      micrograd's recursive build_topo would need one C++ stack frame per op, and a 100,000-op
//      chain overflows the stack.
//   2. Propagate: seed dL/d(root), then visit the nodes in that order. When a node is visited,
//      every op that used its output has already added its contribution, so its gradient is
//      complete; its backward function turns it into gradients for its inputs, which are added
//      (+=, never =) into their slots: a value used twice receives both contributions.
//   3. Free: unless retain_graph, each node drops its inputs and saved tensors once it is done.
#include "autograd/engine.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "autograd/node.h"
#include "tensor/elementwise.h"
#include "tensor/kernels/parallel.h"
#include "tensor/reduce.h"
#include "tensor/strided_loop.h"
#include "tensor/support/profiler.h"

namespace gradformer {

namespace {

// Whether a gradient of shape `from` can be summed down to `to` (the reverse of broadcasting `to` up).
bool reduces_to(const Shape& from, const Shape& to) {
  if (to.rank() > from.rank()) return false;
  for (int d = 1; d <= to.rank(); ++d)
    if (to[to.rank() - d] != 1 && to[to.rank() - d] != from[from.rank() - d]) return false;
  return true;
}

// A tensor nobody else holds, laid out densely: safe to add into in place.
bool owned(const Tensor& t) { return t.storage().use_count() == 1 && t.is_contiguous(); }

// Elementwise over two dense tensors of one shape, in parallel when large. Gradients are added
// up many times per step, so this skips the general strided machinery (and its cost on tiny tensors).
template <class F>
bool dense_loop(const Tensor& dst, const Tensor& src, F fn) {
  if (!src.is_contiguous() || src.dtype() != dst.dtype() || src.shape() != dst.shape()) return false;
  dispatch_floating(dst.dtype(), "accumulate", [&]<class T>() {
    T* d = dst.data<T>();
    const T* s = src.data<T>();
    const int64_t n = dst.numel();
    if (n <= grain_for(1)) {
      for (int64_t i = 0; i < n; ++i) d[i] = fn(d[i], s[i]);
      return;
    }
    parallel_for(0, n, grain_for(1), [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) d[i] = fn(d[i], s[i]);
    });
  });
  return true;
}

// A fresh dense copy of g.
Tensor dense_copy(const Tensor& g) {
  Tensor copy = Tensor::empty(g.shape(), g.dtype());
  if (!dense_loop(copy, g, [](auto, auto s) { return s; })) copy.copy_(g);
  return copy;
}

// slot += g, without ever writing into a tensor someone else can see (g may be another input's
// gradient, a saved tensor, or the user's upstream gradient). A leaf's gradient is made a tensor of
// its own on first arrival, so the user (or an optimizer) may change it in place; an op's pending
// gradient may stay shared, since the engine adds into it in place only when it owns it.
void accumulate(Tensor& slot, Tensor g, bool leaf) {
  if (!slot.defined())
    slot = (!leaf || owned(g)) ? std::move(g) : dense_copy(g);
  else if (!owned(slot))
    slot = add(slot, g);
  else if (!dense_loop(slot, g, [](auto d, auto s) { return d + s; }))
    slot.add_(g);  // g is a strided view: the general kernel
}

// slot += g on slot.narrow(part): a gradient that covers only part of its input (narrow's). The slot
// becomes a dense tensor of the input's shape, zero outside the parts added so far.
// Like accumulate, it writes in place only into a tensor nobody else holds.
void accumulate_part(Tensor& slot, const Shape& shape, const GradPart& part, const Tensor& g) {
  if (!slot.defined()) {  // g written into its part, zeros around it: each element written once
    slot = Tensor::empty(shape, g.dtype());
    const int64_t size = shape[part.dim], end = part.start + part.length;
    if (part.start > 0) slot.narrow(part.dim, 0, part.start).fill_(0.0);
    if (end < size) slot.narrow(part.dim, end, size - end).fill_(0.0);
    slot.narrow(part.dim, part.start, part.length).copy_(g);
    return;
  }
  if (!owned(slot)) slot = dense_copy(slot);
  slot.narrow(part.dim, part.start, part.length).add_(g);
}

// What a backward function reads and writes, each once: dL/d(output), its inputs' values and
// the gradients it gives them (the profiler's bytes for the node).
int64_t backward_bytes(const Tensor& g, std::span<const Variable> inputs, std::span<const Tensor> grads) {
  auto bytes = [](const Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(itemsize(t.dtype())) : 0; };
  int64_t total = bytes(g);
  for (const Variable& in : inputs) total += in.defined() ? bytes(in.value()) : 0;
  for (const Tensor& grad : grads) total += bytes(grad);
  return total;
}

std::string freed_message(const Node& node) {
  return message("backward: the graph through '", node.op(), "' (output ", node.shape(),
                 ") was freed by an earlier backward(); pass retain_graph = true to the first backward "
                 "to run backward through it again");
}

}  // namespace

// Nodes reachable from root through inputs that require grad, each before every node it uses.
std::vector<std::shared_ptr<Node>> Engine::order(const std::shared_ptr<Node>& root) {
  static std::atomic<uint64_t> next_stamp{1};
  const uint64_t stamp = next_stamp.fetch_add(1, std::memory_order_relaxed);  // "seen in this run"
  std::vector<std::shared_ptr<Node>> post_order;
  // (node, next input to look at). The graph keeps every node on it alive; the buffer is reused
  // from one backward to the next on this thread.
  thread_local std::vector<std::pair<const std::shared_ptr<Node>*, size_t>> stack;
  stack.clear();
  auto push = [&](const std::shared_ptr<Node>& node) {
    if (node->freed_) throw GraphError(freed_message(*node));
    node->visited_ = stamp;
    stack.emplace_back(&node, 0);
  };
  push(root);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    const std::span<const Variable> inputs = (*node)->inputs();
    if (next == inputs.size()) {  // all inputs done: emit, like returning from a recursive call
      post_order.push_back(*node);
      stack.pop_back();
      continue;
    }
    const Variable& in = inputs[next++];
    if (!in.requires_grad()) continue;
    const std::shared_ptr<Node>& child = in.impl()->grad_fn;
    if (child && child->visited_ != stamp) push(child);  // like a recursive call on the child
  }
  // Post-order lists every node after its inputs; backward needs the reverse.
  std::reverse(post_order.begin(), post_order.end());
  return post_order;
}

std::vector<std::shared_ptr<Node>> topological_order(const Variable& root) {
  if (!root.defined() || !root.grad_fn()) return {};
  return Engine::order(root.grad_fn());
}

void Engine::run(VariableImpl& root, Tensor seed, bool retain_graph) {
  if (!root.grad_fn) {  // backward on a leaf: dL/dL = seed
    accumulate(root.grad, std::move(seed), /*leaf=*/true);
    return;
  }
  std::vector<std::shared_ptr<Node>> nodes = [&] {
    const profiler::Scope sorting("backward: topological order", profiler::Phase::Backward);
    return order(root.grad_fn);
  }();
  root.grad_fn->grad_ = std::move(seed);
  std::array<Tensor, 3> inline_slots;  // most ops have at most 3 inputs: no allocation
  std::array<GradPart, 3> inline_parts;
  std::vector<Tensor> spilled_slots;
  std::vector<GradPart> spilled_parts;
  try {
    for (const std::shared_ptr<Node>& node : nodes) {
      // The node's event: its backward function, adding its gradients into its inputs', freeing it.
      profiler::Scope event(node->op(), profiler::Phase::Backward);
      Tensor g = std::move(node->grad_);
      if (!g.defined()) {  // every path to this node carried a zero gradient
        if (!retain_graph) node->free_graph();
        continue;
      }
      if (auto out = node->retained_.lock()) accumulate(out->grad, g, /*leaf=*/true);
      const std::span<const Variable> inputs = node->inputs();
      const bool spill = inputs.size() > inline_slots.size();
      if (spill) spilled_slots.assign(inputs.size(), Tensor()), spilled_parts.assign(inputs.size(), GradPart());
      const std::span<Tensor> slots =
          spill ? std::span<Tensor>(spilled_slots) : std::span<Tensor>(inline_slots.data(), inputs.size());
      const std::span<GradPart> parts =
          spill ? std::span<GradPart>(spilled_parts) : std::span<GradPart>(inline_parts.data(), inputs.size());
      Grads grads(inputs, slots, parts);
      node->apply(g, grads);
      if (event.active()) event.add_bytes(backward_bytes(g, inputs, slots));
      g = Tensor();  // a gradient that is a view of g (transpose's) is then the only holder: moved on, not copied
      for (size_t i = 0; i < slots.size(); ++i) {
        const Variable& in = inputs[i];
        const GradPart part = std::exchange(parts[i], GradPart());  // leaves the whole-input default
        if (!slots[i].defined()) continue;
        if (!in.requires_grad()) {  // computed although not wanted: drop it, the slot is reused
          slots[i] = Tensor();
          continue;
        }
        Tensor gi = std::move(slots[i]);  // leaves the slot undefined for the next node
        const Tensor& value = in.value();
        if (gi.dtype() != value.dtype())
          throw DTypeError(message("backward of '", node->op(), "': the gradient of input ", i, " is ", gi.dtype(),
                                   ", the input is ", value.dtype()));
        VariableImpl& target = *in.impl();
        if (part.dim >= 0) {  // a gradient of part of the input (Grads::set_part)
          const Shape part_shape = value.narrow(part.dim, part.start, part.length).shape();
          if (gi.shape() != part_shape)
            throw ShapeError(message("backward of '", node->op(), "': the gradient of input ", i, "'s part has shape ",
                                     gi.shape(), ", the part has shape ", part_shape));
          if (anomaly_enabled()) check_backward_finite(node->op(), i, gi);
          if (target.grad_fn)
            accumulate_part(target.grad_fn->grad_, value.shape(), part, gi);
          else
            accumulate_part(target.grad, value.shape(), part, gi);
          continue;
        }
        if (gi.shape() != value.shape()) {
          // The one place broadcasting is undone: a [B, T, C] gradient of a [C] bias is summed to [C].
          if (!reduces_to(gi.shape(), value.shape()))
            throw ShapeError(message("backward of '", node->op(), "': the gradient of input ", i, " has shape ",
                                     gi.shape(), ", which does not reduce to the input's shape ", value.shape()));
          gi = sum_to(gi, value.shape());
        }
        if (anomaly_enabled()) check_backward_finite(node->op(), i, gi);
        if (target.grad_fn)
          accumulate(target.grad_fn->grad_, std::move(gi), /*leaf=*/false);
        else
          accumulate(target.grad, std::move(gi), /*leaf=*/true);
      }
      if (!retain_graph) node->free_graph();
    }
  } catch (...) {
    for (const std::shared_ptr<Node>& node : nodes) node->grad_ = Tensor();  // no half-gathered gradients left behind
    throw;
  }
}

}  // namespace gradformer
