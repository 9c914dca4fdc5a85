// The graph behind a variable as Graphviz DOT text, as micrograd's draw_dot: a box per value
// (name, shape, dtype; leaves filled in) and an ellipse per op, arrows pointing the way data flows.
//   std::ofstream("graph.dot") << to_dot(loss);    then:  dot -Tsvg graph.dot -o graph.svg
#pragma once

#include <string>

#include "autograd/variable.h"

namespace gradformer {

std::string to_dot(const Variable& root);

}  // namespace gradformer
