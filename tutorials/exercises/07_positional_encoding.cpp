// Exercise (chapter 7): write the sinusoidal positional encoding.
//
// Return the [max_len, d_model] float64 table PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),
// PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)): fill a std::vector<double> row by row and make it a
// tensor with from_vector(values, {max_len, d_model}). Then:
//   cmake -S . -B build -DGRADFORMER_EXERCISES=ON && cmake --build build -j2 && ctest --test-dir build -L exercises
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor positional_encoding(int64_t max_len, int64_t d_model) {
  // Your code here.
  return zeros({max_len, d_model}, DType::Float64);
}

}  // namespace exercises
