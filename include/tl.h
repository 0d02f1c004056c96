/* tl.h — the public C API of the TL tensor engine.
 *
 * Tensors are lazy: every operation returns a handle to a node of a graph and
 * computes nothing. tl_realize() (or reading data back) schedules the graph into
 * fused kernels, generates C for them, compiles (cached on disk) and runs them.
 *
 * Ownership: every tensor belongs to a scope, the one current when it was made
 * (tl_init opens the root scope). Ending a scope releases its tensors, except those
 * kept for its parent; tl_release() lets one go earlier. Inputs are borrowed, never
 * consumed. Handles are checked: a released handle used again is an error, not a crash.
 *
 * Errors: a function that fails returns NULL (or a non-zero tl_status) and sets a
 * message read with tl_last_error(ctx). A function given a NULL input returns NULL
 * without touching the message, so a chain of calls can be checked once, at its end.
 * One that fails with no context in reach (tl_cat(0, NULL, 0), tl_sgd with no
 * parameters) leaves its message for this thread in tl_last_error(NULL).
 */
#ifndef TL_H
#define TL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TL_API marks what libtl.so exports: the library is compiled with -fvisibility=hidden,
 * so every function of this header (and of the run time that compiled TL programs call,
 * src/lang/rt/rt.h and rt_ops.h) carries it, and nothing else is exported. */
#ifndef TL_API
#if defined(__GNUC__) || defined(__clang__)
#define TL_API __attribute__((visibility("default")))
#else
#define TL_API
#endif
#endif

#define TL_MAX_DIMS 8
/* The most elements a tensor may hold: 2^40. Every shape an operation makes is checked
 * against it (creation, broadcasting, reshape, expand, pad, cat, stack, matmul's
 * result, arange, eye), lazy ones included, so element counts, strides and byte sizes
 * never overflow; a shape over it is a TL_ERR_RANGE error that says how big it is.
 * Sizes of 0 aside, the product of a shape's sizes must fit too. */
#define TL_MAX_NUMEL ((int64_t)1 << 40)

typedef struct tl_ctx tl_ctx;
typedef struct tl_tensor tl_tensor;
typedef struct tl_scope tl_scope;

/* Element types. The first five keep their numbers; the rest were added after them.
 * Integers wrap; f16 (IEEE binary16) and bf16 (bfloat16) are storage types: every op
 * computes them in f32 and rounds the result to nearest even. */
typedef enum {
  TL_BOOL, TL_I32, TL_I64, TL_F32, TL_F64,
  TL_I8, TL_I16, TL_U8, TL_U16, TL_U32, TL_U64, TL_F16, TL_BF16,
  TL_NDTYPES
} tl_dtype;

typedef enum {
  TL_OK = 0,
  TL_ERR_ARG,      /* a bad argument: NULL where a value is needed, bad count */
  TL_ERR_SHAPE,    /* shapes that do not match or cannot broadcast */
  TL_ERR_DTYPE,    /* a dtype an operation does not accept */
  TL_ERR_AXIS,     /* an axis outside the tensor's rank */
  TL_ERR_RANGE,    /* a slice, index or size out of range */
  TL_ERR_COMPILER, /* the C compiler is missing or failed */
  TL_ERR_CACHE,    /* the kernel cache directory cannot be used */
  TL_ERR_BACKEND,  /* unknown backend name, or a backend that cannot run here */
  TL_ERR_NOMEM,    /* out of memory */
  TL_ERR_INTERNAL, /* a bug in TL: please report it */
  TL_ERR_IO,       /* a file cannot be opened, read, written or replaced */
  TL_ERR_FORMAT    /* a file is malformed, or in a form TL does not read */
} tl_status;

/* ---- context ---------------------------------------------------------------
 * One context holds all engine state: node tables, kernel cache, thread pool.
 * Environment: TL_BACKEND (cpu|interp: tl_set_backend), TL_CACHE_DIR, TL_CC, TL_CFLAGS,
 * TL_THREADS, TL_DEBUG=1 (print generated kernels to stderr), TL_DOT_DIR (tl_set_dot_dir).
 * NULL when out of memory or TL_BACKEND names no backend that can run here:
 * tl_last_error(NULL) says which. */
TL_API tl_ctx *tl_init(void);
/* Frees everything, tensors still held included: no handle may be used after it. */
TL_API void tl_shutdown(tl_ctx *ctx);
/* ctx NULL: the last failure in this thread that had no context to record it in
 * ("no context" if none); tl_clear_error(NULL) clears it. */
TL_API const char *tl_last_error(const tl_ctx *ctx);
TL_API tl_status tl_last_status(const tl_ctx *ctx);
TL_API void tl_clear_error(tl_ctx *ctx);
/* Backends: "cpu" (compiled C kernels, the default) or "interp" (the reference
 * interpreter). tl_set_backend: later realizes run there; TL_ERR_BACKEND, with the
 * reason in tl_last_error(ctx), for a name that is unknown ("unknown backend 'x'
 * (expected cpu or interp)") or a backend that cannot run here ("backend 'opencl' is
 * not available: ..."); the context's backend is then unchanged, never another. */
TL_API tl_status tl_set_backend(tl_ctx *ctx, const char *name);
TL_API const char *tl_backend_name(const tl_ctx *ctx);
/* the same check with no context: TL_OK, or TL_ERR_BACKEND and tl_last_error(NULL) */
TL_API tl_status tl_backend_usable(const char *name);
/* Every backend this build knows, usable here or not (`tl devices`): the name of the
 * index-th from 0, or NULL past the last; *about: a line saying what it is;
 * *unavailable: NULL when it can run here, else why not. */
TL_API const char *tl_backend_info(int index, const char **about, const char **unavailable);
TL_API tl_status tl_set_cache_dir(tl_ctx *ctx, const char *path);
TL_API tl_status tl_set_compiler(tl_ctx *ctx, const char *cc); /* a cc path, or "tcc" for libtcc */
/* Pictures: every realize from now on writes DIR/realize-0001.dot, -0002, ... (Graphviz
 * DOT: the graph being realized, each kernel of its schedule a cluster named as the
 * kernel runs, buffers as boxes). DIR is created if missing (its parent must exist);
 * an error naming the reason when it cannot be created or is not a writable directory.
 * NULL or "" stops it. The environment variable TL_DOT_DIR sets it at tl_init. */
TL_API tl_status tl_set_dot_dir(tl_ctx *ctx, const char *dir);
TL_API void tl_manual_seed(tl_ctx *ctx, uint64_t seed);

typedef struct {
  uint64_t kernels_run;      /* kernels executed */
  uint64_t kernels_compiled; /* C compilations (cache misses on disk and in memory) */
  uint64_t disk_cache_hits;  /* kernels loaded from the on-disk cache */
  uint64_t mem_cache_hits;   /* kernels found already loaded in this process */
  uint64_t disk_cache_rejects; /* corrupt, truncated or foreign entries rebuilt */
  uint64_t cache_dir_repairs;  /* the cache directory had a mode other than 0700: made 0700 */
  uint64_t kernel_cache_fallback; /* 1: the cache directory is unusable (read-only, full,
                                     another user's): kernels go to a private temp dir */
  uint64_t kernels_tier1;    /* of kernels_compiled, by libtcc in memory (tiered compilation) */
  uint64_t kernels_tier2;    /* kernels built by cc -O3 for requests, at once or in the background */
  uint64_t kernel_swaps;     /* tier-1 kernels whose code was replaced by the tier-2 build */
  uint64_t compile_batches;  /* cc invocations building those (several kernels each) */
  uint64_t realizes;         /* realize calls that computed something */
  uint64_t realize_replays;  /* of them, replays: a graph of a structure realized before ran
                                its recorded kernels, with no rewrite, schedule or compile */
  uint64_t replay_plans;     /* recorded realizes kept for replay (bounded) */
  /* memory: handles */
  uint64_t live_tensors;     /* tensor handles alive */
  uint64_t tensors_created;  /* tensor handles made since tl_init */
  uint64_t retains;          /* handle references taken (a creation counts as one) */
  uint64_t releases;         /* handle references dropped (scope ends included) */
  uint64_t open_scopes;      /* scopes begun or made and not yet ended or freed (root included) */
  /* memory: graph and buffers */
  uint64_t live_nodes;       /* graph nodes alive */
  uint64_t live_buffers;     /* buffers alive */
  uint64_t live_bytes;       /* bytes in live buffers */
  uint64_t peak_bytes;       /* the most bytes live at once (since tl_init or tl_mem_reset_peak) */
  uint64_t buffer_mallocs;   /* buffer memory taken from the system (not the cache) */
  uint64_t buffer_frees;     /* buffer memory given back to the system */
  uint64_t buffer_cache_hits; /* buffer memory reused from the cache */
  uint64_t cached_bytes;     /* freed buffer memory the cache keeps for reuse */
  uint64_t plan_arena_bytes; /* last realize: the arena holding its intermediates */
  uint64_t plan_naive_bytes; /* last realize: the intermediates' sizes added up */
  uint64_t arena_bytes_total; /* all realizes: arena bytes planned, added up */
  /* device memory (backends whose buffers live on a device: opencl); the buffers and
   * bytes above count them too, as tensors see them */
  uint64_t device_buffers;   /* device allocations live (the cache's included) */
  uint64_t device_bytes;     /* their bytes */
  uint64_t device_peak_bytes; /* the most device bytes live at once */
  uint64_t device_allocs;    /* device allocations made, all told (a steady loop adds none) */
  uint64_t device_cached_bytes; /* freed device memory kept for reuse */
} tl_stats;
TL_API tl_stats tl_get_stats(const tl_ctx *ctx);
/* Returns the buffer memory cached for reuse to the system. */
TL_API void tl_mem_trim(tl_ctx *ctx);
/* Starts peak_bytes again from the bytes live now. */
TL_API void tl_mem_reset_peak(tl_ctx *ctx);

/* Prints the statistics and every object that would leak if the context were shut
 * down now (escaped or retained tensors never released, scopes other than the root
 * never ended or freed), each with what made it; returns how many there are. out may
 * be NULL to count only. TL_MEM_REPORT=1 prints it at tl_shutdown. */
TL_API size_t tl_mem_report(tl_ctx *ctx, FILE *out);

/* ---- scopes -----------------------------------------------------------------
 * Scopes nest: tl_scope_begin makes a scope current; tensors made while it is
 * current belong to it; tl_scope_end releases them, except those kept with
 * tl_scope_keep, which move to the parent. tl_scope_return(s, t) keeps t, ends s and
 * returns t: the way to hand one value back:
 *
 *   tl_tensor *dist(tl_ctx *ctx, tl_tensor *a, tl_tensor *b) {
 *     tl_scope *s = tl_scope_begin(ctx, "dist");
 *     tl_tensor *d = tl_sub(a, b);
 *     return tl_scope_return(s, tl_sqrt(tl_sum(tl_mul(d, d), 0, NULL, 0)));
 *   }
 *
 * Scopes end innermost first. A tensor of an outer scope is borrowed: releasing,
 * escaping or adopting it from an inner scope is an error. A free-standing scope
 * (tl_scope_new) is not current until entered and lives until tl_scope_free: for
 * values whose lifetime follows no block (a cache, a model's parameters). */
TL_API tl_scope *tl_scope_begin(tl_ctx *ctx, const char *name); /* name: for reports, may be NULL */
TL_API tl_status tl_scope_end(tl_scope *s);
TL_API tl_status tl_scope_keep(tl_scope *s, tl_tensor *t);       /* t goes to the parent at the end */
TL_API tl_tensor *tl_scope_return(tl_scope *s, tl_tensor *t);   /* keep t, end s, return t */
TL_API tl_scope *tl_scope_root(tl_ctx *ctx);    /* NULL once the root scope was ended */
TL_API tl_scope *tl_scope_current(tl_ctx *ctx); /* NULL when no scope is open */
TL_API tl_scope *tl_scope_new(tl_ctx *ctx, const char *name); /* free-standing */
TL_API tl_status tl_scope_enter(tl_scope *s); /* a free-standing scope becomes current */
TL_API tl_status tl_scope_leave(tl_scope *s); /* ... and stops being current */
TL_API tl_status tl_scope_free(tl_scope *s);  /* releases a free-standing scope and its tensors */
TL_API tl_status tl_scope_adopt(tl_scope *s, tl_tensor *t); /* s owns t from now on */
TL_API int64_t tl_scope_size(const tl_scope *s); /* the number of tensors s owns */
/* Runs a block in a new scope, ended when the block finishes normally. Leaving the
 * block with break, goto or return skips the end: use tl_scope_return there. */
#define TL_SCOPE(ctx, s) for (tl_scope *s = tl_scope_begin((ctx), __func__); s; tl_scope_end(s), s = NULL)

/* ---- handles --------------------------------------------------------------- */
/* One more reference: the tensor outlives its scope until tl_release drops it. */
TL_API tl_tensor *tl_retain(tl_tensor *t);
/* In the tensor's own scope (or for an escaped tensor): gives up the scope's reference
 * now (a tensor also held by tl_retain stays alive, escaped, until those references
 * go). For a tensor of another scope: drops a tl_retain reference, and is an error if
 * there is none (the tensor is borrowed). */
TL_API void tl_release(tl_tensor *t);
/* Drops a tl_retain reference, never the scope's: the release of a holder (an
 * optimizer) that does not know which scope it is called from. */
TL_API void tl_unretain(tl_tensor *t);
/* The references to this handle: its scope's (until released or escaped) plus one per
 * tl_retain. More than one: another holder sees every write through it (tl_data_mut
 * copies storage, never the handle); make a new handle (tl_detach) to write alone. */
TL_API int tl_handle_refs(const tl_tensor *t); /* 0 for NULL or a stale handle */
/* No scope owns t any more: the caller releases it with tl_release. */
TL_API tl_tensor *tl_escape(tl_tensor *t);
TL_API tl_ctx *tl_context(const tl_tensor *t);
TL_API int tl_ndim(const tl_tensor *t);
TL_API int64_t tl_dim(const tl_tensor *t, int axis); /* negative axes count from the end */
TL_API int64_t tl_numel(const tl_tensor *t);
TL_API tl_dtype tl_get_dtype(const tl_tensor *t);
TL_API const char *tl_dtype_name(tl_dtype dtype);
TL_API size_t tl_dtype_size(tl_dtype dtype);

/* ---- creation -------------------------------------------------------------- */
TL_API tl_tensor *tl_from_data(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape,
                        const void *data); /* copies the data */
TL_API tl_tensor *tl_full(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape, double value);
TL_API tl_tensor *tl_zeros(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape);
TL_API tl_tensor *tl_ones(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape);
TL_API tl_tensor *tl_scalar(tl_ctx *ctx, tl_dtype dtype, double value); /* 0-d */
TL_API tl_tensor *tl_arange(tl_ctx *ctx, tl_dtype dtype, double start, double stop, double step);
TL_API tl_tensor *tl_eye(tl_ctx *ctx, tl_dtype dtype, int64_t n);
TL_API tl_tensor *tl_rand(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape);  /* U[0,1) */
TL_API tl_tensor *tl_randn(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape); /* N(0,1) */

/* ---- elementwise ----------------------------------------------------------- */
TL_API tl_tensor *tl_neg(tl_tensor *a);
TL_API tl_tensor *tl_exp(tl_tensor *a);
TL_API tl_tensor *tl_log(tl_tensor *a);
TL_API tl_tensor *tl_log1p(tl_tensor *a); /* ln(1 + x), exact for small x */
TL_API tl_tensor *tl_expm1(tl_tensor *a); /* e^x - 1, exact for small x */
TL_API tl_tensor *tl_erf(tl_tensor *a);   /* the error function */
TL_API tl_tensor *tl_sqrt(tl_tensor *a);
TL_API tl_tensor *tl_sin(tl_tensor *a);
TL_API tl_tensor *tl_cos(tl_tensor *a);
TL_API tl_tensor *tl_tanh(tl_tensor *a);
TL_API tl_tensor *tl_sigmoid(tl_tensor *a);
TL_API tl_tensor *tl_relu(tl_tensor *a);
TL_API tl_tensor *tl_gelu(tl_tensor *a);      /* exact: x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) */
TL_API tl_tensor *tl_gelu_tanh(tl_tensor *a); /* the tanh approximation (torch's approximate='tanh') */
TL_API tl_tensor *tl_abs(tl_tensor *a);
TL_API tl_tensor *tl_reciprocal(tl_tensor *a);
TL_API tl_tensor *tl_logical_not(tl_tensor *a);

/* Binary operations broadcast like numpy and promote dtypes as torch does: bool <
 * integers < floats; two integers of one signedness give the wider, a signed and an
 * unsigned one the signed if it is wider, else the next wider signed (u8+i8 -> i16,
 * u32+i32 -> i64; u64 with a signed integer -> i64, wrapping values over 2^63 - 1);
 * two floats the wider, f16 with bf16 -> f32. Integer division truncates toward zero and
 * a division by zero gives 0 (the language layer reports it as an error). */
TL_API tl_tensor *tl_add(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_sub(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_mul(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_div(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_mod(tl_tensor *a, tl_tensor *b); /* integers only */
TL_API tl_tensor *tl_pow(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_maximum(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_minimum(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_lt(tl_tensor *a, tl_tensor *b); /* comparisons give bool */
TL_API tl_tensor *tl_le(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_gt(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_ge(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_eq(tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_ne(tl_tensor *a, tl_tensor *b);
/* tensor (op) scalar: the scalar takes the tensor's dtype */
TL_API tl_tensor *tl_add_scalar(tl_tensor *a, double s);
TL_API tl_tensor *tl_mul_scalar(tl_tensor *a, double s);
TL_API tl_tensor *tl_pow_scalar(tl_tensor *a, double s);
TL_API tl_tensor *tl_where(tl_tensor *cond, tl_tensor *a, tl_tensor *b);
TL_API tl_tensor *tl_cast(tl_tensor *a, tl_dtype dtype);

/* ---- reductions ------------------------------------------------------------
 * axes == NULL (naxes ignored) reduces over every axis. keepdim keeps reduced
 * axes with size 1. Sum and prod of bool and of every integer but u64 accumulate in i64
 * (torch); f16 and bf16 accumulate in f32 and round once; mean of integers is f32. */
TL_API tl_tensor *tl_sum(tl_tensor *a, int naxes, const int *axes, int keepdim);
TL_API tl_tensor *tl_prod(tl_tensor *a, int naxes, const int *axes, int keepdim);
TL_API tl_tensor *tl_max(tl_tensor *a, int naxes, const int *axes, int keepdim);
TL_API tl_tensor *tl_min(tl_tensor *a, int naxes, const int *axes, int keepdim);
TL_API tl_tensor *tl_mean(tl_tensor *a, int naxes, const int *axes, int keepdim);
TL_API tl_tensor *tl_argmax(tl_tensor *a, int axis, int keepdim); /* i64, first maximum */
TL_API tl_tensor *tl_argmin(tl_tensor *a, int axis, int keepdim);
TL_API tl_tensor *tl_softmax(tl_tensor *a, int axis);
TL_API tl_tensor *tl_log_softmax(tl_tensor *a, int axis);

/* ---- movement (views: no data is copied) -------------------------------------
 * reshape accepts one -1. shrink keeps [begin[i], end[i]) of every axis; slice does
 * it for one axis with Python-style negative indices and a positive step. */
TL_API tl_tensor *tl_reshape(tl_tensor *a, int ndim, const int64_t *shape);
TL_API tl_tensor *tl_permute(tl_tensor *a, const int *perm);
TL_API tl_tensor *tl_transpose(tl_tensor *a, int axis0, int axis1);
TL_API tl_tensor *tl_expand(tl_tensor *a, int ndim, const int64_t *shape);
TL_API tl_tensor *tl_shrink(tl_tensor *a, const int64_t *begin, const int64_t *end);
TL_API tl_tensor *tl_slice(tl_tensor *a, int axis, int64_t start, int64_t stop, int64_t step);
TL_API tl_tensor *tl_pad(tl_tensor *a, const int64_t *before, const int64_t *after, double value);
TL_API tl_tensor *tl_flip(tl_tensor *a, int naxes, const int *axes);
TL_API tl_tensor *tl_squeeze(tl_tensor *a, int axis); /* axis must have size 1 */
TL_API tl_tensor *tl_unsqueeze(tl_tensor *a, int axis);
TL_API tl_tensor *tl_cat(int n, tl_tensor *const *ts, int axis);
TL_API tl_tensor *tl_stack(int n, tl_tensor *const *ts, int axis);
/* a copy of a in a buffer of its own, computed when realized (a kernel boundary) */
TL_API tl_tensor *tl_contiguous(tl_tensor *a);
/* rows of table [V, D] picked by integer indices (i32 or i64, any shape [I...]):
 * [I..., D], out[i..., :] = table[indices[i...], :], O(N*D) with N the number of
 * indices. Lazy, so nothing checks the indices: one outside [0, V) reads the nearest
 * row (0 or V - 1), never memory outside the table; tl_embedding checks them first.
 * The table's gradient adds each picked row's gradient back into its row. */
TL_API tl_tensor *tl_gather_rows(tl_tensor *table, tl_tensor *indices);

/* ---- indexing, sorting and logical reductions (torch's; ops_index.c) -----------
 * gather: out[i][j][k] = a[index[i][j][k]][j][k] along axis (here 0); index (i32 or
 * i64) has a's rank, each of its sizes but axis's at most a's, and gives the result's
 * shape. scatter: a copy of a with out[index[i][j][k]][j][k] = src[i][j][k] (src's rank
 * and at least index's sizes; cast to a's dtype); where an index repeats, the last
 * (row-major) write wins and alone takes src's gradient; a's gradient is g where nothing
 * was written. Both read the indices to the host to check them: one outside
 * [0, size of axis) is TL_ERR_RANGE, named with its position. */
TL_API tl_tensor *tl_gather(tl_tensor *a, int axis, tl_tensor *index);
TL_API tl_tensor *tl_scatter(tl_tensor *a, int axis, tl_tensor *index, tl_tensor *src);
/* the same, adding (torch's scatter_add): every write counts; the gradient of each of
 * src's elements is the gradient where it went. Integers are added in f64. */
TL_API tl_tensor *tl_scatter_add(tl_tensor *a, int axis, tl_tensor *index, tl_tensor *src);
/* the indices (i64) that sort a along axis, stable (equal values keep their order),
 * ascending or descending; NaN counts as the largest value. Computed on the host. */
TL_API tl_tensor *tl_argsort(tl_tensor *a, int axis, int descending);
/* log(sum(exp(a))) over axes (NULL: all), shifted by the maximum so nothing overflows;
 * integers are computed in f32; all -inf gives -inf */
TL_API tl_tensor *tl_logsumexp(tl_tensor *a, int naxes, const int *axes, int keepdim);
/* bool: some element (every element) over axes (NULL: all) is nonzero; NaN is nonzero.
 * Over nothing: any is false, all is true. */
TL_API tl_tensor *tl_any(tl_tensor *a, int naxes, const int *axes, int keepdim);
TL_API tl_tensor *tl_all(tl_tensor *a, int naxes, const int *axes, int keepdim);
/* torch.roll: each axes[i] shifted by shifts[i] elements, wrapping around (negative
 * shifts go left); axes NULL: the flattened tensor by shifts[0] (n must be 1) */
TL_API tl_tensor *tl_roll(tl_tensor *a, int n, const int64_t *shifts, const int *axes);
/* torch.Tensor.repeat: a tiled reps[i] times along axis i; n >= a's rank, the extra
 * leading counts add axes (at most TL_MAX_DIMS - 1 counts); counts >= 0 */
TL_API tl_tensor *tl_repeat(tl_tensor *a, int n, const int64_t *reps);

/* ---- linear algebra ---------------------------------------------------------
 * numpy matmul semantics: 1-D operands are promoted and the added axis removed;
 * batch axes broadcast. */
TL_API tl_tensor *tl_matmul(tl_tensor *a, tl_tensor *b);

/* ---- autograd ----------------------------------------------------------------
 * A tensor requiring grad records, in every operation it takes part in, what
 * backward needs. tl_backward builds the gradient graphs (lazy and fused like any
 * other graph) and adds them to the .grad of every leaf requiring grad; gradients
 * accumulate across calls until tl_zero_grad. Leaves (tensors made by creation
 * functions, tl_detach or tl_assign, then tl_set_requires_grad) keep a gradient, and
 * so does a computed tensor that a live handle holds while tl_backward runs (torch's
 * retain_grad, for every held tensor); the others free theirs once used.
 * Realizing a tensor never loses its history. Ties of max/min (reductions and
 * maximum/minimum) share the gradient equally among the tied elements.
 * Not differentiable (their outputs never require grad): comparisons, logical_not,
 * mod, argmax/argmin, integer and bool results. */
/* Makes a float tensor a leaf requiring grad (on a tensor already requiring grad: a
 * no-op); off: only for leaves (a computed tensor is cut off with tl_detach). */
TL_API tl_status tl_set_requires_grad(tl_tensor *t, int on);
TL_API int tl_requires_grad(const tl_tensor *t);
TL_API tl_tensor *tl_detach(tl_tensor *t); /* the same values, no history, not requiring grad */
/* seed: d(out)/d(loss) with loss's shape; NULL for a loss of one element (seed 1). */
TL_API tl_status tl_backward(tl_tensor *loss, tl_tensor *seed);
/* A new handle to t's accumulated gradient (zeros before any backward reached it). An
 * error for a tensor that does not require grad. */
TL_API tl_tensor *tl_grad(tl_tensor *t);
TL_API tl_status tl_zero_grad(tl_tensor *t);
/* torch.nn.utils' clips of the gradients of n leaves (a leaf without a gradient yet is
 * skipped): clip_grad_value clamps each to [-clip, clip]; clip_grad_norm scales all by
 * min(1, max_norm / (total + 1e-6)), total the norm_type-norm (INFINITY: the largest
 * |g|) of all their elements together, written to *total_norm when not NULL. */
TL_API tl_status tl_clip_grad_value(int n, tl_tensor *const *params, double clip);
TL_API tl_status tl_clip_grad_norm(int n, tl_tensor *const *params, double max_norm, double norm_type, double *total_norm);
/* Off: operations record nothing (optimizer steps, evaluation). On by default. */
TL_API void tl_set_grad_enabled(tl_ctx *ctx, int on);
TL_API int tl_grad_enabled(const tl_ctx *ctx);
/* dst takes the value of src (same shape; cast to dst's dtype), keeping its identity:
 * requires-grad flag and gradient. dst must be a leaf; src's history is not kept. */
TL_API tl_status tl_assign(tl_tensor *dst, tl_tensor *src);

/* ---- training building blocks (built from the operations above) ----------------- */
/* Losses, averaged over every element (mse, bce) or over the batch (cross-entropy). */
TL_API tl_tensor *tl_mse_loss(tl_tensor *pred, tl_tensor *target);
/* logits [N, C] (float), targets [N] (integer class indices in [0, C)) */
TL_API tl_tensor *tl_cross_entropy(tl_tensor *logits, tl_tensor *targets);
/* prob and target of one shape, prob in (0, 1): clamped to [1e-7, 1 - 1e-7] */
TL_API tl_tensor *tl_binary_cross_entropy(tl_tensor *prob, tl_tensor *target);
/* normalizes over the last axis; gamma and beta ([D]) may be NULL */
TL_API tl_tensor *tl_layer_norm(tl_tensor *x, tl_tensor *gamma, tl_tensor *beta, double eps);
/* Linear algebra of small square matrices [.., n, n] (f32 or f64; batched over the
 * leading axes): LU with partial pivoting on the host, in f64. A singular matrix is
 * TL_ERR_ARG for inverse and solve; det gives 0. Each carries its gradient (torch's:
 * d inverse = -A^-1 dA A^-1, d det = sum(cofactors dA), dX = A^-1 (dB - dA X)). solve's
 * B is [.., n, k] with A's batch axes, or [n] beside one matrix. */
TL_API tl_tensor *tl_inverse(tl_tensor *a);
TL_API tl_tensor *tl_det(tl_tensor *a); /* the batch's shape: [..] */
TL_API tl_tensor *tl_solve(tl_tensor *a, tl_tensor *b);
/* Thin SVD of matrices [.., m, n] (f32/f64, finite; one-sided Jacobi on the host, in
 * f64): a = U diag(S) V^T, torch.linalg.svd(full_matrices=False) with V = Vh^T; U
 * [.., m, k], S [.., k] descending, V [.., n, k], k = min(m, n). Signs: each column of V
 * (of U when m < n) has its largest-|.| entry positive. eigh (numpy.linalg.eigh) of
 * symmetric matrices [.., n, n] (cyclic Jacobi): values [.., n] ascending, vectors
 * [.., n, n] in columns, each with its largest-|.| entry positive; a matrix whose
 * |a_ij - a_ji| exceeds 1e-5 of its largest |entry| is TL_ERR_ARG (within it, the mean
 * of the two is used). No gradient yet: an input requiring grad is TL_ERR_ARG. On
 * error the outputs are NULL and nothing is made. */
TL_API tl_status tl_svd(tl_tensor *a, tl_tensor **u, tl_tensor **s, tl_tensor **v);
TL_API tl_status tl_eigh(tl_tensor *a, tl_tensor **values, tl_tensor **vectors);
/* weight [V, D], indices integer of any shape -> [..., D]: tl_gather_rows after reading
 * the indices to the host to check them (an index outside [0, V) is an error, named) */
TL_API tl_tensor *tl_embedding(tl_tensor *weight, tl_tensor *indices);
/* 2-D convolution (cross-correlation, as PyTorch's conv2d) of x [N, C, H, W] with a
 * kernel w [O, C, kh, kw], x zero-padded by pad_h rows and pad_w columns on each side;
 * bias ([O]) may be NULL. The result is [N, O, OH, OW] with
 * OH = (H + 2*pad_h - kh) / stride_h + 1 (likewise OW). Strides must be positive, the
 * kernel at most 256 x 256 and no bigger than the padded input. */
TL_API tl_tensor *tl_conv2d(tl_tensor *x, tl_tensor *w, tl_tensor *bias, int64_t stride_h, int64_t stride_w,
                            int64_t pad_h, int64_t pad_w);
/* The maximum (mean) of each kh x kw window of x [N, C, H, W], windows stride_h rows
 * and stride_w columns apart, no padding: [N, C, (H - kh) / stride_h + 1, ...]. Ties
 * of max share the gradient equally. */
TL_API tl_tensor *tl_max_pool2d(tl_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w);
TL_API tl_tensor *tl_avg_pool2d(tl_tensor *x, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w);
/* training: zeroes each element with probability p (from the context's seed and call
 * counter, like tl_rand) and scales the rest by 1/(1-p); not training: x itself */
TL_API tl_tensor *tl_dropout(tl_tensor *x, double p, int training);
/* N(0, 2/fan_in) and U(-a, a) with a = sqrt(6/(fan_in+fan_out)), as leaves requiring grad */
TL_API tl_tensor *tl_kaiming_normal(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape, int64_t fan_in);
TL_API tl_tensor *tl_xavier_uniform(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape, int64_t fan_in,
                             int64_t fan_out);

/* Optimizers update their parameters in place (tl_assign) from their gradients. They
 * hold a reference to each parameter; their state lives until tl_optimizer_free. */
typedef struct tl_optimizer tl_optimizer;
TL_API tl_optimizer *tl_sgd(int n, tl_tensor *const *params, double lr, double momentum, double weight_decay);
/* Adam with L2 weight decay added to the gradient; AdamW with decoupled decay */
TL_API tl_optimizer *tl_adam(int n, tl_tensor *const *params, double lr, double beta1, double beta2, double eps,
                      double weight_decay);
TL_API tl_optimizer *tl_adamw(int n, tl_tensor *const *params, double lr, double beta1, double beta2, double eps,
                       double weight_decay);
TL_API tl_status tl_optimizer_step(tl_optimizer *opt);
TL_API tl_status tl_optimizer_zero_grad(tl_optimizer *opt);
TL_API void tl_optimizer_free(tl_optimizer *opt);

/* ---- evaluation and host access ---------------------------------------------- */
TL_API tl_status tl_realize(tl_tensor *t);
/* Realizes n tensors together: those of one dtype are computed by one kernel that
 * writes each of them, a loop nest per shape, reading what they share once (every
 * parameter of a model and its optimizer state in one pass). Each result is as
 * tl_realize's. NULL entries are an error. */
TL_API tl_status tl_realize_many(int n, tl_tensor *const *ts);
/* The backend whose memory holds t's values ("cpu", "opencl"; a value not computed yet:
 * the context's backend, where it will be). */
TL_API const char *tl_device(tl_tensor *t);
/* A new tensor with t's values in the memory of the backend `name` (computing t first;
 * a handle sharing t's values when they are there already). An unknown or unusable
 * backend is TL_ERR_BACKEND. The gradient flows back through it: the gradient is
 * computed on the copy's backend and copied to t's. */
TL_API tl_tensor *tl_to(tl_tensor *t, const char *name);
/* Copies the values, row-major, into dst (nbytes must equal numel * dtype size). */
TL_API tl_status tl_to_host(tl_tensor *t, void *dst, size_t nbytes);
/* Reads the single element of a tensor of numel 1 as a double. */
TL_API tl_status tl_item(tl_tensor *t, double *out);
/* Realizes t and returns its values, contiguous and row-major (numel * dtype size
 * bytes); NULL (and an error) on failure. Valid until t is released or written. */
TL_API const void *tl_data(tl_tensor *t);
/* The same, for writing in place: when the memory may be seen by anything else (another
 * handle or graph holding t's node, or another node holding its buffer), t first moves
 * to a copy of its own (copy-on-write), so a write is seen through this handle only (by
 * every holder of the handle: see tl_handle_refs). A unique tensor is not copied. NULL
 * and an error for a tensor that requires grad: its history reads the old values.
 * On a device backend (opencl) both return a host copy of the device's memory: writes
 * through it reach the device before the next realize reads t, so write before that,
 * and call tl_data_mut again to write after it. */
TL_API void *tl_data_mut(tl_tensor *t);

/* ---- printing and graphs: strings are malloc'd, free them with tl_free ---------- */
TL_API char *tl_format(tl_tensor *t); /* numpy-style, summarized with ... when large */
TL_API char *tl_format_precision(tl_tensor *t, int precision); /* numpy's precision= (default 8) */
TL_API tl_status tl_print(tl_tensor *t, FILE *out);
TL_API char *tl_graph_dot(tl_tensor *t);    /* the lazy graph behind t */
TL_API char *tl_schedule_dot(tl_tensor *t); /* the kernels that realizing t would run */
/* The number of kernels realizing t would run now (0 if it is already realized). */
TL_API int tl_schedule_count(tl_tensor *t);
TL_API void tl_free(void *p);

/* ---- tensor files: numpy .npy and safetensors ----------------------------------
 * Both store little-endian data in C order. Saving realizes the tensors (a view is
 * saved as its values) and writes a temporary file beside path, renamed over path once
 * complete: a failed save leaves no partial file, and an old file stays whole. Loaded
 * tensors are new leaves of the current scope. A file that is not what its header says
 * (truncated, a bad header, an absurd header length, a shape whose size disagrees with
 * the data or is over TL_MAX_NUMEL, a dtype TL lacks) is an error that names the file
 * and the problem, never a crash or an allocation bigger than the file:
 * TL_ERR_IO (cannot open, read or write), TL_ERR_FORMAT (malformed, or big-endian or
 * Fortran-order .npy data), TL_ERR_DTYPE (a dtype TL lacks), TL_ERR_RANGE (over
 * TL_MAX_NUMEL), TL_ERR_ARG (a name missing on load, bad arguments).
 *
 * .npy: numpy's format 1.0, or 2.0 when the header needs it (never for 8 axes); reads
 * 1.0 and 2.0. dtypes '|b1' '|i1' '<i2' '<i4' '<i8' '|u1' '<u2' '<u4' '<u8' '<f2' '<f4' '<f8'; bf16
 * has no numpy dtype: saving it is TL_ERR_DTYPE (cast to f32, or use .safetensors). */
TL_API tl_status tl_save_npy(tl_tensor *t, const char *path);
TL_API tl_tensor *tl_load_npy(tl_ctx *ctx, const char *path);
/* .safetensors: named tensors, dtypes BOOL I8 I16 I32 I64 U8 U16 U32 U64 F16 BF16 F32 F64. Saving writes the header
 * and the data in the order given; names must be distinct, valid UTF-8 and not
 * "__metadata__" (a file's __metadata__ is checked on load, then ignored). */
TL_API tl_status tl_save_safetensors(tl_ctx *ctx, const char *path, int n, const char *const *names,
                              tl_tensor *const *tensors);
/* Loads every tensor, sorted by name (byte order): *n of them, in *names and *tensors,
 * both NULL-terminated arrays the caller frees with tl_free (one call each: the names
 * array holds its strings); the tensors belong to the current scope. names or tensors
 * may be NULL: tensors NULL reads the names only. On failure *n is 0, the arrays are
 * NULL and no tensor is left behind. */
TL_API tl_status tl_load_safetensors(tl_ctx *ctx, const char *path, int *n, char ***names, tl_tensor ***tensors);
/* The tensor called name (the whole header is checked first); NULL and an error
 * listing the names there are if none is. */
TL_API tl_tensor *tl_load_safetensors_one(tl_ctx *ctx, const char *path, const char *name);

/* ==== distributed: data-parallel training over MPI (docs/distributed.md) ==========
 * A program started by mpirun (or mpiexec, srun) runs as N ranks: MPI (OpenMPI or MPICH)
 * is loaded at run time (TL_MPI_LIB, else libmpi.so.40, else libmpi.so.12), started on
 * first use (tl_dist_init, or any tl_dist_ call) from the thread that calls these
 * functions, and finalized at exit. Started alone the process is rank 0 of 1, MPI is never
 * loaded, and every call below works: a collective returns the tensor's values.
 * Collectives are called by every rank in the same order. Each first checks that the
 * ranks agree (the call, dtype, shape, root): a mismatch is an error on every rank
 * naming the call, never a hang. Cuda tensors' payloads go by NCCL (libnccl.so.2,
 * loaded at run time) when every rank can, else through host memory (TL_DIST_NCCL=0
 * forces that). Their results are new tensors without history. After
 * an error a rank that cannot go on calls tl_dist_abort, which ends the whole job. */
/* TL_OK; or TL_ERR_BACKEND when launched as N > 1 ranks and no MPI loads or starts */
TL_API tl_status tl_dist_init(void);
TL_API int tl_dist_rank(void);     /* 0 alone */
TL_API int tl_dist_size(void);     /* 1 alone */
TL_API int tl_dist_launched(void); /* 1 when a launcher's environment is present */
TL_API const char *tl_dist_library(void); /* "openmpi (libmpi.so.40)", "mpich (...)" or "none" */
/* the elementwise sum over the ranks (bool: "or"), on every rank */
TL_API tl_tensor *tl_dist_all_reduce(tl_tensor *t);
TL_API tl_tensor *tl_dist_all_reduce_mean(tl_tensor *t); /* f32 and f64 only */
TL_API tl_tensor *tl_dist_broadcast(tl_tensor *t, int root); /* root's values on every rank */
TL_API tl_status tl_dist_barrier(void);
/* this rank's rows of axis 0: [r n / N, (r + 1) n / N), a view (gradients flow through) */
TL_API tl_tensor *tl_dist_shard(tl_tensor *t);
/* Replaces each parameter's gradient (a leaf requiring grad; none counts as zeros) by
 * its mean over the ranks: gradients smaller than a bucket are packed into buckets of
 * TL_DIST_BUCKET_MB MiB (default 4), one all-reduce each, and become views of them;
 * larger ones are summed straight into their new buffers. N ranks on equal shards of a batch then step as one
 * process on the whole batch. Every rank passes the same parameters in the same order. */
TL_API tl_status tl_dist_sync_grads(int n, tl_tensor *const *params);
TL_API void tl_dist_set_bucket_bytes(size_t bytes);
/* Prints "rank R: message" on out (NULL: stderr) and, when MPI runs, ends every rank
 * with MPI_Abort, exit status 1. Returns when MPI is not running: the caller exits. */
TL_API void tl_dist_abort(const char *message, FILE *out);
/* on: tl_optimizer_step first averages the gradients over the ranks (tl_dist_sync_grads) */
TL_API tl_status tl_optimizer_set_dist_sync(tl_optimizer *opt, int on);

/* ==== knowledge base: Datalog facts, rules and queries ===========================
 * A knowledge base holds entities (symbols interned to i64 ids 0, 1, 2, ... in order
 * of first appearance), relations with a type per column (entity or integer), facts
 * and rules. Relations are evaluated when queried: stratum by stratum (strongly
 * connected components of the dependency graph, negation only on lower strata),
 * semi-naively to a fixpoint. A relation whose domain box is small is a bit array
 * (dense), a bigger one a list of tuples with hash indexes (sparse); both give the
 * same tuples. Facts added later re-derive only what they can change; a repeated
 * query is a lookup. Errors: a status (or NULL, or -1) and tl_last_error(ctx); a NULL
 * knowledge base is reported through tl_last_error(NULL). Free a knowledge base before
 * tl_shutdown: it holds a scope of the context. See docs/logic.md. */
typedef struct tl_kb tl_kb;
#define TL_KB_MAX_ARITY 32
typedef enum { TL_KB_ENTITY, TL_KB_INT } tl_kb_type;
typedef enum { TL_KB_AUTO, TL_KB_DENSE, TL_KB_SPARSE } tl_kb_repr;
/* A term: a variable (named; the same name is the same variable within a rule or a
 * query), an integer, an entity id, the wildcard _, or an arithmetic expression
 * lhs op rhs (TL_KB_ADD .. TL_KB_MOD, integers, wrapping; a division or remainder by
 * zero makes the literal fail). Expressions point at terms the caller owns during
 * the call. */
typedef enum { TL_KB_VAR, TL_KB_NUM, TL_KB_ENT, TL_KB_ANY, TL_KB_EXPR } tl_kb_term_kind;
typedef enum {
  TL_KB_ADD, TL_KB_SUB, TL_KB_MUL, TL_KB_DIV, TL_KB_MOD, /* arithmetic */
  TL_KB_LT, TL_KB_LE, TL_KB_GT, TL_KB_GE, TL_KB_EQ, TL_KB_NE, /* comparisons */
  TL_KB_COUNT, TL_KB_SUM, TL_KB_MIN, TL_KB_MAX /* aggregates */
} tl_kb_op;
typedef struct tl_kb_term {
  tl_kb_term_kind kind;
  const char *name; /* VAR */
  int64_t value;    /* NUM: the integer; ENT: the entity id */
  tl_kb_op op;      /* EXPR */
  const struct tl_kb_term *lhs, *rhs;
} tl_kb_term;
static inline tl_kb_term tl_kb_var(const char *name) {
  tl_kb_term t = {TL_KB_VAR, name, 0, TL_KB_ADD, NULL, NULL};
  return t;
}
static inline tl_kb_term tl_kb_num(int64_t v) {
  tl_kb_term t = {TL_KB_NUM, NULL, v, TL_KB_ADD, NULL, NULL};
  return t;
}
static inline tl_kb_term tl_kb_ent(int64_t id) {
  tl_kb_term t = {TL_KB_ENT, NULL, id, TL_KB_ADD, NULL, NULL};
  return t;
}
static inline tl_kb_term tl_kb_any(void) {
  tl_kb_term t = {TL_KB_ANY, NULL, 0, TL_KB_ADD, NULL, NULL};
  return t;
}
static inline tl_kb_term tl_kb_expr(tl_kb_op op, const tl_kb_term *lhs, const tl_kb_term *rhs) {
  tl_kb_term t = {TL_KB_EXPR, NULL, 0, op, lhs, rhs};
  return t;
}
/* A literal of a rule: an atom rel(args), a negated atom (not rel(args): every
 * variable in it bound elsewhere; _ means "any value"), a comparison args[0] op args[1]
 * (TL_KB_LT .. TL_KB_NE, both sides bound), or an arithmetic relation
 * args[0] op args[1] = args[2] (TL_KB_ADD .. TL_KB_MOD: binds args[2] when it is a new
 * variable, checks it otherwise; the language's add(x, y, z)). */
/* An aggregate (TL_KB_COUNT .. TL_KB_MAX) over relation rel: args[0 .. nargs - 3]
 * match rel's first columns (the group: bound elsewhere), args[nargs - 2] is the
 * result (bound to the reduction when a new variable, checked otherwise),
 * args[nargs - 1] a TL_KB_NUM, the column sum, min and max reduce (integers); count
 * counts rel's tuples with the group, sum adds (0 when none, wrapping), min and max fail
 * when there are none. rel must not depend on the head (stratified as for not). */
typedef enum { TL_KB_ATOM, TL_KB_NOT, TL_KB_CMP, TL_KB_ARITH, TL_KB_AGG } tl_kb_lit_kind;
typedef struct {
  tl_kb_lit_kind kind;
  const char *rel; /* ATOM, NOT */
  tl_kb_op op;     /* CMP, ARITH */
  int nargs;       /* ATOM, NOT: the relation's arity; CMP: 2; ARITH: 3 */
  const tl_kb_term *args;
} tl_kb_literal;
static inline tl_kb_literal tl_kb_atom(const char *rel, int nargs, const tl_kb_term *args) {
  tl_kb_literal l = {TL_KB_ATOM, rel, TL_KB_ADD, nargs, args};
  return l;
}
static inline tl_kb_literal tl_kb_not(const char *rel, int nargs, const tl_kb_term *args) {
  tl_kb_literal l = {TL_KB_NOT, rel, TL_KB_ADD, nargs, args};
  return l;
}
static inline tl_kb_literal tl_kb_cmp(tl_kb_op op, const tl_kb_term *args2) {
  tl_kb_literal l = {TL_KB_CMP, NULL, op, 2, args2};
  return l;
}
static inline tl_kb_literal tl_kb_arith(tl_kb_op op, const tl_kb_term *args3) {
  tl_kb_literal l = {TL_KB_ARITH, NULL, op, 3, args3};
  return l;
}
static inline tl_kb_literal tl_kb_agg(tl_kb_op op, const char *rel, int nargs, const tl_kb_term *args) {
  tl_kb_literal l = {TL_KB_AGG, rel, op, nargs, args};
  return l;
}

TL_API tl_kb *tl_kb_new(tl_ctx *ctx);
TL_API void tl_kb_free(tl_kb *kb);
/* The id of the entity called name, made on first use; -1 on error. */
TL_API int64_t tl_kb_entity(tl_kb *kb, const char *name);
/* The name of entity id (valid until the knowledge base is freed); NULL on error. */
TL_API const char *tl_kb_entity_name(tl_kb *kb, int64_t id);
TL_API int64_t tl_kb_entity_count(const tl_kb *kb); /* -1 for NULL */
/* Declares rel(types[0], ..., types[arity - 1]) (types may be NULL for arity 0).
 * Declaring it again with the same types is allowed; other types are an error. */
TL_API tl_status tl_kb_relation(tl_kb *kb, const char *rel, int arity, const tl_kb_type *types);
/* Asserts rel(values[0], ..., values[n - 1]): n must be rel's arity, entity columns
 * take entity ids. tl_kb_facts asserts nrows of them, row-major. */
TL_API tl_status tl_kb_fact(tl_kb *kb, const char *rel, int n, const int64_t *values);
TL_API tl_status tl_kb_facts(tl_kb *kb, const char *rel, int64_t nrows, const int64_t *values);
/* Adds the rule head :- body[0], ..., body[nbody - 1]. Checked here: relations known,
 * arities, column types, every variable bound (in a positive atom or as an arithmetic
 * result), negation stratified; the message quotes the rule. (The language layer will
 * add rules from text through this call.) */
TL_API tl_status tl_kb_rule(tl_kb *kb, const tl_kb_literal *head, int nbody, const tl_kb_literal *body);
/* Queries rel(args): variables are the output columns, in order of first appearance
 * (a variable repeated must match itself), constants select, _ matches anything. The
 * result is an i64 tensor [n, k] of the distinct matches, rows ascending, or for a
 * query without variables a 0-d f32 tensor, 1.0 or 0.0. It belongs to the current
 * scope. NULL on error. */
TL_API tl_tensor *tl_kb_query(tl_kb *kb, const char *rel, int nargs, const tl_kb_term *args);
/* The number of tuples in rel (evaluating it); -1 on error. */
TL_API int64_t tl_kb_count(tl_kb *kb, const char *rel);
/* Forces every relation dense or sparse (for tests and measurements), or back to the
 * automatic choice; evaluated relations are evaluated again. */
TL_API tl_status tl_kb_set_repr(tl_kb *kb, tl_kb_repr repr);
/* The most tuples evaluation may put in one relation (1 .. 2147483647, the default):
 * a rule whose arithmetic derives without end (`n(x * y) :- n(x), n(y).`) stops there
 * with TL_ERR_RANGE, "relation n: more than MAX tuples ...", instead of running until
 * memory runs out. Asserted facts are not limited. Evaluated relations are evaluated
 * again under the new limit. */
TL_API tl_status tl_kb_set_max_tuples(tl_kb *kb, int64_t max);
/* Adds the facts, rules and relation declarations of text, written as in TL programs
 * (LANGUAGE.md §8): `parent(alice, bob).`, `anc(x, y) :- parent(x, z), anc(z, y).`,
 * `relation age(entity, i64);`, with `not`, comparisons, add/sub/mul/div/mod and `_`.
 * A name that is an argument of a fact (in text, or an entity of kb already) is an
 * entity, and so is a name in quotes (`"alice"`); in a rule every other name, and
 * `$x`, is a variable. A bare name in a rule that is an entity, and a bare variable
 * written once, are warnings (tl_kb_warnings). Columns take the types
 * of kb's relations, of declarations, and of what meets in them (integers when nothing
 * decides). The text is checked whole before anything is added, so an error leaves
 * kb as it was, but for a rule kb itself refuses (negation through one of its
 * existing rules): then what came before it stays. Errors name the place:
 * "kb_add_rules: 2:14: unknown relation `parnet`". Implemented by the language
 * (src/logic/kb_text.c, with the language's parser and Datalog checker). */
TL_API tl_status tl_kb_add_rules(tl_kb *kb, const char *text);
/* The warnings of the last tl_kb_add_rules (the text was added all the same), a line
 * each: "kb_add_rules: 1:27: `o` is the entity `o` here, not a variable: the fact at
 * line 1 names it (write `$o` for a variable, or `"o"` for the entity without this
 * warning)"; "" when there were none. Valid until the next tl_kb_add_rules or
 * tl_kb_free; NULL for a NULL knowledge base. */
TL_API const char *tl_kb_warnings(const tl_kb *kb);

#ifdef __cplusplus
}
#endif
#endif
