/* test_conv_wide.c — the prelude's implicit-GEMM convolution with the 512-bit micro-tile
 * (TL_GEMM_WIDE, as test_gemm_wide.c) against double loops (conv_direct.h). */
#define TL_GEMM 1
#define TL_CONV 1
#define TL_GEMM_WIDE 1
#include "codegen/kernel_prelude.h"

#if TL_GEMM_MR != 12 || TL_GEMM_VBYTES != 64
#error "TL_GEMM_WIDE must select the 512-bit micro-tile"
#endif

#define CONV_PREFIX conv_wide_
#include "conv_direct.h"
