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
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"

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

// ---- the picture: two headers over one storage (01-views.svg) -------------------------------------
// Drawn from the tensors themselves: x = arange(12) holds 0, 1, ..., 11, so the number in a cell is
// also the storage element it reads; a cell's colour is the row of x that element belongs to.
constexpr const char* kRowColours[] = {"#f4a6a6", "#a6c8f4", "#b5e3a1"};
constexpr double kCellW = 44, kCellH = 30, kStoreW = 56, kStoreLeft = 164, kStoreTop = 430;

// Where element [i, j] of a 2-d tensor lives: offset + i * strides[0] + j * strides[1]
int64_t storage_index(const Tensor& t, int64_t i, int64_t j) {
  return t.offset() + i * t.strides()[0] + j * t.strides()[1];
}

double storage_centre(int64_t k) { return kStoreLeft + kStoreW * (static_cast<double>(k) + 0.5); }

// A cell with a red double border: the element the figure follows.
void highlight(Diagram& d, double x, double y, double w, double h) {
  d.rect(x - 1, y - 1, w + 2, h + 2, "none", "#c0392b");
  d.rect(x + 1, y + 1, w - 2, h - 2, "none", "#c0392b");
}

// A tensor's header (a box with its shape, strides and offset) and, below it, its elements as a
// grid whose cells show the value each reads; [hi, hj] is outlined.
void header_and_grid(Diagram& d, double cx, const char* name, const Tensor& t, int64_t hi, int64_t hj) {
  d.rect(cx - 130, 72, 260, 62, "#fbf3c8", "#333", 6);
  d.text(cx, 98, message(name, "'s header: shape ", to_string(t.shape())), {.bold = true});
  d.text(cx, 120, message("strides ", to_string(t.strides()), ", offset ", t.offset()));
  const int64_t rows = t.size(0), columns = t.size(1);
  const double left = cx - kCellW * static_cast<double>(columns) / 2, top = 180;
  d.arrow({{cx, 134}, {cx, top - 24}}, "#999");
  for (int64_t j = 0; j < columns; ++j)
    d.text(left + kCellW * (static_cast<double>(j) + 0.5), top - 6, message("j=", j), {.size = 11, .colour = "#555"});
  for (int64_t i = 0; i < rows; ++i) {
    const double y = top + kCellH * static_cast<double>(i);
    d.text(left - 6, y + kCellH / 2 + 4, message("i=", i), {.size = 11, .anchor = "end", .colour = "#555"});
    for (int64_t j = 0; j < columns; ++j) {
      const double x = left + kCellW * static_cast<double>(j);
      const int64_t k = storage_index(t, i, j);
      d.rect(x, y, kCellW, kCellH, kRowColours[k / 4], "#777");
      d.text(x + kCellW / 2, y + kCellH / 2 + 5, fixed(t.at({i, j}), 0));
      if (i == hi && j == hj) highlight(d, x, y, kCellW, kCellH);
    }
  }
  const int64_t k = storage_index(t, hi, hj);
  d.text(cx, 338,
         message(name, "[", hi, ", ", hj, "] reads storage[", t.offset(), " + ", hi, "\u00b7", t.strides()[0], " + ",
                 hj, "\u00b7", t.strides()[1], "] = storage[", k, "]"),
         {.colour = "#c0392b"});
  d.arrow({{cx + (cx < 500 ? 60 : -60), 346}, {storage_centre(k) + (cx < 500 ? -6 : 6), 408}}, "#c0392b");
}

// A comb below the storage: a tick at each element one row of a view reads, `depth` px down.
void comb(Diagram& d, const std::vector<int64_t>& ks, double depth, double shift, const char* colour) {
  const double y = kStoreTop + 34;
  d.arrow({{storage_centre(ks.front()) + shift, y + depth}, {storage_centre(ks.back()) + shift, y + depth}}, colour,
          false, false);
  for (int64_t k : ks) {
    d.arrow({{storage_centre(k) + shift, y + depth}, {storage_centre(k) + shift, y + 3}}, colour, false, false);
    d.circle(storage_centre(k) + shift, y + 4, 3, colour, colour);
  }
}

void draw_views() {
  const Tensor x = arange(12).reshape({3, 4});  // [3, 4]
  const Tensor xt = x.transpose(0, 1);          // [4, 3]: the same storage, the strides swapped
  const int64_t i = 1, j = 2;                   // x[1, 2] is xt[2, 1]
  claim(storage_index(x, i, j) == storage_index(xt, j, i) && xt.shares_storage_with(x),
        "x[i, j] and xt[j, i] read the same storage element");
  Diagram d(1000, 580);
  d.text(500, 30, "One storage, two headers: x = arange(12).reshape({3, 4}) and xt = x.transpose(0, 1)", {.size = 16});
  d.text(500, 52,
         "element [i, j] is storage[offset + i\u00b7strides[0] + j\u00b7strides[1]]; a cell shows the value it reads",
         {.colour = "#555"});
  header_and_grid(d, 260, "x", x, i, j);
  header_and_grid(d, 740, "xt", xt, j, i);
  const float* storage = x.data<float>();  // x is contiguous from offset 0: its storage in order
  d.text(kStoreLeft - 8, kStoreTop + 23, "storage", {.anchor = "end", .bold = true});
  for (int64_t k = 0; k < x.numel(); ++k) {
    const double left = kStoreLeft + kStoreW * static_cast<double>(k);
    d.text(left + kStoreW / 2, kStoreTop - 6, std::to_string(k), {.size = 11, .colour = "#555"});
    d.rect(left, kStoreTop, kStoreW, 34, kRowColours[k / 4], "#777");
    d.text(left + kStoreW / 2, kStoreTop + 22, fixed(storage[k], 0));
    if (k == storage_index(x, i, j)) highlight(d, left, kStoreTop, kStoreW, 34);
  }
  std::vector<int64_t> x_row, xt_row;  // the storage elements x's row i and xt's row j read, in order
  for (int64_t c = 0; c < x.size(1); ++c) x_row.push_back(storage_index(x, i, c));
  for (int64_t c = 0; c < xt.size(1); ++c) xt_row.push_back(storage_index(xt, j, c));
  comb(d, x_row, 16, -6, "#1f5fa8");
  comb(d, xt_row, 34, 6, "#c0392b");
  const auto list = [](const std::vector<int64_t>& ks) {
    std::string s;
    for (int64_t k : ks) s += (s.empty() ? "" : ", ") + std::to_string(k);
    return s;
  };
  d.text(500, 530, message("blue: x's row ", i, " reads ", list(x_row), ", strides[1] = ", x.strides()[1], " apart"),
         {.colour = "#1f5fa8"});
  d.text(500, 552, message("red: xt's row ", j, " reads ", list(xt_row), ", strides[1] = ", xt.strides()[1], " apart"),
         {.colour = "#c0392b"});
  write_svg(output_path("01-views.svg"), d.svg());
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
  draw_views();
  transpose_is_free();
  view_and_reshape();
  broadcasting();
  dtypes();
  reductions();
  seeded_generator();
  return failures == 0 ? 0 : 1;
}
