/* autograd.h — reverse-mode differentiation over the operations of the API.
 *
 * Every public operation on a tensor requiring grad records a tl_ag_node: what the
 * operation was, the records of its inputs and the values its gradient rule reads
 * (graph nodes, retained: realizing a node in place keeps its value, so a record never
 * loses what it saved). Records are refcounted and held by the handles of the
 * tensors they made; tl_backward walks them from the loss in reverse topological
 * order and builds each input's gradient as a graph (grad_rules.c). */
#ifndef TL_AUTOGRAD_H
#define TL_AUTOGRAD_H

#include "api/context.h"

/* The operations with a gradient rule: primitives by their IR op, the rest here. */
typedef enum {
  TL_AG_LEAF = TL_NOPS, /* a tensor requiring grad made by no recorded operation */
  TL_AG_UNARY,      /* p[0]: the IR op (NEG, EXP, ..., RELU, GELU, ABS) */
  TL_AG_BINARY,     /* p[0]: ADD SUB MUL DIV POW MAX MIN */
  TL_AG_WHERE,      /* inputs: cond, a, b */
  TL_AG_CAST,
  TL_AG_REDUCE,     /* p[0]: kind (sum prod max min mean), p[1]: axes mask, p[2]: keepdim */
  TL_AG_SOFTMAX,    /* p[0]: axis, p[1]: log form */
  TL_AG_RESHAPE,
  TL_AG_PERMUTE,    /* p[0..n): the permutation */
  TL_AG_EXPAND,
  TL_AG_SHRINK,     /* p[0..n): begin, p[n..2n): end */
  TL_AG_SLICE,      /* p: axis, start, stop, step */
  TL_AG_PAD,        /* p[0..n): before, p[n..2n): after */
  TL_AG_FLIP,       /* p[i]: axis i flipped */
  TL_AG_CAT,        /* p[0]: axis; n inputs */
  TL_AG_CONTIGUOUS,
  TL_AG_MATMUL,
  TL_AG_GATHER,     /* inputs: table, indices (no gradient) */
} tl_ag_op;

/* reduction kinds recorded by TL_AG_REDUCE (the API's, before lowering) */
enum { TL_AG_SUM, TL_AG_PROD, TL_AG_MAX, TL_AG_MIN, TL_AG_MEAN };

typedef struct tl_ag_node tl_ag_node;

typedef struct {
  tl_ag_node *fn; /* the input's record; NULL: no gradient flows there */
  tl_uop *value;  /* the input's value, kept when the rule reads it */
  tl_dtype dtype;
  int ndim;
  int64_t shape[TL_MAX_DIMS];
} tl_ag_input;

struct tl_ag_node {
  int32_t refs;
  int op;
  int nin;
  tl_uop *out;   /* the output's value, kept when the rule reads it */
  tl_uop *grad;  /* a leaf's accumulated gradient; others: during backward only */
  tl_dtype dtype; /* the output's */
  int ndim;
  int64_t shape[TL_MAX_DIMS];
  int64_t p[2 * TL_MAX_DIMS + 2];
  bool saved;     /* every value saved by it and by the records under it is computed */
  tl_ag_input in[];
};

/* which values a record keeps */
enum { TL_AG_SAVE_IN0 = 1, TL_AG_SAVE_IN1 = 2, TL_AG_SAVE_IN2 = 4, TL_AG_SAVE_OUT = 8 };

/* Records out = op(ins) when grad mode is on and an input requires grad; returns
 * out (a handle, or NULL when the operation failed) either way. */
tl_tensor *tl_ag_record(tl_tensor *out, int op, int nin, tl_tensor *const *ins, const int64_t *params,
                        int nparams, unsigned save);
void tl_ag_release(tl_ctx *ctx, tl_ag_node *n);
/* The values the history under root saved for backward and not yet computed (views
 * stripped to the values they view), each once, every one after those it reads; into a
 * malloc'd array (false: out of memory). Realize computes them with the tensor itself,
 * so that backward finds them computed (instead of the forward pass running once for
 * the value and again for the gradients), then marks the history saved: later
 * realizes walk only what was added since. Autograd never realizes for it. */
bool tl_ag_history_values(tl_ag_node *root, tl_uop ***values, size_t *n);
void tl_ag_mark_history_saved(tl_ag_node *root);

/* grad_rules.c: the gradients of n's inputs given g, the gradient of its output
 * (graph nodes of the tensor graph, temporaries). grads[i] stays NULL for inputs
 * that need none. false: out of memory or an internal error (message set). */
bool tl_ag_input_grads(tl_ctx *ctx, const tl_ag_node *n, tl_uop *g, tl_uop **grads);

/* ops.c: numpy matmul of two nodes (NULL and an error on bad shapes). */
tl_uop *tl_api_matmul(tl_ctx *ctx, tl_uop *a, tl_uop *b);
/* realize.c: computes u and turns it into a buffer in place (constants stay). */
tl_status tl_api_realize_node(tl_ctx *ctx, tl_uop *u);
/* realize.c: computes the nodes, in as few realizes as it can (tl_realize_many). */
tl_status tl_api_realize_nodes(tl_ctx *ctx, size_t n, tl_uop *const *us);

#endif
