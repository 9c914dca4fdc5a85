// Checks exercises::row_major_strides and exercises::element_offset (tutorials/exercises/01_strides.cpp,
// or the reference solution): the strides against the library's contiguous tensors and a worked
// example, the offsets against where the library's views find their elements. Prints what it found;
// exits 1 if a check fails or the file is still the stub.
#include <cstdio>
#include <string>
#include <vector>

#include "exercises.h"

using namespace gradformer;

// Every index of `shape`, in row-major order: [0, 0], [0, 1], ..., [1, 0], ...
static std::vector<std::vector<int64_t>> all_indices(const Shape& shape) {
  std::vector<std::vector<int64_t>> indices;
  std::vector<int64_t> index(static_cast<size_t>(shape.rank()), 0);
  for (int64_t n = 0; n < shape.numel(); ++n) {
    indices.push_back(index);
    for (int d = shape.rank() - 1; d >= 0; --d) {  // count up, carrying into the dimension before
      if (++index[static_cast<size_t>(d)] < shape[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return indices;
}

static int check_strides() {
  int failed = 0;
  for (const Shape& shape : {Shape{5}, Shape{2, 3, 4}, Shape{1, 7, 1, 3}, Shape{}}) {
    const Shape mine = exercises::row_major_strides(shape), library = zeros(shape).strides();
    const bool same = mine == library;
    std::printf("strides of %-12s: %-13s the library's %-13s %s\n", to_string(shape).c_str(), to_string(mine).c_str(),
                to_string(library).c_str(), same ? "yes" : "NO");
    if (!same) ++failed;
  }
  // By hand: in [2, 3, 4], one step along dimension 0 skips a 3 x 4 block, along dimension 1 a row of 4.
  const bool worked = exercises::row_major_strides({2, 3, 4}) == Shape{12, 4, 1};
  std::printf("strides of [2, 3, 4] are [12, 4, 1]: %s\n", worked ? "yes" : "NO");
  return failed + (worked ? 0 : 1);
}

static int check_offsets() {
  // x holds 0, 1, 2, ... in storage order, so each element's value is its place in the storage.
  const Tensor x = arange(0.0, 120.0, 1.0, DType::Float64).view({2, 3, 4, 5});
  const std::pair<std::string, Tensor> views[] = {
      {"x itself", x},
      {"x.transpose(0, 2)", x.transpose(0, 2)},
      {"x.permute({3, 1, 0, 2})", x.permute({3, 1, 0, 2})},
      {"x.select(1, 2)", x.select(1, 2)},
      {"x.slice(3, 1, 5, 2)", x.slice(3, 1, 5, 2)},
      {"x.narrow(0, 1, 1).narrow(2, 2, 2)", x.narrow(0, 1, 1).narrow(2, 2, 2)},
      {"x.select(0, 1).select(0, 0).unsqueeze(1).expand({4, 3, 5})",
       x.select(0, 1).select(0, 0).unsqueeze(1).expand({4, 3, 5})},
  };
  int failed = 0;
  for (const auto& [name, view] : views) {
    const std::vector<double> where = view.contiguous().to_vector<double>();  // row-major, as all_indices
    const std::vector<std::vector<int64_t>> indices = all_indices(view.shape());
    std::string wrong;
    for (size_t n = 0; n < indices.size() && wrong.empty(); ++n) {
      const int64_t mine = exercises::element_offset(view, indices[n]), library = static_cast<int64_t>(where[n]);
      if (mine != library) {
        wrong = "element " + to_string(Shape(std::span<const int64_t>(indices[n]))) + " at " + std::to_string(mine) +
                ", the library reads it at " + std::to_string(library);
      }
    }
    std::printf("offsets in %-58s: %s\n", name.c_str(), wrong.empty() ? "yes" : ("NO, " + wrong).c_str());
    if (!wrong.empty()) ++failed;
  }
  return failed;
}

static int checks() {
  const int failed = check_strides() + check_offsets();
  std::printf(failed == 0 ? "strides: all checks pass\n" : "strides: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("01_strides.cpp", 1, checks); }
