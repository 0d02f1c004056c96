/* dist_grads.c — tl_dist_sync_grads: every parameter's gradient replaced by its mean
 * over the ranks, through one flat buffer in buckets (LANGUAGE.md §13).
 *
 * The gradients are realized together (one realize), then streamed, in the order given
 * and dtype by dtype, into a bucket of TL_DIST_BUCKET_MB (default 4 MiB, two of them):
 * a full bucket is summed in place (MPI_Allreduce), then its sums are copied into the
 * new gradients' buffers, and each gradient becomes that buffer times 1/N, lazily (the
 * scaling fuses into the optimizer's kernel). With TL_DIST_PIPELINE=1 a bucket's
 * MPI_Iallreduce runs while the next is packed; on this machine that was slower (OpenMPI
 * progresses a non-blocking collective only inside MPI calls), so it is off by default. A gradient of a bucket or more skips the bucket: MPI sums it from its own
 * memory into its new buffer (two copies fewer). Memory stays bounded by the two buckets whatever the model's size, and the
 * number of MPI calls is the gradients' bytes over the bucket's, not one per tensor.
 * TL's backward realizes every leaf's gradient in one realize at its end, so there is
 * no moment when some buckets are ready while backward still runs: the only overlap
 * possible is with the packing and unpacking (docs/distributed.md measures it). */
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "core/format.h"
#include "dist/dist.h"
#include "dist/dist_internal.h"

typedef struct {
  int param;
  int64_t at, len, pos; /* elements [at, at + len) of the parameter, at pos in the bucket */
} seg;

typedef struct {
  char *buf;
  seg *segs;
  int nsegs;
  int64_t fill;
  tl_mpi_request req;
  bool busy;
} bucket;

static struct {
  size_t bytes; /* each bucket's */
  char *mem;    /* the two buckets */
  int pipeline; /* -1: not read yet */
} B = {0, NULL, -1};

void tl_dist_grads_free(void) {
  free(B.mem);
  B.mem = NULL;
}

void tl_dist_set_bucket_bytes(size_t bytes) {
  tl_dist_grads_free();
  B.bytes = bytes < 64 ? 64 : bytes;
}

static size_t bucket_bytes(void) {
  if (!B.bytes) {
    const char *e = getenv("TL_DIST_BUCKET_MB");
    double mb = e && *e ? atof(e) : 4;
    B.bytes = mb > 0 && mb < 4096 ? (size_t)(mb * 1048576) : (size_t)4 << 20;
    if (B.bytes < 64) B.bytes = 64; /* tiny buckets: for the tests of bucket boundaries */
  }
  if (B.pipeline < 0) {
    const char *e = getenv("TL_DIST_PIPELINE"); /* off unless 1: measured slower here */
    B.pipeline = e && !strcmp(e, "1");
  }
  return B.bytes;
}

typedef struct {
  tl_dtype dt;
  size_t es;
  int64_t cap; /* elements per bucket */
  const void **in;
  void **out;
  tl_error *err;
  bucket b[2];
  int cur;
} stream;

static tl_status start(stream *s, bucket *b) {
  if (!b->fill) return TL_OK;
  b->busy = true;
  if (B.pipeline) return tl_mpi_iallreduce_sum(b->buf, (int)b->fill, s->dt, &b->req, s->err);
  return tl_mpi_allreduce(NULL, b->buf, b->fill, s->dt, TL_MPI_SUM_OP, s->err);
}

/* waits for b's sums and copies them into the gradients' new buffers */
static tl_status finish(stream *s, bucket *b) {
  if (!b->busy) return TL_OK;
  b->busy = false;
  tl_status st = B.pipeline ? tl_mpi_wait(&b->req, s->err) : TL_OK;
  for (int i = 0; i < b->nsegs && !st; i++) {
    const seg *g = &b->segs[i];
    memcpy((char *)s->out[g->param] + g->at * s->es, b->buf + g->pos * s->es, (size_t)g->len * s->es);
  }
  b->nsegs = 0;
  b->fill = 0;
  return st;
}

/* parameter p's n elements into the buckets, starting the all-reduce of each one filled */
static tl_status add(stream *s, int p, int64_t n) {
  for (int64_t at = 0; at < n;) {
    bucket *b = &s->b[s->cur];
    int64_t len = n - at < s->cap - b->fill ? n - at : s->cap - b->fill;
    memcpy(b->buf + b->fill * s->es, (const char *)s->in[p] + at * s->es, (size_t)len * s->es);
    b->segs[b->nsegs++] = (seg){p, at, len, b->fill};
    b->fill += len;
    at += len;
    if (b->fill == s->cap) {
      tl_status st = start(s, b);
      s->cur ^= 1;
      if (!st) st = finish(s, &s->b[s->cur]); /* the other bucket: done by now, or soon */
      if (st) return st;
    }
  }
  return TL_OK;
}

/* a gradient of a bucket or more: summed from its own memory into its new buffer (no
 * packing, no unpacking) */
static tl_status direct(stream *s, int p, int64_t n) {
  return tl_mpi_allreduce(s->in[p], s->out[p], n, s->dt, TL_MPI_SUM_OP, s->err);
}

static tl_status reduce_dtype(stream *s, int n, tl_tensor *const *grads) {
  for (int i = 0; i < n; i++)
    if (tl_get_dtype(grads[i]) == s->dt) {
      int64_t numel = tl_numel(grads[i]);
      tl_status st = numel >= s->cap ? direct(s, i, numel) : add(s, i, numel);
      if (st) return st;
    }
  bucket *last = &s->b[s->cur], *other = &s->b[s->cur ^ 1];
  tl_status st = start(s, last);
  if (!st) st = finish(s, other);
  if (!st) st = finish(s, last);
  return st;
}

/* a summary every rank must share: the count, the elements, and a hash of the shapes */
static void describe(int64_t *d, int n, tl_tensor *const *grads) {
  uint64_t h = 1469598103934665603ull, total = 0;
  for (int i = 0; i < n; i++) {
    h = (h ^ (uint64_t)tl_get_dtype(grads[i])) * 1099511628211ull;
    for (int k = 0; k < tl_ndim(grads[i]); k++) h = (h ^ (uint64_t)tl_dim(grads[i], k)) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    total += (uint64_t)tl_numel(grads[i]);
  }
  d[0] = n;
  d[1] = (int64_t)total;
  d[2] = (int64_t)(h >> 2);
}

/* after the sums: each parameter's gradient becomes its sum times 1/N, lazily, so the
 * scaling costs no pass of its own: it fuses into whatever reads the gradient next (the
 * optimizer's step) */
static tl_status install(int n, tl_tensor *const *params, tl_tensor *const *outs, double scale) {
  for (int i = 0; i < n; i++) {
    tl_tensor *mean = tl_mul_scalar(outs[i], scale);
    if (!mean) return tl_last_status(tl_context(outs[i]));
    tl_tensor *p = tl_api_tensor(params[i], "sync_grads"), *m = tl_api_tensor(mean, "sync_grads");
    tl_ctx *ctx = p->slot.ctx;
    tl_uop_retain(m->u);
    if (p->ag->grad) tl_uop_release(&ctx->graph, p->ag->grad);
    p->ag->grad = m->u;
    tl_release(mean);
  }
  return TL_OK;
}

tl_status tl_dist_sync_grads_as(int n, tl_tensor *const *params, const char *what) {
  tl_error e = {0};
  tl_status st = tl_mpi_start(&e);
  if (st) {
    tl_api_fail_orphan(st, "%s", e.msg);
    return st;
  }
  if (n < 0 || (n > 0 && !params)) {
    tl_api_fail_orphan(TL_ERR_ARG, "%s: bad parameter list", what);
    n = 0;
    st = TL_ERR_ARG;
  }
  tl_tensor **grads = calloc((size_t)n + 1, sizeof *grads), **outs = calloc((size_t)n + 1, sizeof *outs);
  const void **in = calloc((size_t)n + 1, sizeof *in);
  void **out = calloc((size_t)n + 1, sizeof *out);
  seg *segs = calloc(2 * ((size_t)n + 1), sizeof *segs);
  if (!grads || !outs || !in || !out || !segs) st = tl_error_set(&e, TL_ERR_NOMEM, "%s: out of memory", what);
  tl_ctx *ctx = NULL;
  /* every parameter a leaf requiring grad, its gradient computed: else this rank fails */
  for (int i = 0; i < n && !st; i++) {
    tl_tensor *t = tl_api_tensor(params[i], what);
    if (!t) st = tl_error_set(&e, TL_ERR_ARG, "%s: parameter %d is not a live tensor", what, i);
    else if (ctx && t->slot.ctx != ctx) st = tl_error_set(&e, TL_ERR_ARG, "%s: parameters of different contexts", what);
    else if (!(grads[i] = tl_grad(params[i]))) st = tl_error_set(&e, tl_last_status(t->slot.ctx), "%s: parameter %d: %s",
                                                                 what, i, tl_last_error(t->slot.ctx));
    if (t) ctx = t->slot.ctx;
  }
  if (!st && n && tl_mpi_size() > 1) {
    if (tl_realize_many(n, grads) != TL_OK) st = tl_error_set(&e, tl_last_status(ctx), "%s: %s", what, tl_last_error(ctx));
    for (int i = 0; i < n && !st; i++)
      if (!(in[i] = tl_data(grads[i]))) st = tl_error_set(&e, tl_last_status(ctx), "%s: %s", what, tl_last_error(ctx));
  }
  int64_t d[DIST_DESC_WORDS];
  tl_dist_describe_sync(d, n, st != TL_OK);
  if (!st) describe(d + DIST_DESC_SHAPE, n, grads);
  if (tl_mpi_size() > 1) {
    tl_status ag = tl_dist_agree(d, what, &e);
    if (!st) st = ag;
  }
  for (int i = 0; i < n && !st && tl_mpi_size() > 1; i++) {
    int64_t shape[TL_MAX_DIMS];
    for (int k = 0; k < tl_ndim(grads[i]); k++) shape[k] = tl_dim(grads[i], k);
    outs[i] = tl_dist_new_output(ctx, what, tl_get_dtype(grads[i]), tl_ndim(grads[i]), shape, &out[i]);
    if (!outs[i]) st = tl_error_set(&e, tl_last_status(ctx), "%s: %s", what, tl_last_error(ctx));
  }
  if (!st && n && tl_mpi_size() > 1) {
    size_t bytes = bucket_bytes();
    if (!B.mem) B.mem = malloc(2 * bytes);
    if (!B.mem) st = tl_error_set(&e, TL_ERR_NOMEM, "%s: out of memory for two buckets of %zu bytes", what, bytes);
    for (int k = 0; k < 2 && !st; k++) { /* f32, then f64 */
      stream s = {.dt = k ? TL_F64 : TL_F32, .es = k ? 8 : 4, .in = in, .out = out, .err = &e};
      s.cap = (int64_t)(bytes / s.es);
      for (int j = 0; j < 2; j++) s.b[j] = (bucket){.buf = B.mem + j * bytes, .segs = segs + j * ((size_t)n + 1)};
      st = reduce_dtype(&s, n, grads);
    }
    if (!st && install(n, params, outs, 1.0 / tl_mpi_size()))
      st = tl_error_set(&e, tl_last_status(ctx), "%s: %s", what, tl_last_error(ctx));
  }
  for (int i = 0; i < n && grads; i++) {
    if (grads[i]) tl_release(grads[i]);
    if (outs && outs[i]) tl_release(outs[i]);
  }
  free(grads);
  free(outs);
  free(in);
  free(out);
  free(segs);
  if (st) {
    if (ctx) tl_error_set(&ctx->err, st, "%s", e.msg);
    tl_api_fail_orphan(st, "%s", e.msg);
  }
  return st;
}

tl_status tl_dist_sync_grads(int n, tl_tensor *const *params) {
  return tl_dist_sync_grads_as(n, params, "tl_dist_sync_grads");
}
