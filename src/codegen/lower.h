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

#include "runtime/kernel.h"
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
} tl_stmt;

struct tl_block {
  tl_block *parent;
  int level;
  tl_stmt **items;
  int n, cap;
  tl_stmt *open; /* the child loop being filled: new statements go before it */
};

typedef struct tl_lowered {
  tl_graph g;          /* the kernel graph (arena) */
  tl_block *root;
  int nargs;
  tl_uop *args[TL_KERNEL_MAX_ARGS]; /* tensor-graph node behind each slot */
  int64_t arg_offset[TL_KERNEL_MAX_ARGS]; /* elements: the slot is bound at data + offset */
  int64_t work;        /* iterations of the parallel loop (1 if none) */
  int64_t inner_work;  /* scalar work per parallel iteration, for chunking */
  int next_name;
} tl_lowered;

/* A sum that runs fastest with its reduce loop outside the last output loop (a
 * matmul): it must be the root of its kernel, so the scheduler gives it one. */
bool tl_lower_wants_interchange(const tl_uop *reduce);
tl_status tl_lower_kernel(tl_uop *root, const tl_schedule *s, tl_lowered *out, tl_error *err);
void tl_lowered_free(tl_lowered *l);

#endif
