/* gemm_host.h — the GEMM and convolution routines that tier-1 (libtcc) kernels call (gemm_host.c),
 * given to each libtcc state by name (the kernel prelude declares it under
 * TL_GEMM_HOST). */
#ifndef TL_RUNTIME_GEMM_HOST_H
#define TL_RUNTIME_GEMM_HOST_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TL_GEMM_HOST_AVX2 1 /* builds for AVX2 + FMA and for AVX-512, picked at run time */
void tl_gemm_host_avx2(const void **fns);
void tl_gemm_host_avx512(const void **fns);
#endif

/* fns: the GEMM's f32 and f64 routines, then the convolution's (kernel_prelude_conv.h),
 * the fastest build this CPU runs */
#define TL_GEMM_HOST_FNS 4
void tl_gemm_host_pick(const void **fns);

#endif
