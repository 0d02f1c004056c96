/* context.h — the engine context and tensor handles (private to src/api). */
#ifndef TL_API_CONTEXT_H
#define TL_API_CONTEXT_H

#include "core/error.h"
#include "graph/build.h"
#include "runtime/backend.h"

enum { TL_API_MAX_BACKENDS = 8 }; /* instances a context keeps: one per backend used */

/* The head of every handle's memory. Handles live in slabs freed only by tl_shutdown,
 * so a stale handle still points at readable memory; the pointer given out carries
 * the slot's generation in its top 16 bits, and a slot bumps its generation when it
 * is freed, so a handle used after its object went is caught, not followed. */
typedef struct tl_slot {
  tl_ctx *ctx;
  struct tl_slot *free_next;
  uint16_t gen; /* 1..65535: the tag of the handle now (or next) given out */
  bool live;
} tl_slot;

typedef struct {
  size_t slot_size;
  void **slabs;
  int nslabs;
  size_t cap;
  tl_slot *free_head, *free_tail; /* first in, first out: a freed slot waits its turn */
} tl_slot_pool;

struct tl_ag_node;

struct tl_tensor {
  tl_slot slot;
  tl_uop *u;
  struct tl_ag_node *ag; /* autograd: its record (NULL: does not require grad) */
  int32_t refs;          /* the owner's reference plus one per tl_retain */
  bool kept;             /* goes to the parent scope when its scope ends */
  tl_scope *owner;       /* the scope that will release it; NULL once escaped */
  tl_tensor *prev, *next; /* in the owner's list, or the context's escaped list */
  uint64_t serial;       /* 1, 2, ... in creation order: names it in reports */
  const char *creator;   /* the API function that made it */
};

typedef enum { TL_SCOPE_OPEN, TL_SCOPE_DETACHED, TL_SCOPE_ENTERED } tl_scope_state;

struct tl_scope {
  tl_slot slot;
  tl_scope_state state;  /* OPEN: begun, nested; DETACHED/ENTERED: free-standing */
  tl_scope *parent;      /* the scope that was current when this one became current */
  tl_tensor *tensors;    /* the tensors it owns */
  tl_scope *prev, *next; /* every live scope of the context */
  int64_t ntensors;
  uint64_t serial;
  char name[40];
};

struct tl_ctx {
  tl_error err;
  tl_graph graph;          /* the tensor graph, refcounted */
  tl_backend *be;          /* the backend realizes run on (runtime/backend.h) */
  tl_backend backends[TL_API_MAX_BACKENDS]; /* an instance per backend used (i NULL: not yet), as
                                              the table orders them */
  tl_backend_opts opts;    /* settings every backend reads (their strings owned here) */
  uint64_t seed, rand_calls;
  tl_stats stats;
  tl_mem mem;
  /* handles and scopes (scope.c) */
  tl_slot_pool tensor_slots, scope_slots;
  tl_scope *current, *root; /* the innermost scope: new tensors go there */
  tl_scope *scopes;         /* every live scope */
  tl_tensor *escaped;       /* tensors no scope owns: the caller releases them */
  uint64_t tensor_serial, scope_serial;
  bool grad_disabled; /* tl_set_grad_enabled(ctx, 0): operations record nothing */
  bool debug;
  bool profile; /* TL_PROFILE: one line per kernel run on stderr, with its time */
  bool mem_report; /* TL_MEM_REPORT: the memory report at tl_shutdown */
  char *dot_dir;      /* tl_set_dot_dir: every realize writes a DOT file here */
  unsigned dot_count; /* realize-NNNN.dot files written */
};

/* Opens a handle given to the API: the tensor, or NULL (with an error naming `what`
 * when the handle is stale). A NULL handle gives NULL and leaves the error alone. */
tl_tensor *tl_api_tensor(const tl_tensor *handle, const char *what);
/* Handle of an internal tensor pointer, to give back to the caller. */
tl_tensor *tl_api_handle(tl_tensor *t);
/* Frees every handle and scope: tl_shutdown's first step. */
void tl_api_release_all(tl_ctx *ctx);
/* every kernel this context runs is cc's optimized build (compiled at once when not
 * cached), never libtcc's first tier: what `tl build` executables run */
void tl_api_set_optimized_only(tl_ctx *ctx);
/* Sets up the handle pools and opens the root scope. */
bool tl_api_scopes_init(tl_ctx *ctx);

/* Wraps a node built since `mark` in a new handle, then drops the temporaries.
 * NULL node: the error is already set; returns NULL. */
tl_tensor *tl_api_wrap(tl_ctx *ctx, const char *what, tl_uop *u, size_t mark);
/* The same for the result of an operation: the one place the tape records (grad.c).
 * op: an IR op (its row in graph/optab.def says what its derivative reads) or a
 * composite TL_AG_* (autograd.h), with its nin input handles and its parameters. */
tl_tensor *tl_api_wrap_op(tl_ctx *ctx, const char *what, tl_uop *u, size_t mark, int op, int nin,
                          tl_tensor *const *ins, const int64_t *params, int nparams);
/* One CONV2D node (graph/uop.h) of x [N, C, H, W] and w [O, C, kh, kw], one float
 * dtype, strides and paddings below TL_CONV_PARAM_LIMIT, the kernel within the padded
 * input: nn/conv.c checks all of it first. */
tl_tensor *tl_api_conv2d(tl_tensor *x, tl_tensor *w, int64_t sh, int64_t sw, int64_t ph, int64_t pw);
tl_tensor *tl_api_fail(tl_ctx *ctx, size_t mark, tl_status st, const char *fmt, ...) TL_PRINTF(4, 5);
/* Hands r to the caller's scope (tl_scope_return of s). A failure inside carries the
 * inner operation's name; `what: ` goes in front, so every message starts with the
 * public function the caller called (scope.c). */
tl_tensor *tl_api_finish(tl_ctx *ctx, tl_scope *s, tl_tensor *r, const char *what);
/* TL_MAX_NUMEL as messages give it */
#define TL_API_LIMIT_TEXT "2^40 (1099511627776)"
_Static_assert(TL_MAX_NUMEL == (int64_t)1 << 40, "TL_API_LIMIT_TEXT must name TL_MAX_NUMEL");

/* A shape every operation may make: sizes >= 0 and at most TL_MAX_NUMEL elements
 * (tl_shape_fits); false and an error saying how big it is otherwise. */
bool tl_api_shape_fits(tl_ctx *ctx, const char *what, int ndim, const int64_t *shape);
/* The same, allowing sizes -1 (reshape's inferred size), counted as 1. */
bool tl_api_shape_fits_infer(tl_ctx *ctx, const char *what, int ndim, const int64_t *shape);
/* The same for a count that is not a shape yet (arange's), described by `counted`. */
bool tl_api_count_fits(tl_ctx *ctx, const char *what, const char *counted, double count);
/* The instance of the backend that made b (the context's backend when none did). */
tl_backend *tl_api_backend_of(tl_ctx *ctx, const tl_buffer *b);
/* the context's instance of the backend `name` (made when first asked), or NULL with
 * the reason (unknown, or cannot run here) in ctx's error */
tl_backend *tl_api_backend_named(tl_ctx *ctx, const char *name);
/* b's bytes in host memory, to read or to write (a device backend's buffer: its host
 * copy, brought up to date; see backend.h host_view), or NULL with ctx's error set */
void *tl_api_host_data(tl_ctx *ctx, tl_buffer *b, bool write);
/* A buffer of the context's backend, or NULL and an out-of-memory error naming the size. */
tl_buffer *tl_api_buffer_new(tl_ctx *ctx, const char *what, tl_dtype dtype, int64_t numel);
/* its out-of-memory error (TL_ERR_NOMEM) */
tl_status tl_api_buffer_fail(tl_ctx *ctx, const char *what, tl_dtype dtype, int64_t numel);
/* The same on backend be. */
tl_buffer *tl_api_buffer_on(tl_ctx *ctx, tl_backend *be, const char *what, tl_dtype dtype, int64_t numel);
/* Records a failure that has no context to go to (no tensor given): tl_last_error(NULL). */
void tl_api_fail_orphan(tl_status st, const char *fmt, ...) TL_PRINTF(2, 3);
/* Normalizes a possibly negative axis; false (and an error) when out of range. */
bool tl_api_axis(tl_ctx *ctx, int ndim, int *axis, const char *what);
/* ops.c: numpy matmul of two nodes (NULL and an error on bad shapes). */
tl_uop *tl_api_matmul(tl_ctx *ctx, tl_uop *a, tl_uop *b);
/* realize.c: computes u and turns it into a buffer in place (constants stay). */
tl_status tl_api_realize_node(tl_ctx *ctx, tl_uop *u);
/* device.c: backward through a tl_to (TL_AG_TO): the gradient computed on the copy's
 * backend and copied to the input's */
tl_status tl_api_move_grad(tl_ctx *ctx, struct tl_ag_node *n);
/* device.c: a new buffer of `to` holding b's bytes (b is from's), through host memory;
 * NULL with ctx's error */
tl_buffer *tl_api_copy_between(tl_ctx *ctx, tl_backend *from, tl_backend *to, const tl_buffer *b);
/* device.c: a BUFFER node for b, shaped like `like` */
tl_uop *tl_api_buffer_node(tl_ctx *ctx, tl_buffer *b, const tl_uop *like);
/* realize.c: computes the nodes, in as few realizes as it can (tl_realize_many). */
tl_status tl_api_realize_nodes(tl_ctx *ctx, size_t n, tl_uop *const *us);

#endif
