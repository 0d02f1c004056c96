/* test_conv_direct.c — the prelude's implicit-GEMM convolution with the build's own
 * vectors against double loops (conv_direct.h). */
#define TL_GEMM 1
#define TL_CONV 1
#include "codegen/kernel_prelude.h"

#define CONV_PREFIX conv_direct_
#include "conv_direct.h"
