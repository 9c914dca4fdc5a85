#include <filesystem>
#include <fstream>
#include <string>

#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;

TEST_CASE("a tensor prints its values, shape and dtype like PyTorch") {
  CHECK(to_string(arange(6).reshape({2, 3})) ==
        "tensor([[0.0000, 1.0000, 2.0000],\n"
        "        [3.0000, 4.0000, 5.0000]], shape=[2, 3], dtype=float32)");
  CHECK(to_string(tensor({-1.5, 10}, {2}, DType::Float64)) == "tensor([-1.5000, 10.0000], shape=[2], dtype=float64)");
  CHECK(to_string(scalar(2)) == "tensor(2.0000, shape=[], dtype=float32)");
  CHECK(to_string(arange(3, DType::Int64)) == "tensor([0, 1, 2], shape=[3], dtype=int64)");
  CHECK(to_string(lt(arange(2), full({1}, 1))) == "tensor([ true, false], shape=[2], dtype=bool)");
  CHECK(to_string(zeros({0})) == "tensor([], shape=[0], dtype=float32)");
  CHECK(to_string(Tensor()) == "tensor(undefined)");
}

TEST_CASE("very large or small values switch to scientific notation") {
  CHECK(to_string(tensor({1e-6, 1}, {2}, DType::Float64)) ==
        "tensor([1.0000e-06, 1.0000e+00], shape=[2], dtype=float64)");
}

TEST_CASE("rank-3 tensors separate their matrices with a blank line") {
  CHECK(to_string(arange(4, DType::Int64).reshape({2, 1, 2})) ==
        "tensor([[[0, 1]],\n"
        "\n"
        "        [[2, 3]]], shape=[2, 1, 2], dtype=int64)");
}

TEST_CASE("tensors of more than 1000 elements show only their edges") {
  const std::string s = to_string(arange(2000, DType::Int64));
  CHECK(s == "tensor([   0,    1,    2, ..., 1997, 1998, 1999], shape=[2000], dtype=int64)");
}

TEST_CASE("DEVELOPING.md's first look runs this code and prints what it says") {
  // The ```cpp block under "## A first look at the library": its x and y are these, and the comment
  // lines after its `std::cout << y` are what y prints.
  std::ifstream page(std::filesystem::path(GRADFORMER_SOURCE_DIR) / "DEVELOPING.md");
  REQUIRE(page);
  std::string line, code, printed;
  bool in_section = false, in_block = false, after_print = false;
  while (std::getline(page, line)) {
    if (line.starts_with("## ")) {
      in_section = line == "## A first look at the library";
    } else if (in_section && line.starts_with("```")) {
      if (in_block) break;
      in_block = true;
    } else if (in_block) {
      code += line + "\n";
      if (after_print && line.starts_with("// ")) printed += (printed.empty() ? "" : "\n") + line.substr(3);
      after_print = after_print || line.starts_with("std::cout << y");
    }
  }
  CHECK(code.find("Tensor x = arange(6).reshape({2, 3});") != std::string::npos);
  CHECK(code.find("Tensor y = x - max(x, {-1}, true);") != std::string::npos);
  Tensor x = arange(6).reshape({2, 3});
  Tensor y = x - max(x, {-1}, true);
  CHECK(printed ==
        "tensor([[-2.0000, -1.0000,  0.0000],\n"
        "        [-2.0000, -1.0000,  0.0000]], shape=[2, 3], dtype=float32)");
  CHECK(to_string(y) == printed);
}
