/* gemm_host.c — the prelude's GEMM routine compiled into the library, for kernels
 * compiled by libtcc (tier 1): tcc does not vectorize, and a matmul is most of a small
 * model's time, so its tier-1 kernels call this (the same code, built by the
 * library's compiler) until the optimized kernel replaces them. Built twice: for the
 * library's target, and for AVX2 with FMA, picked at run time when the CPU has them
 * (the library itself is built for any x86-64). */
#include "runtime/gemm_host.h"

#define TL_GEMM 1
#include "codegen/kernel_prelude.h"

static void gemm_f32(const tl_gemm_desc *d, const float *A, const float *B, float *C, tl_i64 begin, tl_i64 end,
                     void *const *bufs, tl_gemm_epi epi) {
  tl_gemm_run_f32(d, A, B, C, begin, end, bufs, epi);
}

static void gemm_f64(const tl_gemm_desc *d, const double *A, const double *B, double *C, tl_i64 begin, tl_i64 end,
                     void *const *bufs, tl_gemm_epi epi) {
  tl_gemm_run_f64(d, A, B, C, begin, end, bufs, epi);
}

void tl_gemm_host_pick(const void *fns[2]) {
  fns[0] = (const void *)gemm_f32;
  fns[1] = (const void *)gemm_f64;
#ifdef TL_GEMM_HOST_AVX2
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) tl_gemm_host_avx2(fns);
#endif
}
