// Node's destructor: the graph behind a node is unlinked without recursion.
#include "autograd/node.h"

namespace gradformer {

const Tensor& Grads::input(size_t i) const {
  const Variable& in = inputs_[i];
  if (in.defined() && in.impl()->value_released)
    throw GraphError(message("backward read input ", i, " (", in.value().shape(),
                             "), whose value its op said it would not read (Reads): the node did not keep it"));
  return in.value();
}

void Node::release_unread(Reads reads) {
  const std::span<Variable> inputs = inputs_span();
  for (size_t i = 0; i < inputs.size(); ++i) {
    Variable& in = inputs[i];
    if (!in.defined() || (in.is_leaf() && in.requires_grad())) continue;  // its gradient lands on it
    const bool read = reads == Reads::Other && inputs.size() == 2 && inputs[1 - i].requires_grad();
    if (!read) in = in.edge_only();
  }
}

// Destroying the output of a long chain would destroy node 1, whose input owns node 2, whose input
// owns node 3, ... each destructor nested in the previous one. Instead, take over every node that
// only this chain owns and destroy them one at a time from a flat list.
Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  auto adopt_inputs = [&pending](Node& node) {
    for (const Variable& in : node.inputs_span()) {
      const std::shared_ptr<VariableImpl>& impl = in.impl();
      if (impl && impl.use_count() == 1 && impl->grad_fn && impl->grad_fn.use_count() == 1)
        pending.push_back(std::move(impl->grad_fn));
    }
    node.release_inputs();
  };
  adopt_inputs(*this);
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    adopt_inputs(*node);
    // node is destroyed here, with no inputs left: no recursion.
  }
}

}  // namespace gradformer
