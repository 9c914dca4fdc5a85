// The reference solution of tutorials/exercises/02_blocked_transpose.cpp: tiles of a, each
// transposed while it is in the cache; std::min cuts the tiles at the edges.
#include <algorithm>

#include "exercises.h"

namespace exercises {

void blocked_transpose(const float* a, float* out, int64_t rows, int64_t cols, int64_t tile) {
  for (int64_t i0 = 0; i0 < rows; i0 += tile)
    for (int64_t j0 = 0; j0 < cols; j0 += tile) {
      const int64_t i_end = std::min(i0 + tile, rows), j_end = std::min(j0 + tile, cols);
      for (int64_t i = i0; i < i_end; ++i)
        for (int64_t j = j0; j < j_end; ++j) out[j * rows + i] = a[i * cols + j];
    }
}

}  // namespace exercises
