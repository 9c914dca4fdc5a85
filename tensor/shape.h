// Shape: the sizes of a tensor's dimensions (and, with the same type, its strides).
// Stored inline, up to kMaxRank entries, so making a tensor never allocates for its shape.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace gradformer {

inline constexpr int kMaxRank = 8;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);

  int rank() const { return rank_; }
  int size() const { return rank_; }
  bool empty() const { return rank_ == 0; }
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i)]; }
  int64_t back() const { return dims_[static_cast<size_t>(rank_ - 1)]; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }

  void push_back(int64_t d) {  // ShapeError past kMaxRank
    if (rank_ == kMaxRank) too_many_dimensions();
    dims_[static_cast<size_t>(rank_++)] = d;
  }
  void insert(int at, int64_t d);  // before position `at`
  void erase(int at);
  /// The product of the sizes (1 for rank 0). Every element count in the library comes from here,
  /// so this is the one place a product is checked: ShapeError when it does not fit in int64_t
  /// (a hostile [2^62, 4] would otherwise wrap around to 0 and pass every later check).
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i)
      if (__builtin_mul_overflow(n, dims_[static_cast<size_t>(i)], &n)) numel_overflow();
    return n;
  }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  friend bool operator==(const Shape& a, const Shape& b);

 private:
  [[noreturn]] void numel_overflow() const;
  [[noreturn]] static void too_many_dimensions();
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

std::ostream& operator<<(std::ostream& out, const Shape& shape);  // [2, 3]
std::string to_string(const Shape& shape);

/// Row-major strides, in elements: [2, 3, 4] -> [12, 4, 1].
Shape contiguous_strides(const Shape& shape);

/// NumPy broadcasting: align from the right; sizes must be equal or one of them 1.
/// ShapeError "op: shapes [2, 3] and [4] do not broadcast".
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

/// True when `from` broadcasts to exactly `to` (as expand and in-place updates need).
bool broadcasts_to(const Shape& from, const Shape& to);

/// Turns a possibly negative dimension (-1 = last) into 0..rank-1, or throws IndexError naming op.
int normalize_dim(int64_t dim, int rank, const char* op);

}  // namespace gradformer
