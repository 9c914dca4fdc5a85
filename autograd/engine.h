// The backward engine as the rest of autograd calls it (not included by autograd/all.h: users call
// Variable::backward, which checks its arguments and hands over to Engine::run).
#pragma once

#include <memory>
#include <vector>

#include "autograd/variable.h"

namespace gradformer {

struct Engine {
  /// Back-propagates seed = dL/d(root) (root's shape and dtype, already checked) through the graph
  /// behind root, adding into the gradients of the leaves; frees the graph unless retain_graph.
  static void run(VariableImpl& root, Tensor seed, bool retain_graph);
  /// The nodes reachable from root, each before every node it uses. GraphError if part is freed.
  static std::vector<std::shared_ptr<Node>> order(const std::shared_ptr<Node>& root);
};

}  // namespace gradformer
