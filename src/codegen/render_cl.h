/* render_cl.h — OpenCL C for the opencl backend: a loop AST as one kernel, from the
 * same C-style text as render_c.c (render_cstyle.h) in the OpenCL dialect.
 * in: a lowered kernel; out: its source (the OpenCL prelude in front) and the grid it
 * runs on. */
#ifndef TL_CODEGEN_RENDER_CL_H
#define TL_CODEGEN_RENDER_CL_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/lower.h"

enum {
  TL_CL_GROUP = 64, /* work-items in a group of an elementwise or reduction kernel */
  TL_CL_TILE = 16,  /* a GEMM work-group is TILE x TILE work-items */
  TL_CL_REG = 4,    /* each computes REG x REG elements of C */
  TL_CL_CPU_ROWS = 8 /* on a CPU a work-item computes ROWS rows of one vector of C */
};

/* the device the kernels are for */
typedef struct tl_cl_target {
  bool cpu; /* the host's CPU (PoCL): a GEMM in vector registers, no local memory; a
               GPU: tiles in local memory */
} tl_cl_target;

/* the text every OpenCL kernel starts with: the scalar semantics of core/scalar.h */
const char *tl_render_cl_prelude(void);
/* the kernel `tl_kernel`: its arguments are each slot's buffer and byte offset
 * (ulong), then each random stream's key and counter (ulong); malloc'd, NULL when out
 * of memory */
char *tl_render_cl(const tl_lowered *l, const tl_cl_target *t);
/* the grid the kernel runs on: `dims` axes of global[d] work-items, in work-groups of
 * local[d] (global a multiple of local) */
void tl_render_cl_grid(const tl_lowered *l, const tl_cl_target *t, int *dims, size_t global[3], size_t local[3]);

#endif
