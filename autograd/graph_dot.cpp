#include "autograd/graph_dot.h"

#include <sstream>
#include <unordered_map>
#include <vector>

#include "autograd/node.h"

namespace gradformer {

std::string to_dot(const Variable& root) {
  if (!root.defined()) throw ValueError("to_dot: the variable is undefined");
  std::ostringstream out;
  out << "digraph autograd {\n  rankdir=LR;\n  node [fontname=\"monospace\"];\n";
  std::unordered_map<const VariableImpl*, int> ids;  // numbered in discovery order: stable output
  std::vector<const VariableImpl*> stack;            // iterative, like the engine
  auto id_of = [&](const VariableImpl* v) {
    auto [it, inserted] = ids.emplace(v, static_cast<int>(ids.size()));
    if (inserted) stack.push_back(v);
    return it->second;
  };
  id_of(root.impl().get());
  while (!stack.empty()) {
    const VariableImpl* v = stack.back();
    stack.pop_back();
    const int id = ids.at(v);
    const bool leaf = v->grad_fn == nullptr;
    // an edge a node kept without the value (Reads) is named as the variable it stands for
    const std::shared_ptr<const VariableImpl> from = v->released_from.lock();
    const std::string& name = from && v->name.empty() ? from->name : v->name;
    out << "  v" << id << " [shape=box, label=\"" << (name.empty() ? "" : name + " | ") << v->value.shape() << " "
        << v->value.dtype() << (leaf ? (v->requires_grad ? " | leaf" : " | constant") : "") << "\""
        << (leaf ? ", style=filled, fillcolor=\"#dbe9f6\"" : "") << "];\n";
    if (leaf) continue;
    const Node& node = *v->grad_fn;
    out << "  op" << id << " [shape=ellipse, label=\"" << node.op() << (node.freed() ? " (freed)" : "") << "\"];\n";
    out << "  op" << id << " -> v" << id << ";\n";
    for (const Variable& in : node.inputs())
      if (in.defined()) out << "  v" << id_of(in.impl().get()) << " -> op" << id << ";\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace gradformer
