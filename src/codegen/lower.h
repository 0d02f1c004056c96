/* lower.h — one scheduled kernel into a loop AST.
 * in: the kernel's root node (tensor graph) and the schedule (which other nodes are
 * buffers); out: a tree of loops and statements over scalar expressions of a
 * kernel graph, plus the kernel's arguments (slot 0 is the output).
 *
 * Every expression is placed in the outermost loop where all its loop variables
 * exist, so values that do not change along inner loops are computed once (a
 * row's max in a softmax is computed once per row). A reduce becomes an
 * accumulator and a loop nest of its own, placed the same way. */
#ifndef TL_CODEGEN_LOWER_H
#define TL_CODEGEN_LOWER_H

#include "core/error.h"
#include "core/limits.h"
#include "sched/schedule.h"

typedef enum { TL_STMT_DEFINE, TL_STMT_ACC, TL_STMT_UPDATE, TL_STMT_STORE, TL_STMT_LOOP } tl_stmt_kind;

typedef struct tl_block tl_block;
typedef struct tl_stmt {
  tl_stmt_kind kind;
  tl_uop *u;      /* DEFINE: the value; ACC/UPDATE: the accumulator; LOOP: its RANGE */
  tl_uop *value;  /* UPDATE, STORE */
  tl_uop *index;  /* STORE */
  int reduce_op;  /* ACC, UPDATE: TL_OP_RSUM / RMAX / RPROD */
  tl_block *body; /* LOOP */
  bool parallel;  /* LOOP: its range is split across threads */
  int64_t part;   /* parallel LOOP, >= 0: it is the part [part, part + extent) of the
                     parallel range (a SINK's nests of different shapes); -1: all of it */
} tl_stmt;

struct tl_block {
  tl_block *parent;
  int level;
  tl_stmt **items;
  int n, cap;
  tl_stmt *open; /* the child loop being filled: new statements go before it */
};

/* A matmul-shaped sum run by the prelude's GEMM (kernel_prelude.h): C[b][m, n] =
 * sum_k A[b][m, k] B[b][k, n] over strided operands, C the kernel's output. The
 * parallel range counts unit tiles of C (um x un), batch-major; see tl_gemm_run_*. */
typedef struct tl_gemm_plan {
  int slot_a, slot_b;  /* argument slots of the operands */
  int64_t off_a, off_b; /* elements from the slot's bound base to the operand's origin */
  int64_t m, n, k, sam, sak, sbk, sbn, ldc;
  int64_t um, un, gm, gn;
  int nbatch;
  int64_t bshape[TL_MAX_DIMS], bsa[TL_MAX_DIMS], bsb[TL_MAX_DIMS], bsc[TL_MAX_DIMS];
} tl_gemm_plan;

/* A SCATTER_ADD run by the prelude's routine (tl_scatter_add_*): out [rows, d] = 0,
 * then out[idx[i], :] += values[i, :] for i in [0, n); the parallel range is the rows. */
typedef struct tl_scatter_plan {
  int slot_values, slot_idx;
  int64_t n, rows, d;
} tl_scatter_plan;

/* A CONV2D run by the prelude's implicit GEMM (tl_conv_run_*, kernel_prelude_conv.h):
 * the fields of its tl_conv_desc (mode: the node's, or 3 for its forward at stride 1;
 * wino: a 3x3 kernel at stride 1 run as Winograd F(2x2, 3x3) on the CPU, the prelude's
 * modes 4-6); the parallel range counts its units. */
typedef struct tl_conv_plan {
  int slot_a, slot_b; /* the sources' argument slots */
  int mode, wino;
  int64_t n, c, h, w, o, kh, kw, oh, ow, sh, sw, ph, pw, unit, units;
} tl_conv_plan;

typedef struct tl_lowered {
  tl_graph g;          /* the kernel graph (arena) */
  tl_scatter_plan *scatter; /* not NULL: the kernel is this scatter-add (root is unused) */
  tl_conv_plan *conv;  /* not NULL: the kernel is this convolution (root is unused) */
  tl_gemm_plan *gemm;  /* not NULL: the kernel is this GEMM; root then holds its
                          epilogue, if any (below) */
  /* The epilogue: the kernel's root is elementwise over the GEMM's sums (bias, relu,
   * scale). root holds one pass over C's row m of batch bi, columns [begin, end) (the
   * parallel loop): RANGEs epi_bi and epi_m are its parameters, slot 0 holds the
   * sums and receives the results. */
  bool epilogue;
  int64_t epi_bi, epi_m;  /* RANGE ids */
  tl_block *root;
  int nargs;
  tl_uop *args[TL_KERNEL_MAX_ARGS]; /* tensor-graph node behind each slot */
  int64_t arg_offset[TL_KERNEL_MAX_ARGS]; /* elements: the slot is bound at data + offset */
  /* The random streams the kernel draws: UNIFORM nodes of the tensor graph, whose key
   * and stream (arg, arg2) are passed at run time as words 2j and 2j+1 of the kernel's
   * word block (see kernel.h), not compiled in: one kernel serves every draw. */
  tl_uop **rng;
  int nrng, caprng;
  int64_t work;        /* iterations of the parallel loop (1 if none) */
  int64_t inner_work;  /* scalar work per parallel iteration, for chunking */
  int next_name;
} tl_lowered;

tl_status tl_lower_kernel(tl_uop *root, const tl_schedule *s, tl_lowered *out, tl_error *err);
void tl_lowered_free(tl_lowered *l);

#endif
