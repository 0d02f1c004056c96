/* gemm_host_avx2.c — the prelude's GEMM for tier-1 kernels, built for AVX2 with FMA
 * (see gemm_host.c, which picks it when the CPU has them). */
#include "runtime/gemm_host.h"

#ifdef TL_GEMM_HOST_AVX2
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif

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

void tl_gemm_host_avx2(const void *fns[2]) {
  fns[0] = (const void *)gemm_f32;
  fns[1] = (const void *)gemm_f64;
}

#ifdef __clang__
#pragma clang attribute pop
#endif
#endif
