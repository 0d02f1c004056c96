/* render_gpu_gemm.h — the GEMM kernels of render_gpu.c (render_gpu_gemm.c): for a CPU
 * device, vectors of C in registers; for a GPU, tiles of A and B in local memory, of
 * 64 x 64 (small products) or 128 x 128 with double buffering (large f32 ones); a
 * forward f32 convolution as an implicit GEMM of the same kind.
 * in: a lowered kernel with a GEMM plan, its target; out: the kernel's body, its grid. */
#ifndef TL_CODEGEN_RENDER_GPU_GEMM_H
#define TL_CODEGEN_RENDER_GPU_GEMM_H

#include "codegen/render_gpu.h"
#include "core/strbuf.h"

/* the body of `tl_kernel` after its pointers (b0 is C) */
void tl_render_gpu_gemm(tl_strbuf *s, const tl_lowered *l, const tl_gpu_target *t);
/* its grid: dims axes of global work-items in groups of local (local[0] 0: the driver's choice) */
void tl_render_gpu_gemm_grid(const tl_lowered *l, const tl_gpu_target *t, int *dims, size_t global[3], size_t local[3]);

/* a forward f32 CONV2D on a GPU: an implicit GEMM (its windows gathered into tiles) */
bool tl_render_gpu_conv_gemm(const tl_lowered *l, const tl_gpu_target *t);
void tl_render_gpu_conv(tl_strbuf *s, const tl_lowered *l);
void tl_render_gpu_conv_grid(const tl_lowered *l, int *dims, size_t global[3], size_t local[3]);

#endif
