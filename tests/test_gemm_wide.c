/* test_gemm_wide.c — the prelude's GEMM with the 512-bit micro-tile (12 rows by two
 * 64-byte vectors), forced by TL_GEMM_WIDE so it runs on any machine (without AVX-512
 * GCC splits each vector in two): the same random shapes and edges as test_gemm.c,
 * against naive double loops. The kernels an AVX-512 CPU compiles take this layout. */
#define TL_GEMM 1
#define TL_GEMM_WIDE 1
#include "codegen/kernel_prelude.h"

#if TL_GEMM_MR != 12 || TL_GEMM_VBYTES != 64
#error "TL_GEMM_WIDE must select the 512-bit micro-tile"
#endif

#define GEMM_PREFIX gemm_wide_prelude_
#include "gemm_direct.h"
