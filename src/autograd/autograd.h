/* autograd.h — the tape: reverse-mode differentiation over the tensor graph.
 *
 * The API records each operation on tensors requiring grad, in one place
 * (tl_api_wrap_op, api/grad.c), as a tl_ag_node: the op, the records of its inputs and
 * the values its derivative reads (graph nodes, retained: realizing a node in place
 * keeps its value, so a record never loses what it saved). An op is an IR op, whose
 * derivative and saved operands are its row of the op table (graph/optab.def), or one
 * of the composite operations below, whose rules are in grad_rules.c. Records are
 * refcounted and held by the handles of the tensors they made.
 *
 * The API drives backward (api/grad.c): autograd orders the records, lists the values
 * they saved (the API computes them) and builds each record's input gradients as
 * graphs. Autograd reads the graph layer only: it never realizes and knows no handle. */
#ifndef TL_AUTOGRAD_H
#define TL_AUTOGRAD_H

#include "core/error.h"
#include "graph/uop.h"

/* The composite operations (an IR op records as itself). */
typedef enum {
  TL_AG_LEAF = TL_NOPS, /* a tensor requiring grad made by no recorded operation */
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
  TL_AG_MATMUL,
  TL_AG_GATHER,     /* inputs: table, indices (no gradient) */
  TL_AG_TO,         /* a copy into another backend's memory: p[0] the input's backend, p[1] the
                       output's (1 + their index in the table). The gradient passes as it is;
                       the API moves it back (api/grad.c) */
  TL_AG_CONV2D,     /* inputs: x, w; p: sh, sw, ph, pw (graph/build.h: tl_build_conv2d) */
  TL_AG_SCATTER_ADD, /* inputs: values [I..., D], indices (no gradient): rows added into a zero */
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
  bool retain;    /* a non-leaf a handle holds while backward runs: keeps its gradient */
  tl_uop *kept;   /* ... that gradient, accumulated over backward calls (tl_grad reads it) */
  bool kept_sum;  /* kept sums several backward calls' gradients (computed at once, so no
                     chain of sums grows); one call's stays lazy until something reads it */
  tl_ag_input in[];
};

/* ---- recording (the API's tl_api_wrap_op) ---- */
/* A record of out = op(nin inputs, params): keeps out when op's rule reads it; NULL:
 * out of memory. Its inputs follow, each by tl_ag_set_input. */
tl_ag_node *tl_ag_new(int op, const int64_t *params, int nparams, tl_uop *out, int nin);
/* input i: its record (NULL: it takes no gradient) and its value, kept when read */
void tl_ag_set_input(tl_ag_node *n, int i, tl_ag_node *fn, tl_uop *value);
tl_ag_node *tl_ag_leaf(tl_dtype dtype, int ndim, const int64_t *shape);
void tl_ag_release(tl_graph *g, tl_ag_node *n);
/* TL_READS_* (graph/optab.h): what op's rule reads, with these params */
unsigned tl_ag_reads(int op, const int64_t *params);

/* ---- backward (driven by the API's tl_backward) ---- */
typedef struct {
  tl_ag_node **v;
  size_t n, cap;
} tl_ag_list;
/* Records reachable from root, every one after all of its inputs. skip_saved stops at
 * records whose history is computed already. false: out of memory. */
bool tl_ag_order(tl_ag_node *root, bool skip_saved, tl_ag_list *order);
bool tl_ag_list_add(tl_ag_list *l, tl_ag_node *n);
/* The values the records of order saved for backward and not yet computed (views
 * stripped to the values they view), each once, every one after those it reads; into a
 * malloc'd array (false: out of memory). */
bool tl_ag_saved_values(const tl_ag_list *order, tl_uop ***values, size_t *n);
void tl_ag_mark_saved(const tl_ag_list *order);
/* The same from a root: realize computes them with the tensor itself, so that backward
 * finds them computed (instead of the forward pass running once for the value and
 * again for the gradients), then marks the history saved: later realizes walk only what
 * was added since. */
bool tl_ag_history_values(tl_ag_node *root, tl_uop ***values, size_t *n);
void tl_ag_mark_history_saved(tl_ag_node *root);
/* n->grad += g (a new graph node; false: out of memory) */
bool tl_ag_accumulate(tl_graph *g, tl_ag_node *n, tl_uop *grad);
/* n->kept += n->grad (a retained non-leaf, before its step releases the gradient);
 * sets n->kept_sum when it adds to an earlier call's */
bool tl_ag_keep(tl_graph *g, tl_ag_node *n);
/* how many of n's inputs take a gradient: over one, n->grad is read by several rules */
int tl_ag_inputs_needing_grad(const tl_ag_node *n);
/* One step of backward: the gradients of n's inputs from n->grad (grad_rules.c),
 * accumulated into their records; n->grad is dropped. false: out of memory or an
 * internal error (message set in err). */
bool tl_ag_step(tl_graph *g, tl_error *err, tl_ag_node *n);

/* grad_rules.c: the gradients of n's inputs given g, the gradient of its output
 * (graph nodes of the tensor graph, temporaries). grads[i] stays NULL for inputs
 * that need none. false: out of memory or an internal error (message set). */
bool tl_ag_input_grads(tl_graph *g, tl_error *err, const tl_ag_node *n, tl_uop *grad, tl_uop **grads);

#endif
