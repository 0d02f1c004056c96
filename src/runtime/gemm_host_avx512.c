/* gemm_host_avx512.c — the prelude's GEMM for tier-1 kernels, built for AVX-512 with
 * its 512-bit micro-tile (see gemm_host.c, which picks it when the CPU has AVX-512F). */
#include "runtime/gemm_host.h"

#ifdef TL_GEMM_HOST_AVX2
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f,avx512vl,avx2,fma"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512vl,avx2,fma")
#endif

#define TL_GEMM_WIDE 1 /* clang's target attribute does not define __AVX512F__ */
#include "runtime/gemm_host_fns.h"

void tl_gemm_host_avx512(const void **fns) { gemm_host_fill(fns); }

#ifdef __clang__
#pragma clang attribute pop
#endif
#endif
