/* render_gpu.h — GPU kernels for the opencl and cuda backends: a loop AST as one kernel
 * (render_gpu.c), from the same C-style text as render_c.c (render_cstyle.h), with the
 * language's prelude in front.
 * in: a lowered kernel and its target device; out: its source and the grid it runs on. */
#ifndef TL_CODEGEN_RENDER_GPU_H
#define TL_CODEGEN_RENDER_GPU_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/lower.h"

/* work-items in a group of an elementwise or reduction kernel on a GPU (a build may try
 * others: -DTL_GPU_GROUP_GPU_SIZE=512) */
#ifndef TL_GPU_GROUP_GPU_SIZE
#define TL_GPU_GROUP_GPU_SIZE 256
#endif

enum {
  TL_GPU_GROUP = 64, /* work-items in a group of an elementwise or reduction kernel (a CPU device) */
  TL_GPU_GROUP_GPU = TL_GPU_GROUP_GPU_SIZE, /* ... on a GPU */
  TL_GPU_TILE = 16,  /* a GEMM work-group is TILE x TILE work-items */
  TL_GPU_REG = 4,    /* each computes REG x REG elements of C */
  TL_GPU_CPU_ROWS = 8 /* on a CPU a work-item computes ROWS rows of one vector of C */
};

typedef enum { TL_GPU_OPENCL, TL_GPU_CUDA } tl_gpu_lang;

/* the device the kernels are for */
typedef struct tl_gpu_target {
  tl_gpu_lang lang;
  bool cpu; /* the host's CPU (PoCL): a GEMM in vector registers, no local memory; a
               GPU: tiles in local memory */
} tl_gpu_target;

/* the text every kernel of the language starts with: its words, then the scalar
 * semantics of core/scalar.h */
const char *tl_render_gpu_prelude(tl_gpu_lang lang);
/* the kernel `tl_kernel`: its arguments are each slot's buffer and byte offset (a
 * 64-bit word), then each random stream's key and counter (64-bit words); malloc'd,
 * NULL when out of memory */
char *tl_render_gpu(const tl_lowered *l, const tl_gpu_target *t);
/* the grid the kernel runs on: `dims` axes of global[d] work-items, in work-groups of
 * local[d] (global a multiple of local; local[0] 0: the driver's choice) */
void tl_render_gpu_grid(const tl_lowered *l, const tl_gpu_target *t, int *dims, size_t global[3], size_t local[3]);

#endif
