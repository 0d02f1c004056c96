/* form.h — the loop form of a kernel, chosen by the scheduler and recorded in the
 * schedule for the lowering to read (the lowering decides nothing about it).
 * in: a kernel's root (tensor graph) and which nodes are the kernel's inputs; out:
 *   TL_FORM_LOOPS        nested output loops around the store
 *   TL_FORM_INTERCHANGE  a sum read along rows (a matmul below GEMM size): the reduce
 *                        loop outside the last output loop, which walks with stride 1
 *   TL_FORM_GEMM         a float matmul-shaped sum run by the prelude's GEMM, the
 *                        kernel's root or under its elementwise epilogue */
#ifndef TL_SCHED_FORM_H
#define TL_SCHED_FORM_H

#include "graph/uop.h"

typedef enum { TL_FORM_LOOPS, TL_FORM_INTERCHANGE, TL_FORM_GEMM } tl_form_kind;

/* C[b][m, n] = sum_k A[b][m, k] B[b][k, n]: the operand views and the sum's axes */
typedef struct {
  const tl_uop *a, *b;
  int md, nd, kd; /* M (-1: M is 1), N, K */
} tl_gemm_roles;

typedef struct {
  tl_form_kind kind;
  int axis;          /* INTERCHANGE: the last output axis, the inner loop */
  int64_t blocks;    /* INTERCHANGE with no other output axis (a column sum): the parallel
                        loop's blocks of that axis; 1 otherwise */
  const tl_uop *sum; /* GEMM: the sum (the root, or read by the root's epilogue) */
  tl_gemm_roles roles;
} tl_kernel_form;

/* A sum the prelude's GEMM runs (float, one reduced axis, the product of two plain
 * strided views, big enough). It must be the root of its kernel, and its operands'
 * sources (r->a->src[0], r->b->src[0]) buffers, so the scheduler realizes them. */
bool tl_form_gemm_roles(const tl_uop *sum, tl_gemm_roles *r);
/* What the scheduler tells the forms: whether kernels run on host threads, and which
 * nodes another kernel computes (read from a buffer, as its views say) */
typedef struct {
  bool host;
  bool (*computed)(const void *sched, const tl_uop *u);
  const void *sched;
} tl_form_ctx;
/* The last output axis, if the sum runs best with its reduce loop outside it; -1 if
 * not. Such a sum must be the root of its kernel, so the scheduler gives it one. A sum
 * whose only output axis is that one (a column sum: a bias's gradient) qualifies only
 * on host threads (fc->host), where the axis is cut into blocks for them; a device grid
 * runs one work-item per column better. fc may be NULL (neither). */
int tl_form_interchange_axis(const tl_uop *sum, const tl_form_ctx *fc);
/* ... and the parallel loop's blocks of that axis (tl_kernel_form.blocks) */
int64_t tl_form_interchange_blocks(const tl_uop *sum, int axis);
/* Whether root, an elementwise node, may compute its value as the epilogue of the
 * GEMM `view` reads: view only reshapes the sum (drops size-1 axes: it reads it at
 * the output's own index) and the types agree. */
bool tl_form_epilogue_view(const tl_uop *root, const tl_uop *view);
/* Whether u, elementwise, reads a GEMM's sum at its own index through elementwise
 * nodes alone (a layer's bias and activation): realized alone, u is that GEMM's
 * epilogue (schedule.c); as one value of a SINK it cannot be, and costs the GEMM's
 * result a pass of its own. */
bool tl_form_gemm_epilogue(const tl_uop *u);

#endif
