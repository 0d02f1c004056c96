/* gemm_host_fns.h — the prelude's GEMM and convolution and their entry points as function pointers;
 * included once by each file that builds it for a target (gemm_host.c: the library's,
 * gemm_host_avx2.c: AVX2 + FMA, gemm_host_avx512.c), so every build is the same code. */
#define TL_GEMM 1
#define TL_CONV 1
#include "codegen/kernel_prelude.h"

static void gemm_f32(const tl_gemm_desc *d, const float *A, const float *B, float *C, tl_i64 begin, tl_i64 end,
                     void *const *bufs, tl_gemm_epi epi) {
  tl_gemm_run_f32(d, A, B, C, begin, end, bufs, epi);
}

static void gemm_f64(const tl_gemm_desc *d, const double *A, const double *B, double *C, tl_i64 begin, tl_i64 end,
                     void *const *bufs, tl_gemm_epi epi) {
  tl_gemm_run_f64(d, A, B, C, begin, end, bufs, epi);
}

static void conv_f32(const tl_conv_desc *d, float *out, const float *a, const float *b, tl_i64 begin, tl_i64 end) {
  tl_conv_run_f32(d, out, a, b, begin, end);
}

static void conv_f64(const tl_conv_desc *d, double *out, const double *a, const double *b, tl_i64 begin,
                     tl_i64 end) {
  tl_conv_run_f64(d, out, a, b, begin, end);
}

static void gemm_host_fill(const void **fns) {
  fns[0] = (const void *)gemm_f32;
  fns[1] = (const void *)gemm_f64;
  fns[2] = (const void *)conv_f32;
  fns[3] = (const void *)conv_f64;
}
