/* gemm_host.c — the prelude's GEMM routine compiled into the library, for kernels
 * compiled by libtcc (tier 1): tcc does not vectorize, and a matmul is most of a small
 * model's time, so its tier-1 kernels call this (the same code, built by the
 * library's compiler) until the optimized kernel replaces them. */
#define TL_GEMM 1
#include "runtime/gemm_host.h"

#include "codegen/kernel_prelude.h"

void tl_gemm_host_f32(const tl_gemm_desc *d, const float *A, const float *B, float *C, tl_i64 begin, tl_i64 end,
                      void *const *bufs, tl_gemm_epi epi) {
  tl_gemm_run_f32(d, A, B, C, begin, end, bufs, epi);
}

void tl_gemm_host_f64(const tl_gemm_desc *d, const double *A, const double *B, double *C, tl_i64 begin,
                      tl_i64 end, void *const *bufs, tl_gemm_epi epi) {
  tl_gemm_run_f64(d, A, B, C, begin, end, bufs, epi);
}

const void *const tl_gemm_host_symbols[2] = {(const void *)tl_gemm_host_f32, (const void *)tl_gemm_host_f64};
