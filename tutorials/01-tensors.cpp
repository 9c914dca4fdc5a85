// Chapter 1: tensors. The companion program of tutorials/01-tensors.md: every listing of the chapter
// is a piece of this file, and every output the chapter shows is what this program prints.
//
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "claims.h"
#include "tensor/all.h"

using namespace gradformer;
using namespace tutorial;

namespace {

// ---- 1. storage -----------------------------------------------------------------------------

void storage() {
  section("storage");
  Tensor x = arange(12).reshape({3, 4});  // x: [3, 4], float32
  std::cout << x << "\n";
  const auto address = reinterpret_cast<std::uintptr_t>(x.storage()->data());
  std::cout << "storage: " << x.storage()->bytes() << " bytes, address % 64 = " << address % 64 << "\n";
}

// ---- 2. shape and strides -------------------------------------------------------------------

void shape_and_strides() {
  section("shape and strides");
  Tensor x = arange(12).reshape({3, 4});
  std::cout << "shape " << x.shape() << ", strides " << x.strides() << ", offset " << x.offset() << "\n";
  // element [i, j] lives at storage[offset + i * strides[0] + j * strides[1]]
  const float* base = x.data<float>();  // points at element [0, 0]
  const int64_t i = 1, j = 2;
  const float by_hand = base[i * x.strides()[0] + j * x.strides()[1]];
  std::cout << "x[1, 2] by the formula = " << by_hand << ", by at() = " << x.at({1, 2}) << "\n";
  Tensor cube = arange(24).reshape({2, 3, 4});
  std::cout << "a [2, 3, 4] tensor has strides " << cube.strides() << "\n";
}

// ---- 3. views -------------------------------------------------------------------------------

void show_layout(const char* name, const Tensor& t) {
  std::cout << name << ": shape " << t.shape() << ", strides " << t.strides() << ", offset " << t.offset() << "\n";
}

void views() {
  section("views");
  Tensor x = arange(12).reshape({3, 4});          // [3, 4]
  Tensor xt = x.transpose(0, 1);                  // [4, 3]: the two strides swap
  Tensor cols = x.slice(1, 1, 3);                 // [3, 2]: x[:, 1:3], the offset moves to column 1
  Tensor row = x.select(0, 2);                    // [4]:    x[2], the offset moves to row 2
  Tensor rows = x.slice(0, 0, 1).expand({5, 4});  // [5, 4]: one row seen five times, stride 0
  show_layout("x   ", x);
  show_layout("xt  ", xt);
  show_layout("cols", cols);
  show_layout("row ", row);
  show_layout("rows", rows);
  std::cout << "all share x's storage: " << std::boolalpha
            << (xt.shares_storage_with(x) && cols.shares_storage_with(x) && row.shares_storage_with(x) &&
                rows.shares_storage_with(x))
            << "\n";
  std::cout << cols << "\n";
  cols.fill_(-1);  // writes through the view, into x's storage
  std::cout << x << "\n";
}

// ---- 4. why transpose is free and contiguous is not ------------------------------------------

// Seconds per call of fn: the best of 5 rounds, each running fn often enough to take a few ms.
template <class F>
double seconds_per_call(F&& fn) {
  using clock = std::chrono::steady_clock;
  int64_t calls = 1;
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    for (;;) {
      const auto start = clock::now();
      for (int64_t c = 0; c < calls; ++c) fn();
      const double elapsed = std::chrono::duration<double>(clock::now() - start).count();
      if (elapsed > 2e-3 || calls > (int64_t{1} << 24)) {
        best = std::min(best, elapsed / static_cast<double>(calls));
        break;
      }
      calls *= 4;
    }
  }
  return best;
}

// Nanoseconds below a microsecond (a view), else milliseconds: one unit per line on every machine,
// so the chapter's output block keeps its words when a copy takes 0.9 ms on one machine and 1.2 on
// another.
std::string format_time(double seconds) {
  char buf[32];
  if (seconds < 1e-6)
    std::snprintf(buf, sizeof buf, "%.0f ns", seconds * 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.3f ms", seconds * 1e3);
  return buf;
}

std::string ratio(double slow, double fast) {
  char buf[32];
  std::snprintf(buf, sizeof buf, slow / fast < 100 ? "%.1f" : "%.0f", slow / fast);
  return buf;
}

void transpose_is_free() {
  section("why transpose is free and contiguous is not");
  const int threads = num_threads();
  set_num_threads(1);  // one thread: the timings below measure memory access, not the thread pool
  Generator gen(0);
  Tensor a = randn({2048, 2048}, gen);  // a: [2048, 2048] float32
  const double mib = static_cast<double>(a.numel()) * 4 / (1 << 20);
  std::cout << "a: shape " << a.shape() << ", " << mib << " MiB\n";

  Tensor at;  // a's transpose: [2048, 2048], strides [1, 2048]
  const double t_view = seconds_per_call([&] { at = a.transpose(0, 1); });
  const double t_copy = seconds_per_call([&] { at = a.transpose(0, 1).contiguous(); });
  const double t_clone = seconds_per_call([&] { at = a.clone(); });  // the same bytes, copied in order
  std::cout << "a.transpose(0, 1)              " << format_time(t_view) << "\n";
  std::cout << "a.clone()                      " << format_time(t_clone) << "\n";
  std::cout << "a.transpose(0, 1).contiguous() " << format_time(t_copy) << "  (" << ratio(t_copy, t_view)
            << " times the transpose, " << ratio(t_copy, t_clone) << " times the clone)\n";

  // The same sum over the last axis, 2048 * 2048 additions each; only the order of memory accesses differs.
  Tensor out;
  Tensor a_t = a.transpose(0, 1);                    // strides [1, 2048]: each row is a column of a
  Tensor a_t_copy = a.transpose(0, 1).contiguous();  // the same values, strides [2048, 1]
  const double t_rows = seconds_per_call([&] { out = sum(a_t_copy, {1}); });
  const double t_cols = seconds_per_call([&] { out = sum(a_t, {1}); });
  std::cout << "sum(.., {1}), rows contiguous  " << format_time(t_rows) << "\n";
  std::cout << "sum(.., {1}), rows strided     " << format_time(t_cols) << "  (" << ratio(t_cols, t_rows)
            << " times longer)\n";
  const bool same = sum(a_t, {1}).to_vector<float>() == sum(a_t_copy, {1}).to_vector<float>();
  std::cout << "same result: " << same << "\n";
  set_num_threads(threads);
}

// ---- 5. when view fails and reshape copies ----------------------------------------------------

void view_and_reshape() {
  section("view and reshape");
  Tensor x = arange(12).reshape({3, 4});
  Tensor flat = x.view({12});  // contiguous: any shape with 12 elements is a view
  std::cout << "x.view({12}) shares storage: " << flat.shares_storage_with(x) << "\n";
  Tensor xt = x.transpose(0, 1);      // [4, 3], strides [1, 4]
  Tensor split = xt.view({2, 2, 3});  // splitting a dimension is always a view
  show_layout("xt.view({2, 2, 3})", split);
  try {
    xt.view({12});  // merging two dimensions needs them to be one evenly spaced run in memory
  } catch (const ShapeError& e) {
    std::cout << "ShapeError: " << e.what() << "\n";
  }
  Tensor copied = xt.reshape({12});  // reshape falls back to a contiguous copy
  std::cout << "xt.reshape({12}) shares storage: " << copied.shares_storage_with(x) << "\n";
  std::cout << copied << "\n";
}

// ---- 6. broadcasting ------------------------------------------------------------------------

void broadcasting() {
  section("broadcasting");
  Tensor a = arange(3).reshape({3, 1}) * 10.0;  // a: [3, 1]
  Tensor b = arange(4);                         // b: [4]
  // 1. align the shapes on the right:  [3, 1]
  //                                    [   4]
  // 2. a missing dimension counts as 1, and each 1 stretches to the other size: [3, 4]
  const Shape out = broadcast_shapes(a.shape(), b.shape(), "add");
  std::cout << "broadcast_shapes(" << a.shape() << ", " << b.shape() << ") = " << out << "\n";
  // 3. stretching copies nothing: expand gives the stretched dimension stride 0
  show_layout("a.expand(out)", a.expand(out));
  show_layout("b.expand(out)", b.expand(out));
  std::cout << a + b << "\n";
  try {
    Tensor c = zeros({2, 3}) + zeros({4});  // 3 and 4 differ and neither is 1
  } catch (const ShapeError& e) {
    std::cout << "ShapeError: " << e.what() << "\n";
  }
}

// ---- 7. dtypes ------------------------------------------------------------------------------

void dtypes() {
  section("dtypes");
  Tensor w = full({3}, 1.0);                          // float32: training
  Tensor w64 = w.to(DType::Float64);                  // float64: gradient checks
  Tensor ids = tensor({2, 0, 1}, {3}, DType::Int64);  // int64: token ids, gather indices
  Tensor mask = gt(ids, zeros({3}, DType::Int64));    // bool: masks
  std::cout << w64 << "\n" << ids << "\n" << mask << "\n";
  // Why gradient checks use float64: the step eps = 1e-6 of a finite difference, seen through float32.
  const double eps = 1e-6;
  std::cout << "(w + eps) - w in float32: " << ((w + eps) - w) << "\n";
  std::cout << "(w + eps) - w in float64: " << ((w64 + eps) - w64) << "\n";
  try {
    Tensor bad = w + w64;  // no silent promotion
  } catch (const DTypeError& e) {
    std::cout << "DTypeError: " << e.what() << "\n";
  }
}

// ---- 8. reductions and keepdim -----------------------------------------------------------------

void reductions() {
  section("reductions and keepdim");
  Tensor x = tensor({1, 2, 3, 10, 20, 30}, {2, 3});  // x: [2, 3]
  Tensor row_max = max(x, {-1}, true);               // [2, 1]: keepdim keeps the axis, with size 1
  std::cout << row_max << "\n";
  std::cout << x - row_max << "\n";                                        // [2, 3] - [2, 1] -> [2, 3]
  std::cout << "max(x, {-1}) has shape " << max(x, {-1}).shape() << "\n";  // [2]: the axis is gone
  try {
    Tensor wrong = x - max(x, {-1});  // [2, 3] - [2]: aligned on the right, 3 meets 2
  } catch (const ShapeError& e) {
    std::cout << "ShapeError: " << e.what() << "\n";
  }
}

// ---- 9. the seeded generator ------------------------------------------------------------------

void seeded_generator() {
  section("the seeded generator");
  Generator gen(42);
  Tensor first = randn({2, 3}, gen);
  std::cout << first << "\n";
  Generator again(42);  // the same seed gives the same numbers again
  std::cout << "same numbers again: " << (randn({2, 3}, again).to_vector<float>() == first.to_vector<float>()) << "\n";
  std::cout << randint({8}, 0, 10, gen) << "\n";  // the generator moves on: new numbers
}

}  // namespace

int main() {
  std::cout << std::boolalpha;
  storage();
  shape_and_strides();
  views();
  transpose_is_free();
  view_and_reshape();
  broadcasting();
  dtypes();
  reductions();
  seeded_generator();
}
