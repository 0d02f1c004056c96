/* gemm_host_avx2.c — the prelude's GEMM for tier-1 kernels, built for AVX2 with FMA
 * (see gemm_host.c, which picks it when the CPU has them). */
#include "runtime/gemm_host.h"

#ifdef TL_GEMM_HOST_AVX2
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx2,fma")
#endif

#include "runtime/gemm_host_fns.h"

void tl_gemm_host_avx2(const void **fns) { gemm_host_fill(fns); }

#ifdef __clang__
#pragma clang attribute pop
#endif
#endif
