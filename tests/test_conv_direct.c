/* test_conv_direct.c — the prelude's implicit-GEMM convolution with the build's own
 * vectors against double loops (conv_direct.h). */
#include <stddef.h>

/* the routine's workspace comes from here: it can be refused */
static int conv_malloc_fails;
static void *conv_test_malloc(size_t n);
#define TL_CONV_MALLOC conv_test_malloc
#define TL_GEMM 1
#define TL_CONV 1
#include "codegen/kernel_prelude.h"

#define CONV_PREFIX conv_direct_
#define CONV_MALLOC_HOOK 1
#include "conv_direct.h"

static void *conv_test_malloc(size_t n) { return conv_malloc_fails ? NULL : malloc(n); }
