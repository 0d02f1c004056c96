/* context.c — contexts, errors, handles and tensor creation. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/context.h"
#include "core/format.h"
#include "core/shapetracker.h"
#include "graph/rewrite.h"

/* The message of the last call in this thread that failed with no context to record
 * it in (tl_cat(0, NULL), tl_sgd over no parameters, tl_init itself): the one state
 * outside a context, per thread, read with tl_last_error(NULL). */
static _Thread_local tl_error orphan_err;

void tl_api_fail_orphan(tl_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_vset(&orphan_err, st, fmt, ap);
  va_end(ap);
}

/* a warning about an environment variable, said once per process (bit: which one),
 * however many contexts are made (`tl run` makes one to check Datalog rules too) */
static void env_warn(unsigned bit, const char *fmt, ...) TL_PRINTF(2, 3);
static void env_warn(unsigned bit, const char *fmt, ...) {
  static _Atomic unsigned said;
  if (atomic_fetch_or(&said, bit) & bit) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

/* An on/off variable: unset, empty or 0 is off, 1 on; anything else is said on stderr
 * (naming the variable and its values) and taken as off, as TL_DOT_DIR's problems are:
 * the context works, without that aid. */
static bool env_switch(const char *name, unsigned bit) {
  const char *v = getenv(name);
  if (!v || !*v || !strcmp(v, "0")) return false;
  if (!strcmp(v, "1")) return true;
  env_warn(bit, "tl: %s: '%s' is not understood (expected 0 or 1): ignored\n", name, v);
  return false;
}

/* The environment's settings. A TL_BACKEND that is unknown or cannot run here is an
 * error (tl_init fails): the program would run somewhere it was not asked to
 * (LANGUAGE.md §12: never a silent fall back); the other variables change no result,
 * so a bad value is a warning. */
static tl_status read_env(tl_ctx *ctx) {
  const char *b = getenv("TL_BACKEND");
  tl_status st = tl_set_backend(ctx, b && *b ? b : "cpu");
  if (st == TL_ERR_BACKEND) tl_api_fail_orphan(st, "TL_BACKEND: %s", ctx->err.msg);
  else if (st) tl_api_fail_orphan(st, "init: out of memory");
  if (st) return st;
  if (tl_pool_env_threads() < 0)
    env_warn(1, "tl: TL_THREADS: '%s' is not understood (expected a positive number of threads): "
                "one per core instead\n", getenv("TL_THREADS"));
  ctx->debug = env_switch("TL_DEBUG", 2);
  ctx->profile = env_switch("TL_PROFILE", 4);
  ctx->mem_report = env_switch("TL_MEM_REPORT", 8);
  return TL_OK;
}

static void free_backends(tl_ctx *ctx) {
  for (int i = 0; i < TL_API_MAX_BACKENDS; i++) tl_backend_fini(&ctx->backends[i]);
  free((char *)ctx->opts.cc);
  free((char *)ctx->opts.cache_dir);
}

tl_ctx *tl_init(void) {
  tl_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) {
    tl_api_fail_orphan(TL_ERR_NOMEM, "init: out of memory");
    return NULL;
  }
  if (read_env(ctx)) {
    free_backends(ctx);
    free(ctx);
    return NULL;
  }
  tl_graph_init(&ctx->graph, true);
  ctx->seed = 0x5eed;
  const char *dot = getenv("TL_DOT_DIR");
  if (dot && *dot && tl_set_dot_dir(ctx, dot)) /* the context still works, without pictures */
    fprintf(stderr, "tl: TL_DOT_DIR: %s\n", ctx->err.msg);
  if (!tl_api_scopes_init(ctx)) {
    tl_shutdown(ctx);
    tl_api_fail_orphan(TL_ERR_NOMEM, "init: out of memory");
    return NULL;
  }
  return ctx;
}

void tl_shutdown(tl_ctx *ctx) {
  if (!ctx) return;
  bool reporting = ctx->mem_report;
  if (reporting) tl_mem_report(ctx, stderr);
  tl_api_release_all(ctx); /* what scopes and the caller still hold goes too */
  if (reporting)
    fprintf(stderr, "  at shutdown, after every handle went: %" PRIu64 " graph nodes, %" PRIu64
                    " buffers, %" PRIu64 " bytes still live%s\n",
            ctx->graph.live, ctx->mem.live_buffers, ctx->mem.live_bytes,
            ctx->graph.live || ctx->mem.live_buffers ? " (a bug in TL: please report it)" : "");
  tl_graph_free(&ctx->graph);
  tl_mem_release_cache(&ctx->mem);
  free_backends(ctx);
  free(ctx->dot_dir);
  free(ctx);
}

const char *tl_last_error(const tl_ctx *ctx) {
  if (ctx) return ctx->err.msg;
  return orphan_err.status ? orphan_err.msg : "no context";
}
tl_status tl_last_status(const tl_ctx *ctx) {
  if (ctx) return ctx->err.status;
  return orphan_err.status ? orphan_err.status : TL_ERR_ARG;
}
void tl_clear_error(tl_ctx *ctx) { tl_error_clear(ctx ? &ctx->err : &orphan_err); }

/* Chooses the backend later realizes run on; its instance (and so its compiled kernels
 * and recorded realizes) stays with the context when another is chosen. */
tl_backend *tl_api_backend_named(tl_ctx *ctx, const char *name) {
  if (tl_backend_check(name, &ctx->err)) return NULL;
  int k = 0;
  while (tl_backend_get(k) != tl_backend_find(name)) k++;
  if (k >= TL_API_MAX_BACKENDS) { /* ctx->backends is indexed as the table */
    tl_error_set(&ctx->err, TL_ERR_INTERNAL, "backend '%s': more backends than a context keeps", name);
    return NULL;
  }
  if (!ctx->backends[k].i && !tl_backend_init(&ctx->backends[k], tl_backend_get(k), &ctx->opts)) {
    tl_error_set(&ctx->err, TL_ERR_INTERNAL, "backend '%s' is not the table's", name);
    return NULL;
  }
  return &ctx->backends[k];
}

tl_status tl_set_backend(tl_ctx *ctx, const char *name) {
  if (!ctx) return TL_ERR_ARG;
  tl_backend *be = tl_api_backend_named(ctx, name);
  if (!be) return ctx->err.status;
  ctx->be = be;
  return TL_OK;
}

tl_backend *tl_api_backend_of(tl_ctx *ctx, const tl_buffer *b) {
  tl_backend *be = b->backend ? &ctx->backends[b->backend - 1] : NULL;
  return be && be->i ? be : ctx->be;
}

void *tl_api_host_data(tl_ctx *ctx, tl_buffer *b, bool write) {
  tl_backend *be = tl_api_backend_of(ctx, b);
  if (!be->i->host_view) return b->data;
  return be->i->host_view(be, b, write, &ctx->err);
}

const char *tl_backend_name(const tl_ctx *ctx) { return ctx && ctx->be ? ctx->be->i->name : "cpu"; }

tl_status tl_backend_usable(const char *name) {
  tl_error e = {0};
  tl_status st = tl_backend_check(name, &e);
  if (st) tl_api_fail_orphan(st, "%s", e.msg);
  return st;
}

const char *tl_backend_info(int index, const char **about, const char **unavailable) {
  const tl_backend_i *i = tl_backend_get(index);
  const char *why = i && i->unavailable ? i->unavailable() : NULL;
  const char *found = i && !why && i->found ? i->found() : NULL;
  if (about) *about = found ? found : i ? i->about : NULL;
  if (unavailable) *unavailable = why;
  return i ? i->name : NULL;
}

/* the settings changed: every backend drops what it made from the old ones (its
 * compiler, and the recorded realizes whose kernels that compiler built) */
static tl_status reconfigure(tl_ctx *ctx) {
  for (int i = 0; i < TL_API_MAX_BACKENDS; i++)
    if (ctx->backends[i].i) tl_backend_reconfigure(&ctx->backends[i]);
  return TL_OK;
}

void tl_api_set_optimized_only(tl_ctx *ctx) {
  ctx->opts.optimized_only = true;
  reconfigure(ctx);
}

/* a copy of s into *slot (NULL stays NULL); false when out of memory */
static bool set_string(const char **slot, const char *s) {
  char *copy = s ? strdup(s) : NULL;
  if (s && !copy) return false;
  free((char *)*slot);
  *slot = copy;
  return true;
}

tl_status tl_set_cache_dir(tl_ctx *ctx, const char *path) {
  if (!ctx) return TL_ERR_ARG;
  if (!set_string(&ctx->opts.cache_dir, path)) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "set_cache_dir: out of memory");
  return reconfigure(ctx);
}

tl_status tl_set_compiler(tl_ctx *ctx, const char *cc) {
  if (!ctx) return TL_ERR_ARG;
  if (!set_string(&ctx->opts.cc, cc)) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "set_compiler: out of memory");
  return reconfigure(ctx);
}

tl_status tl_set_dot_dir(tl_ctx *ctx, const char *dir) {
  if (!ctx) return TL_ERR_ARG;
  free(ctx->dot_dir);
  ctx->dot_dir = NULL;
  if (!dir || !*dir) return TL_OK;
  struct stat sb;
  if (mkdir(dir, 0777) && errno != EEXIST)
    return tl_error_set(&ctx->err, TL_ERR_IO, "dot directory '%s' cannot be created: %s", dir, strerror(errno));
  if (stat(dir, &sb) || !S_ISDIR(sb.st_mode))
    return tl_error_set(&ctx->err, TL_ERR_IO, "dot directory '%s' is not a directory", dir);
  if (access(dir, W_OK | X_OK))
    return tl_error_set(&ctx->err, TL_ERR_IO, "dot directory '%s' is not writable: %s", dir, strerror(errno));
  if (!(ctx->dot_dir = strdup(dir))) return tl_error_set(&ctx->err, TL_ERR_NOMEM, "set_dot_dir: out of memory");
  ctx->dot_count = 0;
  return TL_OK;
}

void tl_manual_seed(tl_ctx *ctx, uint64_t seed) {
  if (!ctx) return;
  ctx->seed = seed;
  ctx->rand_calls = 0;
}

tl_stats tl_get_stats(const tl_ctx *ctx) {
  tl_stats s = {0};
  if (!ctx) return s;
  s = ctx->stats;
  for (int i = 0; i < TL_API_MAX_BACKENDS; i++) {
    const tl_backend *be = &ctx->backends[i];
    if (be->i && be->i->stats) be->i->stats(be, &s);
    s.replay_plans += (uint64_t)be->replay.count;
  }
  s.live_nodes = ctx->graph.live;
  s.live_buffers = ctx->mem.live_buffers;
  s.peak_bytes = ctx->mem.peak_bytes;
  s.buffer_frees = ctx->mem.frees;
  s.cached_bytes = ctx->mem.cached_bytes;
  s.buffer_mallocs = ctx->mem.mallocs;
  s.buffer_cache_hits = ctx->mem.cache_hits;
  s.live_bytes = ctx->mem.live_bytes;
  return s;
}

/* ---- handles ----------------------------------------------------------------- */
tl_tensor *tl_api_fail(tl_ctx *ctx, size_t mark, tl_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_error_vset(&ctx->err, st, fmt, ap);
  va_end(ap);
  tl_graph_release_to(&ctx->graph, mark);
  return NULL;
}

bool tl_api_axis(tl_ctx *ctx, int ndim, int *axis, const char *what) {
  int a = *axis < 0 ? *axis + ndim : *axis;
  if (a < 0 || a >= ndim) {
    tl_error_set(&ctx->err, TL_ERR_AXIS, "%s: axis %d is out of range for a tensor of rank %d",
                 what, *axis, ndim);
    return false;
  }
  *axis = a;
  return true;
}

int tl_ndim(const tl_tensor *h) {
  const tl_tensor *t = tl_api_tensor(h, "ndim");
  return t ? t->u->ndim : -1;
}
int64_t tl_numel(const tl_tensor *h) {
  const tl_tensor *t = tl_api_tensor(h, "numel");
  return t ? tl_uop_numel(t->u) : -1;
}
tl_dtype tl_get_dtype(const tl_tensor *h) {
  const tl_tensor *t = tl_api_tensor(h, "dtype");
  return t ? (tl_dtype)t->u->dtype : TL_F32;
}

int64_t tl_dim(const tl_tensor *h, int axis) {
  const tl_tensor *t = tl_api_tensor(h, "dim");
  if (!t) return -1;
  if (!tl_api_axis(t->slot.ctx, t->u->ndim, &axis, "dim")) return -1;
  return t->u->shape[axis];
}

/* ---- sizes -------------------------------------------------------------------- */
/* The exact decimal product of the positive sizes, however large (base-1e9 limbs):
 * a message says how big a shape is even when its count overflows 64 bits. */
static void product_text(char *out, size_t cap, int ndim, const int64_t *shape) {
  enum { BASE = 1000000000, LIMBS = 3 * TL_MAX_DIMS + 1 };
  uint32_t acc[LIMBS] = {1};
  int n = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] <= 0) continue;
    uint32_t m[3], r[LIMBS] = {0};
    int nm = 0;
    for (uint64_t v = (uint64_t)shape[d]; v; v /= BASE) m[nm++] = (uint32_t)(v % BASE);
    for (int i = 0; i < n; i++) {
      uint64_t carry = 0;
      int k = i;
      for (int j = 0; j < nm; j++, k++) {
        uint64_t t = r[k] + (uint64_t)acc[i] * m[j] + carry;
        r[k] = (uint32_t)(t % BASE);
        carry = t / BASE;
      }
      for (; carry; k++) {
        uint64_t t = r[k] + carry;
        r[k] = (uint32_t)(t % BASE);
        carry = t / BASE;
      }
    }
    n += nm;
    while (n > 1 && !r[n - 1]) n--;
    memcpy(acc, r, sizeof acc);
  }
  size_t used = (size_t)snprintf(out, cap, "%u", acc[n - 1]);
  for (int i = n - 2; i >= 0 && used < cap; i--) used += (size_t)snprintf(out + used, cap - used, "%09u", acc[i]);
}

/* infer: a size -1 (reshape's) is allowed and counts as 1 */
static bool shape_fits(tl_ctx *ctx, const char *what, int ndim, const int64_t *shape, bool infer) {
  int64_t s[TL_MAX_DIMS] = {0};
  bool zero = false, minus = false;
  for (int i = 0; i < ndim; i++) {
    s[i] = shape[i];
    if (infer && s[i] == -1) {
      s[i] = 1;
      minus = true;
    } else if (s[i] < 0) {
      tl_error_set(&ctx->err, TL_ERR_SHAPE, "%s: size %lld of axis %d is out of range", what,
                   (long long)shape[i], i);
      return false;
    }
    zero |= s[i] == 0;
  }
  if (tl_shape_fits(ndim, s)) return true;
  char st[TL_SHAPE_TEXT_MAX], n[200];
  tl_format_shape(st, sizeof st, ndim, shape);
  product_text(n, sizeof n, ndim, shape);
  if (zero || minus) /* a size 0 still has strides, products of the other sizes */
    tl_error_set(&ctx->err, TL_ERR_RANGE,
                 "%s: shape %s is too large: its sizes other than %s multiply to %s; the most a tensor may hold "
                 "is " TL_API_LIMIT_TEXT,
                 what, st, zero && minus ? "0 and -1" : zero ? "0" : "-1", n);
  else
    tl_error_set(&ctx->err, TL_ERR_RANGE,
                 "%s: shape %s has %s elements; the most a tensor may hold is " TL_API_LIMIT_TEXT, what, st, n);
  return false;
}

bool tl_api_shape_fits(tl_ctx *ctx, const char *what, int ndim, const int64_t *shape) {
  return shape_fits(ctx, what, ndim, shape, false);
}

bool tl_api_shape_fits_infer(tl_ctx *ctx, const char *what, int ndim, const int64_t *shape) {
  return shape_fits(ctx, what, ndim, shape, true);
}

bool tl_api_count_fits(tl_ctx *ctx, const char *what, const char *counted, double count) {
  if (count <= (double)TL_MAX_NUMEL) return true;
  char n[64];
  if (count < 0x1p63) snprintf(n, sizeof n, "%lld", (long long)count);
  else snprintf(n, sizeof n, "%g", count);
  tl_error_set(&ctx->err, TL_ERR_RANGE, "%s: %s has %s elements; the most a tensor may hold is " TL_API_LIMIT_TEXT,
               what, counted, n);
  return false;
}

/* ---- creation ------------------------------------------------------------------- */
static bool check_shape(tl_ctx *ctx, const char *what, int ndim, const int64_t *shape) {
  if (ndim < 0 || ndim > TL_MAX_DIMS) {
    tl_error_set(&ctx->err, TL_ERR_SHAPE, "%s: rank %d is not between 0 and %d", what, ndim,
                 TL_MAX_DIMS);
    return false;
  }
  if (ndim && !shape) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "%s: shape is NULL", what);
    return false;
  }
  return tl_api_shape_fits(ctx, what, ndim, shape);
}

static bool check_dtype(tl_ctx *ctx, const char *what, tl_dtype d) {
  if (tl_dtype_valid(d)) return true;
  tl_error_set(&ctx->err, TL_ERR_DTYPE, "%s: invalid dtype %d", what, (int)d);
  return false;
}

tl_buffer *tl_api_buffer_new(tl_ctx *ctx, const char *what, tl_dtype dtype, int64_t numel) {
  return tl_api_buffer_on(ctx, ctx->be, what, dtype, numel);
}

tl_buffer *tl_api_buffer_on(tl_ctx *ctx, tl_backend *be, const char *what, tl_dtype dtype, int64_t numel) {
  size_t esize = tl_dtype_size(dtype);
  if (!be->ready && tl_backend_prepare(be, &ctx->err)) return NULL; /* a device's memory needs its driver */
  /* a legal count may still exceed size_t (32-bit) or the memory there is */
  tl_buffer *b =
      numel >= 0 && (uint64_t)numel <= SIZE_MAX / esize ? be->i->buffer_alloc(be, dtype, numel, &ctx->mem) : NULL;
  if (!b) tl_api_buffer_fail(ctx, what, dtype, numel);
  return b;
}

tl_status tl_api_buffer_fail(tl_ctx *ctx, const char *what, tl_dtype dtype, int64_t numel) {
  return tl_error_set(&ctx->err, TL_ERR_NOMEM, "%s: out of memory for a buffer of %lld %s elements (%llu bytes)",
                      what, (long long)numel, tl_dtype_name(dtype),
                      (unsigned long long)numel * tl_dtype_size(dtype)); /* numel <= 2^40 */
}

static tl_uop *buffer_node(tl_ctx *ctx, const char *what, tl_dtype dtype, int ndim, const int64_t *shape,
                           const void *data) {
  tl_buffer *b = tl_api_buffer_new(ctx, what, dtype, tl_shape_numel(ndim, shape));
  if (!b) return NULL;
  if (data && b->nbytes && ctx->be->i->copy_from_host(ctx->be, b, 0, data, b->nbytes, &ctx->err)) {
    tl_buffer_release(b);
    return NULL;
  }
  tl_arg arg = {.p = b};
  tl_uop *u = tl_uop_make(&ctx->graph, TL_OP_BUFFER, dtype, 0, NULL, arg, 0, ndim, shape);
  tl_buffer_release(b); /* the node holds it now */
  return u;
}

tl_tensor *tl_from_data(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape,
                        const void *data) {
  if (!ctx) return NULL;
  size_t mark = tl_graph_mark(&ctx->graph);
  if (!check_dtype(ctx, "from_data", dtype) || !check_shape(ctx, "from_data", ndim, shape))
    return NULL;
  if (!data && tl_shape_numel(ndim, shape) > 0)
    return tl_api_fail(ctx, mark, TL_ERR_ARG, "from_data: data is NULL");
  return tl_api_wrap(ctx, "from_data", buffer_node(ctx, "from_data", dtype, ndim, shape, data), mark);
}

tl_tensor *tl_full(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape, double value) {
  if (!ctx) return NULL;
  size_t mark = tl_graph_mark(&ctx->graph);
  if (!check_dtype(ctx, "full", dtype) || !check_shape(ctx, "full", ndim, shape)) return NULL;
  tl_uop *c = tl_build_const(&ctx->graph, dtype, value);
  return tl_api_wrap(ctx, "full", c ? tl_build_broadcast_to(&ctx->graph, c, ndim, shape) : NULL, mark);
}

tl_tensor *tl_zeros(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape) {
  return tl_full(ctx, dtype, ndim, shape, 0);
}
tl_tensor *tl_ones(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape) {
  return tl_full(ctx, dtype, ndim, shape, 1);
}
tl_tensor *tl_scalar(tl_ctx *ctx, tl_dtype dtype, double value) {
  return tl_full(ctx, dtype, 0, NULL, value);
}

tl_tensor *tl_arange(tl_ctx *ctx, tl_dtype dtype, double start, double stop, double step) {
  if (!ctx) return NULL;
  if (!check_dtype(ctx, "arange", dtype)) return NULL;
  if (step == 0 || !isfinite(start) || !isfinite(stop) || !isfinite(step)) {
    tl_error_set(&ctx->err, TL_ERR_ARG, "arange: step must be non-zero and bounds finite");
    return NULL;
  }
  /* counted as a double: converting one beyond int64 to an integer is undefined */
  double span = ceil((stop - start) / step);
  char what[160];
  snprintf(what, sizeof what, "[%g, %g) in steps of %g", start, stop, step);
  if (!tl_api_count_fits(ctx, "arange", what, span)) return NULL;
  int64_t n = span > 0 ? (int64_t)span : 0;
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *u = buffer_node(ctx, "arange", dtype, 1, &n, NULL);
  void *data = u && n ? tl_api_host_data(ctx, u->arg.p, true) : NULL;
  if (u && n && !data) u = NULL; /* the node goes with the graph's mark */
  for (int64_t i = 0; data && i < n; i++) tl_dtype_write(data, dtype, i, start + (double)i * step);
  return tl_api_wrap(ctx, "arange", u, mark);
}

tl_tensor *tl_eye(tl_ctx *ctx, tl_dtype dtype, int64_t n) {
  if (!ctx) return NULL;
  int64_t shape[2] = {n, n};
  if (!check_dtype(ctx, "eye", dtype) || !check_shape(ctx, "eye", 2, shape)) return NULL;
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_uop *u = buffer_node(ctx, "eye", dtype, 2, shape, NULL);
  void *data = u && n ? tl_api_host_data(ctx, u->arg.p, true) : NULL;
  if (u && n && !data) u = NULL;
  if (data) {
    memset(data, 0, (size_t)(n * n) * tl_dtype_size(dtype));
    for (int64_t i = 0; i < n; i++) tl_dtype_write(data, dtype, i * n + i, 1);
  }
  return tl_api_wrap(ctx, "eye", u, mark);
}

static tl_tensor *random_tensor(tl_ctx *ctx, int op, const char *what, tl_dtype dtype, int ndim,
                                const int64_t *shape) {
  if (!ctx) return NULL;
  if (!check_shape(ctx, what, ndim, shape)) return NULL;
  if (dtype != TL_F32 && dtype != TL_F64) { /* f16/bf16: draw f32 and cast (rounding may reach 1.0) */
    tl_error_set(&ctx->err, TL_ERR_DTYPE, "%s: dtype must be f32 or f64, got %s", what,
                 tl_dtype_name(dtype));
    return NULL;
  }
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_arg key = {.u = ctx->seed};
  int64_t stream = (int64_t)ctx->rand_calls++;
  return tl_api_wrap(ctx, what, tl_uop_make(&ctx->graph, op, dtype, 0, NULL, key, stream, ndim, shape),
                     mark);
}

tl_tensor *tl_rand(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape) {
  return random_tensor(ctx, TL_OP_UNIFORM, "rand", dtype, ndim, shape);
}
tl_tensor *tl_randn(tl_ctx *ctx, tl_dtype dtype, int ndim, const int64_t *shape) {
  return random_tensor(ctx, TL_OP_RANDN, "randn", dtype, ndim, shape);
}

void tl_free(void *p) { free(p); }

void tl_mem_trim(tl_ctx *ctx) {
  if (ctx) tl_mem_release_cache(&ctx->mem);
}

void tl_mem_reset_peak(tl_ctx *ctx) {
  if (ctx) ctx->mem.peak_bytes = ctx->mem.live_bytes;
}
