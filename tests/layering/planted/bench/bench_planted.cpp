// A planted violation: a benchmark may not build on a chapter's program (bench_matmul once included
// tutorials/02-matmul.cpp for its ladder). The library include above it is allowed.
#include "tensor/tensor.h"
#include "tutorials/99-planted.cpp"
