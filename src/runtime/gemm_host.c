/* gemm_host.c — the prelude's GEMM routine compiled into the library, for kernels
 * compiled by libtcc (tier 1): tcc does not vectorize, and a matmul is most of a small
 * model's time, so its tier-1 kernels call this (the same code, built by the
 * library's compiler) until the optimized kernel replaces them. Built three times: for
 * the library's target, for AVX2 with FMA and for AVX-512 (its 512-bit micro-tile),
 * the widest this CPU runs picked at run time (the library is built for any x86-64). */
#include "runtime/gemm_host.h"

#include "runtime/gemm_host_fns.h"

void tl_gemm_host_pick(const void **fns) {
  gemm_host_fill(fns);
#ifdef TL_GEMM_HOST_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) tl_gemm_host_avx2(fns);
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
    tl_gemm_host_avx512(fns);
#endif
}
