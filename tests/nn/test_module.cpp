#include "autograd/helpers.h"
#include "nn/all.h"

using namespace gradformer;
using test::values;

namespace {

// Two Linear layers and a LayerNorm, nested one level, to check the dotted names.
struct Block : Module {
  explicit Block(Generator& gen) {
    fc = register_module("fc", std::make_shared<Linear>(3, 4, gen));
    norm = register_module("norm", std::make_shared<LayerNorm>(4));
  }
  std::shared_ptr<Linear> fc;
  std::shared_ptr<LayerNorm> norm;
};

struct Net : Module {
  explicit Net(Generator& gen) {
    scale = register_parameter("scale", ones({1}));
    blocks = register_module("blocks", std::make_shared<ModuleList<Block>>());
    blocks->push_back(std::make_shared<Block>(gen));
    blocks->push_back(std::make_shared<Block>(gen));
  }
  Variable scale;
  std::shared_ptr<ModuleList<Block>> blocks;
};

}  // namespace

TEST_CASE("named_parameters gives dotted paths in registration order") {
  Generator gen(0);
  Net net(gen);
  std::vector<std::string> names;
  for (const auto& [name, p] : net.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"scale", "blocks.0.fc.weight", "blocks.0.fc.bias", "blocks.0.norm.weight",
                                          "blocks.0.norm.bias", "blocks.1.fc.weight", "blocks.1.fc.bias",
                                          "blocks.1.norm.weight", "blocks.1.norm.bias"});
  // 1 + 2 * (4*3 + 4 + 4 + 4)
  CHECK(net.parameter_count() == 49);
  CHECK(net.parameters().size() == 9);
  for (const Variable& p : net.parameters()) CHECK(p.requires_grad());
}

TEST_CASE("train and eval reach every sub-module") {
  Generator gen(0);
  Net net(gen);
  CHECK(net.blocks->is_training());
  net.eval();
  CHECK(!(*net.blocks)[1].norm->is_training());
  net.train();
  CHECK((*net.blocks)[0].fc->is_training());
}

TEST_CASE("load_state_dict copies into the existing parameters and round-trips bitwise") {
  Generator g1(1), g2(2);
  Net a(g1), b(g2);
  const Variable handle = b.blocks->operator[](0).fc->weight;  // as an optimizer would hold it
  b.load_state_dict(a.state_dict());
  for (const auto& [name, t] : a.state_dict()) CHECK(values(b.state_dict().at(name)) == values(t));
  CHECK(values(handle.value()) == values(a.blocks->operator[](0).fc->weight.value()));
  CHECK(!handle.value().shares_storage_with(a.blocks->operator[](0).fc->weight.value()));  // copied, not aliased
}

TEST_CASE("load_state_dict lists every missing, unexpected and mis-shaped entry, and changes nothing") {
  Generator gen(3);
  Net net(gen);
  const std::vector<double> before = values(net.scale.value());
  StateDict state = net.state_dict();
  state.erase("blocks.1.norm.bias");
  state["blocks.0.fc.weight"] = zeros({4, 5});
  state["extra.weight"] = zeros({2});
  state["scale"] = full({1}, 7.0);
  const std::string msg = test::error_message<ShapeError>([&] { net.load_state_dict(state); });
  CHECK(msg.find("missing: blocks.1.norm.bias [4]") != std::string::npos);
  CHECK(msg.find("mismatched: blocks.0.fc.weight is [4, 3] float32 in the model, [4, 5] float32 in the state") !=
        std::string::npos);
  CHECK(msg.find("unexpected: extra.weight [2]") != std::string::npos);
  CHECK(values(net.scale.value()) == before);
}

TEST_CASE("load_state_dict lists the first 10 problems and counts the rest") {
  Generator gen(3);
  Net net(gen);
  StateDict state;  // all 9 parameters missing, and 25 unexpected entries: 34 problems
  for (int i = 0; i < 25; ++i) state["junk." + std::to_string(i)] = zeros({1});
  const std::string msg = test::error_message<ShapeError>([&] { net.load_state_dict(state); });
  CHECK(msg ==
        "load_state_dict: the state does not fit the model:\n  missing: scale [1]\n  missing: blocks.0.fc.weight [4, 3]"
        "\n  missing: blocks.0.fc.bias [4]\n  missing: blocks.0.norm.weight [4]\n  missing: blocks.0.norm.bias [4]"
        "\n  missing: blocks.1.fc.weight [4, 3]\n  missing: blocks.1.fc.bias [4]\n  missing: blocks.1.norm.weight [4]"
        "\n  missing: blocks.1.norm.bias [4]\n  unexpected: junk.0 [1]\n  ... and 24 more");
}

TEST_CASE("registering a duplicate or dotted name is an error") {
  struct Bad : Module {
    void twice() {
      register_parameter("w", zeros({1}));
      register_parameter("w", zeros({1}));
    }
    void dotted() { register_parameter("a.b", zeros({1})); }
  };
  Bad bad;
  CHECK_THROWS_MSG(bad.twice(), ValueError, "register: the name 'w' is already taken");
  CHECK_THROWS_MSG(bad.dotted(), ValueError, "register: invalid name 'a.b'");
}

TEST_CASE("zero_grad forgets every parameter's gradient") {
  Generator gen(4);
  Net net(gen);
  Variable x(ones({2, 3}));
  sum((*net.blocks)[0].fc->forward(x) * net.scale).backward();
  CHECK(net.scale.grad().defined());
  net.zero_grad();
  for (const Variable& p : net.parameters()) CHECK(!p.grad().defined());
}
