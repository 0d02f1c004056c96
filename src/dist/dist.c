/* dist.c — the collectives of include/tl.h's tl_dist_* (LANGUAGE.md §13), over
 * mpi_load.c's MPI.
 *
 * Agreement: every collective starts with an all-reduce (MAX) of a small descriptor
 * and its negation: which call this is, the dtype, the shape, the root, and whether
 * this rank could get its tensor's values. Equal maxima and minima mean every rank
 * agrees; anything else is an error on every rank at once, naming the call, before any
 * payload moves. It costs one 208-byte all-reduce per call (docs/distributed.md;
 * TL_DIST_CHECK=0 on every rank leaves it out, trusting the program), and
 * it also turns "the ranks called different collectives" and "one rank finished the
 * program while another waits" (the check at exit) into errors instead of hangs.
 *
 * Results are new tensors of the context's backend, written by MPI directly (no copy
 * after the all-reduce); they carry no autograd history. A cuda tensor's payload goes
 * by NCCL instead, device to device, when every rank chose that (dist_device.c: the
 * choice is a bit of the descriptor). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/context.h"
#include "core/buffer.h"
#include "core/format.h"
#include "core/shapetracker.h"
#include "dist/dist.h"
#include "dist/dist_internal.h"

enum { D_KIND, D_DTYPE, D_NDIM, D_EXTRA, D_FAILED, D_SHAPE, DESC_N = D_SHAPE + TL_MAX_DIMS };
_Static_assert((int)DESC_N == (int)DIST_DESC_WORDS && (int)D_SHAPE == (int)DIST_DESC_SHAPE &&
                   (int)D_FAILED == (int)DIST_DESC_STATE,
               "dist.h's descriptor layout");

static const char *const kind_names[] = {"", "all_reduce", "all_reduce_mean", "broadcast", "barrier", "sync_grads",
                                         "the end of the program"};

static bool collective_error; /* the last error was seen by every rank at once */

tl_status tl_dist_init(void) {
  tl_error e = {0};
  tl_status st = tl_mpi_start(&e);
  if (st) tl_api_fail_orphan(st, "dist: %s", e.msg);
  return st;
}

int tl_dist_rank(void) {
  tl_dist_init();
  return tl_mpi_rank();
}

int tl_dist_size(void) {
  tl_dist_init();
  return tl_mpi_size();
}

int tl_dist_launched(void) { return tl_mpi_env_rank() >= 0; }

const char *tl_dist_library(void) {
  tl_dist_init();
  return tl_mpi_library();
}

/* d's fields agree on every rank: TL_OK; else an error in err naming `what` (on every
 * rank: each sees the same maxima and minima). The state word's NCCL bit is not
 * compared: its minimum says whether all ranks set it, its maximum whether any did (the
 * failed bit is above it, so that word's maximum and minimum still compare it). */
tl_status tl_dist_agree_path(int64_t *d, const char *what, bool *all, bool *any, tl_error *err) {
  static int checks = -1; /* TL_DIST_CHECK=0: no exchange (every rank must say so) */
  if (checks < 0) {
    const char *e = getenv("TL_DIST_CHECK");
    checks = !(e && !strcmp(e, "0"));
  }
  *all = *any = (d[D_FAILED] & DIST_DESC_NCCL) != 0;
  if (!checks) return TL_OK;
  int64_t both[2 * DESC_N];
  for (int i = 0; i < DESC_N; i++) {
    both[i] = d[i];
    both[DESC_N + i] = -d[i];
  }
  tl_status st = tl_mpi_allreduce(NULL, both, 2 * DESC_N, TL_I64, TL_MPI_MAX_OP, err);
  if (st) return st;
  int diff = -1;
  for (int i = 0; i < DESC_N && diff < 0; i++) {
    int64_t hi = both[i], lo = -both[DESC_N + i];
    if (i == D_FAILED ? hi / DIST_DESC_FAILED_BIT != lo / DIST_DESC_FAILED_BIT : hi != lo) diff = i;
  }
  *all = (-both[DESC_N + D_FAILED] & DIST_DESC_NCCL) != 0;
  *any = (both[D_FAILED] & DIST_DESC_NCCL) != 0;
  if (diff < 0) return TL_OK;
  collective_error = true;
  int r = tl_mpi_rank();
  if (diff == D_KIND) {
    int k = (int)d[D_KIND];
    return tl_error_set(err, TL_ERR_ARG,
                        "%s: the ranks are not in the same collective call (rank %d is in %s, another rank in %s)",
                        what, r, kind_names[k], kind_names[(int)(both[D_KIND] == k ? -both[DESC_N + D_KIND] : both[D_KIND])]);
  }
  if (d[D_FAILED] & DIST_DESC_FAILED_BIT) return TL_ERR_ARG; /* this rank's own error is set already */
  if (diff == D_FAILED) return tl_error_set(err, TL_ERR_ARG, "%s: another rank failed to compute its tensor", what);
  if (diff == D_DTYPE)
    return tl_error_set(err, TL_ERR_DTYPE, "%s: the tensors' dtypes differ across ranks (rank %d has %s)", what, r,
                        tl_dtype_name((tl_dtype)d[D_DTYPE]));
  if (diff == D_EXTRA && d[D_KIND] == 3)
    return tl_error_set(err, TL_ERR_ARG, "%s: the root differs across ranks (rank %d has root %lld)", what, r,
                        (long long)d[D_EXTRA]);
  if (d[D_KIND] == 5)
    return tl_error_set(err, TL_ERR_SHAPE,
                        "%s: the gradients differ across ranks (rank %d has %lld tensors, %lld elements): every rank "
                        "must hold the same parameters",
                        what, r, (long long)d[D_SHAPE], (long long)d[D_SHAPE + 1]);
  char s[TL_SHAPE_TEXT_MAX];
  tl_format_shape(s, sizeof s, (int)d[D_NDIM], d + D_SHAPE);
  return tl_error_set(err, TL_ERR_SHAPE, "%s: the tensors' shapes differ across ranks (rank %d has %s)", what, r, s);
}

tl_status tl_dist_agree(int64_t *d, const char *what, tl_error *err) {
  bool all, any;
  return tl_dist_agree_path(d, what, &all, &any, err);
}

tl_status tl_dist_settle_path(int64_t *d, const char *what, bool wish, bool all, bool any, bool (*fetch)(void *),
                              void *arg, bool *nccl, tl_error *err) {
  *nccl = false;
  if (all) {
    tl_error e = {0};
    if (tl_nccl_comm_start(&e) == TL_OK) return *nccl = true, TL_OK;
    any = true; /* it failed on every rank (each learns it): all stage, from now on */
  }
  if (!any) return TL_OK;
  bool ok = !wish || fetch(arg);
  d[D_FAILED] = ok ? 0 : DIST_DESC_FAILED_BIT;
  return tl_dist_agree(d, what, err);
}

/* t's values on the host (realized, contiguous), or NULL with the context's error */
static const void *values(tl_tensor *t) { return tl_data(t); }

static void describe(int64_t *d, int kind, const tl_tensor *t, int64_t extra, bool failed) {
  memset(d, 0, sizeof(int64_t) * DESC_N);
  d[D_KIND] = kind;
  d[D_EXTRA] = extra;
  d[D_FAILED] = failed ? DIST_DESC_FAILED_BIT : 0;
  if (!t) return;
  d[D_DTYPE] = tl_get_dtype(t);
  d[D_NDIM] = tl_ndim(t);
  for (int i = 0; i < tl_ndim(t); i++) d[D_SHAPE + i] = tl_dim(t, i);
}

tl_tensor *tl_dist_new_output(tl_ctx *ctx, const char *what, tl_dtype dt, int ndim, const int64_t *shape, void **host) {
  size_t mark = tl_graph_mark(&ctx->graph);
  tl_buffer *b = tl_api_buffer_new(ctx, what, dt, tl_shape_numel(ndim, shape));
  if (!b) return NULL;
  *host = tl_api_host_data(ctx, b, true);
  if (!*host && b->nbytes) {
    tl_buffer_release(b);
    return NULL;
  }
  tl_arg arg = {.p = b};
  tl_uop *u = tl_uop_make(&ctx->graph, TL_OP_BUFFER, dt, 0, NULL, arg, 0, ndim, shape);
  tl_buffer_release(b);
  return tl_api_wrap(ctx, what, u, mark);
}

/* a tensor's context for its error, or the thread's when there is none */
static tl_tensor *fail_on(tl_ctx *ctx, tl_status st, const char *msg) {
  if (ctx) tl_error_set(&ctx->err, st, "%s", msg);
  else tl_api_fail_orphan(st, "%s", msg);
  return NULL;
}

static bool fetch_values(void *arg) {
  void **p = arg;
  return (p[1] = (void *)values(p[0])) != NULL;
}

/* the payload by NCCL on the cuda stream, from dev into a new tensor of its backend */
static tl_tensor *by_nccl(tl_ctx *ctx, const tl_dist_dev *dev, int kind, int root, const char *what, tl_tensor *h) {
  int64_t shape[TL_MAX_DIMS], n = tl_numel(h);
  tl_dtype dt = tl_get_dtype(h);
  for (int i = 0; i < tl_ndim(h); i++) shape[i] = tl_dim(h, i);
  tl_dist_dev out = {0};
  tl_tensor *r = tl_dist_new_device_output(ctx, dev->be, what, dt, tl_ndim(h), shape, &out);
  if (!r) return NULL;
  void *stream = tl_dist_dev_stream(dev), *src = tl_dist_dev_address(dev), *dst = tl_dist_dev_address(&out);
  tl_status st = kind == 3 ? tl_nccl_bcast(src, dst, n, dt, root, stream, &ctx->err)
                           : tl_nccl_allreduce(src, dst, n, dt, dt == TL_BOOL ? TL_MPI_MAX_OP : TL_MPI_SUM_OP, stream,
                                               &ctx->err);
  if (st) tl_release(r);
  return st ? NULL : r;
}

/* all_reduce (kind 1, 2) and broadcast (kind 3): agree, then one MPI (or NCCL) call
 * into the result */
static tl_tensor *collective(tl_tensor *handle, int kind, int root, const char *what) {
  tl_error e = {0};
  if (tl_mpi_start(&e)) return fail_on(handle ? tl_context(handle) : NULL, e.status, e.msg);
  tl_tensor *t = handle ? tl_api_tensor(handle, what) : NULL;
  int64_t d[DESC_N];
  if (!t) { /* no tensor here: the other ranks learn it and fail too */
    describe(d, kind, NULL, root, true);
    if (tl_mpi_running()) tl_dist_agree(d, what, &e);
    return NULL;
  }
  tl_ctx *ctx = t->slot.ctx;
  tl_dist_dev dev = {0};
  bool wish = tl_mpi_running() && tl_mpi_size() > 1 && tl_dist_nccl_wish(handle, &dev), all = false, any = false,
       nccl = false;
  const void *in = wish ? NULL : values(handle); /* NULL: the context's error says why */
  describe(d, kind, handle, root, !wish && !in);
  if (wish) d[D_FAILED] |= DIST_DESC_NCCL;
  tl_status st = tl_mpi_running() ? tl_dist_agree_path(d, what, &all, &any, &ctx->err) : TL_OK;
  void *fetched[2] = {handle, NULL};
  if (!st) st = tl_dist_settle_path(d, what, wish, all, any, fetch_values, fetched, &nccl, &ctx->err);
  if (wish && !nccl) in = fetched[1];
  if (st || (!nccl && !in)) return NULL;
  tl_dtype dt = tl_get_dtype(handle);
  if (kind == 2 && dt != TL_F32 && dt != TL_F64)
    return tl_api_fail(ctx, tl_graph_mark(&ctx->graph), TL_ERR_DTYPE, "%s: needs a float tensor, not %s", what,
                       tl_dtype_name(dt));
  if (kind != 3 && dt > TL_F64) /* the same answer on every rank: all agreed on the dtype */
    return tl_api_fail(ctx, tl_graph_mark(&ctx->graph), TL_ERR_DTYPE,
                       "%s: %s tensors are not reduced across ranks yet (bool, i32, i64, f32 and f64 are)", what,
                       tl_dtype_name(dt));
  if (kind == 3 && (root < 0 || root >= tl_mpi_size()))
    return tl_api_fail(ctx, tl_graph_mark(&ctx->graph), TL_ERR_RANGE, "%s: root %d is not a rank (there are %d)", what,
                       root, tl_mpi_size());
  if (tl_mpi_size() > 1) tl_dist_count_path(nccl);
  tl_tensor *r = NULL;
  if (nccl) {
    r = by_nccl(ctx, &dev, kind, root, what, handle);
  } else {
    int64_t shape[TL_MAX_DIMS], n = tl_numel(handle);
    for (int i = 0; i < tl_ndim(handle); i++) shape[i] = tl_dim(handle, i);
    void *out = NULL;
    r = tl_dist_new_output(ctx, what, dt, tl_ndim(handle), shape, &out);
    if (!r) return NULL;
    size_t bytes = (size_t)n * tl_dtype_size(dt);
    if (!tl_mpi_running()) {
      if (bytes) memcpy(out, in, bytes);
    } else if (kind == 3) {
      if (tl_mpi_rank() == root && bytes) memcpy(out, in, bytes);
      st = tl_mpi_bcast(out, n, dt, root, &ctx->err);
    } else { /* a sum of booleans is their "or" (MAX over 0 and 1) */
      st = tl_mpi_allreduce(in, out, n, dt, dt == TL_BOOL ? TL_MPI_MAX_OP : TL_MPI_SUM_OP, &ctx->err);
    }
    if (st) tl_release(r), r = NULL;
  }
  if (!r || kind != 2 || tl_mpi_size() == 1) return r;
  /* the mean: the sum times 1/N, lazily (it fuses into what reads it) */
  tl_tensor *m = tl_mul_scalar(r, 1.0 / tl_mpi_size());
  tl_release(r);
  return m;
}

tl_tensor *tl_dist_all_reduce_as(tl_tensor *t, int mean, const char *what) {
  return collective(t, mean ? 2 : 1, 0, what);
}
tl_tensor *tl_dist_broadcast_as(tl_tensor *t, int root, const char *what) { return collective(t, 3, root, what); }
tl_tensor *tl_dist_all_reduce(tl_tensor *t) { return collective(t, 1, 0, "tl_dist_all_reduce"); }
tl_tensor *tl_dist_all_reduce_mean(tl_tensor *t) { return collective(t, 2, 0, "tl_dist_all_reduce_mean"); }
tl_tensor *tl_dist_broadcast(tl_tensor *t, int root) { return collective(t, 3, root, "tl_dist_broadcast"); }

tl_status tl_dist_barrier_as(const char *what) {
  tl_error e = {0};
  tl_status st = tl_mpi_start(&e);
  int64_t d[DESC_N];
  describe(d, 4, NULL, 0, false);
  if (!st && tl_mpi_running()) st = tl_dist_agree(d, what, &e);
  if (st) tl_api_fail_orphan(st, "%s", e.msg);
  return st;
}
tl_status tl_dist_barrier(void) { return tl_dist_barrier_as("tl_dist_barrier"); }

void tl_dist_describe_sync(int64_t *d, int n, bool failed) {
  describe(d, 5, NULL, 0, failed);
  d[D_NDIM] = n > 0;
}

/* the exchange at exit (mpi_load.c): a rank that ends while another is in a collective
 * makes both fail; false then, with the message in err */
bool tl_dist_exit_agrees(tl_error *err) {
  int64_t d[DESC_N];
  describe(d, 6, NULL, 0, false);
  return tl_dist_agree(d, "the end of the program", err) == TL_OK;
}

tl_tensor *tl_dist_shard_as(tl_tensor *handle, const char *what) {
  tl_tensor *t = tl_api_tensor(handle, what);
  if (!t) return NULL;
  tl_error e = {0};
  if (tl_mpi_start(&e)) return fail_on(t->slot.ctx, e.status, e.msg);
  if (tl_ndim(handle) == 0)
    return tl_api_fail(t->slot.ctx, tl_graph_mark(&t->slot.ctx->graph), TL_ERR_SHAPE,
                       "%s: a 0-d tensor has no rows to share out", what);
  int64_t n = tl_dim(handle, 0), r = tl_mpi_rank(), N = tl_mpi_size();
  /* rows [r n / N, (r + 1) n / N): n < 2^40 and N < 2^31, so the products fit */
  return tl_slice(handle, 0, r * n / N, (r + 1) * n / N, 1);
}
tl_tensor *tl_dist_shard(tl_tensor *t) { return tl_dist_shard_as(t, "tl_dist_shard"); }

void tl_dist_abort(const char *message, FILE *out) {
  if (!out) out = stderr;
  int r = tl_mpi_running() ? tl_mpi_rank() : tl_mpi_env_rank();
  fprintf(out, "rank %d: %s\n", r < 0 ? 0 : r, message ? message : "error");
  fflush(out);
  if (!tl_mpi_running()) return; /* the caller exits 1: mpirun then ends the job */
  if (collective_error) { /* every rank has this error: let each print its own first */
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  tl_mpi_abort(1);
}
