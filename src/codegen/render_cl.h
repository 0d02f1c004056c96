/* render_cl.h — OpenCL C for the opencl backend: a loop AST as one kernel, from the
 * same C-style text as render_c.c (render_cstyle.h) in the OpenCL dialect.
 * in: a lowered kernel; out: its source (the OpenCL prelude in front) and the grid it
 * runs on. */
#ifndef TL_CODEGEN_RENDER_CL_H
#define TL_CODEGEN_RENDER_CL_H

#include <stddef.h>

#include "codegen/lower.h"

enum {
  TL_CL_GROUP = 64, /* work-items in a group of an elementwise or reduction kernel */
  TL_CL_TILE = 16   /* a GEMM work-group's tile of C is TILE x TILE */
};

/* the text every OpenCL kernel starts with: the scalar semantics of core/scalar.h */
const char *tl_render_cl_prelude(void);
/* the kernel `tl_kernel`: its arguments are each slot's buffer and byte offset
 * (ulong), then each random stream's key and counter (ulong); malloc'd, NULL when out
 * of memory */
char *tl_render_cl(const tl_lowered *l);
/* the grid the kernel runs on: `dims` axes of global[d] work-items, in work-groups of
 * local[d] (global a multiple of local) */
void tl_render_cl_grid(const tl_lowered *l, int *dims, size_t global[3], size_t local[3]);

#endif
