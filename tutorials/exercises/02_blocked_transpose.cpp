// Exercise (chapter 2): a transpose that is kind to the cache.
//
// out = a^T: a is [rows, cols] and out is [cols, rows], both row-major, so out[j * rows + i] =
// a[i * cols + j]. The naive double loop reads a along its rows but writes out with a stride of
// `rows` floats: for a large matrix every write touches a new cache line. Walk the matrix in
// tile x tile blocks instead (as chapter 2's blocking does for the matrix product): for each block,
// transpose it with the two inner loops, so that the block's lines of a and of out stay in the cache
// while it is done. The edges are partial blocks: rows and cols need not be multiples of tile, and
// tile may be larger than both. Then:
//   cmake --build build --target check-exercise-02_blocked_transpose
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

void blocked_transpose(const float* a, float* out, int64_t rows, int64_t cols, int64_t tile) {
  // Your code here.
  (void)a, (void)out, (void)rows, (void)cols, (void)tile;
  throw NotWrittenYet();
}

}  // namespace exercises
