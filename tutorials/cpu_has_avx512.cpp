// Asked once by tutorials/CMakeLists.txt at configure time: does this CPU (and its OS) run AVX-512F,
// as the library's own check in tensor/matmul.cpp asks it? Exit status 0 if so. The chapters' blocks
// that only such a CPU prints are tagged "needs: avx512" and go unchecked elsewhere.
int main() {
  __builtin_cpu_init();
  const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx512 ? 0 : 1;
}
