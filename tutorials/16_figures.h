// Chapter 16's figure: the merge tree of a pre-token the merges were not learned from
// (16-merge-tree.svg), drawn by tutorials/16-tokens.cpp. A header of its own, so that the program
// stays within its length.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "claims.h"
#include "transformer/data/bpe.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"

namespace tutorial {

// A token of the tree: a byte (a leaf) or the join of two tokens by the merge of rank `rank` (1 first).
struct MergeNode {
  std::string bytes;
  int left = -1, right = -1;  // the two tokens joined, indices into the nodes; -1 for a byte
  size_t rank = 0;            // 0 for a byte
  int level = 0;              // 0 for a byte, else one above the higher of the two it joins
  double x = 0;               // the centre of its box
};

// The pre-token's bytes, then each merge in the order learned, wherever its pair occurs (left to
// right, as BytePairEncoding::bpe): every join a node above the two it joins. Returns the nodes;
// `tokens` ends as the final tokens' nodes, left to right.
inline std::vector<MergeNode> merge_tree(const gradformer::BytePairEncoding& learned, const std::string& pre_token,
                                         std::vector<int>& tokens) {
  std::vector<MergeNode> nodes;
  tokens.clear();
  for (const char byte : pre_token) {
    nodes.push_back({std::string(1, byte), -1, -1, 0, 0, 80 + 90 * static_cast<double>(nodes.size())});
    tokens.push_back(static_cast<int>(nodes.size()) - 1);
  }
  for (size_t rank = 0; rank < learned.merges().size(); ++rank) {
    const auto& [first, second] = learned.merges()[rank];
    std::vector<int> joined;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const MergeNode& a = nodes[static_cast<size_t>(tokens[i])];
      if (i + 1 < tokens.size() && a.bytes == first && nodes[static_cast<size_t>(tokens[i + 1])].bytes == second) {
        const MergeNode& b = nodes[static_cast<size_t>(tokens[i + 1])];
        nodes.push_back(
            {a.bytes + b.bytes, tokens[i], tokens[i + 1], rank + 1, std::max(a.level, b.level) + 1, (a.x + b.x) / 2});
        joined.push_back(static_cast<int>(nodes.size()) - 1);
        ++i;
      } else {
        joined.push_back(tokens[i]);
      }
    }
    tokens = std::move(joined);
  }
  return nodes;
}

// The tree, leaves (the bytes) at the bottom, each merge a node above the two tokens it joins,
// the final tokens on top; beside it the merges learned, in order, those that applied marked.
inline void draw_merge_tree(const std::string& path, const gradformer::BytePairEncoding& learned,
                            const std::string& pre_token) {
  using namespace gradformer;
  std::vector<int> tokens;
  const std::vector<MergeNode> nodes = merge_tree(learned, pre_token, tokens);
  const auto y_of = [](int level) { return 392.0 - 74 * level; };
  Diagram d(1000, 500);
  d.text(500, 28, "Byte-pair encoding of \"" + gpt2_bytes_to_text(pre_token) + "\", a word the merges never saw",
         {.size = 16});
  d.text(500, 50, "read from the bottom: its bytes, then each learned merge in order, wherever its pair occurs",
         {.size = 13, .colour = "#555"});
  for (const MergeNode& n : nodes) {
    if (n.left >= 0)
      for (const int child : {n.left, n.right})  // into the parent's bottom, the left child's left of the right's
        d.arrow({{nodes[static_cast<size_t>(child)].x, y_of(nodes[static_cast<size_t>(child)].level)},
                 {n.x + (child == n.left ? -12 : 12), y_of(n.level) + 30}});
    d.box(n.x - 32, y_of(n.level), 64, 30, gpt2_bytes_to_text(n.bytes), n.left < 0 ? "#eeeeee" : "#fde2c2");
    if (n.left >= 0) d.text(n.x + 38, y_of(n.level) + 19, message("merge ", n.rank), {.size = 11, .anchor = "start"});
  }
  d.text(40, 452, "bytes", {.size = 12, .anchor = "start", .colour = "#555"});
  d.text(40, 100, message(tokens.size(), " tokens:"), {.size = 13, .anchor = "start", .bold = true});
  for (const int t : tokens) {
    const MergeNode& n = nodes[static_cast<size_t>(t)];
    d.arrow({{n.x, y_of(n.level)}, {n.x, 112}}, n.left < 0 ? "#999" : "#333", n.left < 0);
    d.box(n.x - 32, 82, 64, 30, gpt2_bytes_to_text(n.bytes), "#d4f0d4");
  }
  d.text(640, 100, message("the ", learned.merges().size(), " merges learned, in order:"),
         {.size = 13, .anchor = "start", .bold = true});
  for (size_t rank = 0; rank < learned.merges().size(); ++rank) {
    const auto& [first, second] = learned.merges()[rank];
    const bool used = std::any_of(nodes.begin(), nodes.end(), [&](const MergeNode& n) { return n.rank == rank + 1; });
    const double y = 130 + 26 * static_cast<double>(rank);
    d.text(660, y, message(rank + 1, "."), {.size = 13, .anchor = "end", .colour = used ? "#222" : "#999"});
    d.text(670, y,
           gpt2_bytes_to_text(first) + " + " + gpt2_bytes_to_text(second) + " \u2192 " +
               gpt2_bytes_to_text(first + second),
           {.size = 13, .anchor = "start", .colour = used ? "#222" : "#999", .bold = used});
    d.text(850, y, used ? "joins a pair here" : "no pair here",
           {.size = 12, .anchor = "start", .colour = used ? "#c0392b" : "#999"});
  }
  d.text(640, 370, "\u0120 is the space (GPT-2's character for it).", {.size = 12, .anchor = "start"});
  d.text(640, 390, "A merge can join tokens that earlier merges made,", {.size = 12, .anchor = "start"});
  d.text(640, 410, "so the merges are replayed in the order learned.", {.size = 12, .anchor = "start"});
  d.text(640, 430, "Bytes no merge reaches stay tokens (dashed).", {.size = 12, .anchor = "start"});
  write_svg(path, d.svg());
}

}  // namespace tutorial
