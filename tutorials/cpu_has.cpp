// Asked by tutorials/CMakeLists.txt at configure time: does this CPU (and its OS) run AVX2, or
// AVX-512F, as the library's own checks ask it? `cpu_has avx2` / `cpu_has avx512`: exit status 0 if
// so. The chapters' blocks that only such a CPU prints are tagged "needs: avx2" or "needs: avx512"
// and go unchecked elsewhere.
#include <cstring>

int main(int argc, char** argv) {
  __builtin_cpu_init();
  if (argc > 1 && std::strcmp(argv[1], "avx2") == 0) return __builtin_cpu_supports("avx2") ? 0 : 1;
  const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx512 ? 0 : 1;
}
