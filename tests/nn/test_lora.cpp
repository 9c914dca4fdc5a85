// LoRA (nn/lora.h): the update starts at zero, is (alpha / r) B A, adds to a Linear's output exactly
// what merging it into the weight adds, and refuses the ranks and scales it cannot take.
#include "autograd/helpers.h"
#include "catch.h"
#include "nn/all.h"

using namespace gradformer;

TEST_CASE("LoraAdapter: zero at first, (alpha / r) x A^T B^T after, and its delta (alpha / r) B A by hand") {
  Generator gen(1);
  LoraAdapter a(3, 2, 1, 4.0, gen, DType::Float64);  // A [1, 3], B [2, 1], scale 4 / 1
  const Variable x(from_vector(std::vector<double>{1, 2, 3}, {1, 3}));
  CHECK(a.forward(x).value().to_vector<double>() == std::vector<double>{0, 0});  // B = 0
  Tensor A = a.A.value(), B = a.B.value();                                       // handles to the parameters' storage
  A.copy_(from_vector(std::vector<double>{1, 0, -1}, {1, 3}));
  B.copy_(from_vector(std::vector<double>{2, 0.5}, {2, 1}));
  // x A^T = 1 - 3 = -2; times B^T = [-4, -1]; times 4 = [-16, -4].
  CHECK(a.forward(x).value().to_vector<double>() == std::vector<double>{-16, -4});
  // 4 B A = 4 [[2, 0, -2], [0.5, 0, -0.5]]
  CHECK(a.delta().to_vector<double>() == std::vector<double>{8, 0, -8, 2, 0, -2});
  CHECK(a.scale() == 4);
  CHECK(a.named_parameters().size() == 2);
}

TEST_CASE("a Linear with a LoRA update gives what its weight with the update merged gives") {
  Generator gen(2);
  Linear l(5, 4, gen, true, DType::Float64);
  l.add_lora(2, 3.0, &gen);
  normal_(l.lora->B, 0, 1, gen);
  const Variable x(normal({3, 5}, 0, 1, gen).to(DType::Float64));
  Linear merged(5, 4, skip_init, true, DType::Float64);
  Tensor merged_w = merged.weight.value(), merged_b = merged.bias.value();
  merged_w.copy_(add(l.weight.value(), l.lora->delta()));
  merged_b.copy_(l.bias.value());
  const std::vector<double> a = l.forward(x).value().to_vector<double>(),
                            b = merged.forward(x).value().to_vector<double>();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(1e-12));
  // Its parameters: the weight and bias, then lora.A and lora.B.
  std::vector<std::string> names;
  for (const auto& [name, p] : l.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"weight", "bias", "lora.A", "lora.B"});
  CHECK_GRADCHECK([&] { return sum(l.forward(x)); }, l.parameters());
}

TEST_CASE("LoRA refuses a rank outside 1 to min(in, out), a scale that is not positive, and a second update") {
  Generator gen(3);
  CHECK_THROWS_MSG(LoraAdapter(4, 3, 4, 8.0, gen), ValueError,
                   "LoraAdapter: rank must be from 1 to min(in, out) = 3 and alpha positive; got in 4, out 3, rank 4");
  CHECK_THROWS_MSG(LoraAdapter(4, 3, 0, 8.0, gen), ValueError, "rank 0");
  CHECK_THROWS_MSG(LoraAdapter(4, 3, 2, 0.0, gen), ValueError, "alpha 0");
  Linear l(4, 3, gen);
  l.add_lora(1, 1.0, &gen);
  CHECK_THROWS_MSG(l.add_lora(1, 1.0, &gen), ValueError, "Linear: it has a LoRA update already");
}
