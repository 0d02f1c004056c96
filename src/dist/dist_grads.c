/* dist_grads.c — tl_dist_sync_grads: every parameter's gradient replaced by its mean
 * over the ranks, in a few large all-reduces (LANGUAGE.md §13).
 *
 * The gradients are realized together (one realize). Dtype by dtype, those of a bucket
 * (TL_DIST_BUCKET_MB, default 4 MiB) or more are summed by MPI from their own memory
 * into their new buffers; the others are packed, in the order given and never split,
 * into buckets of at most that size: each bucket is a new tensor, summed in place, and
 * each gradient packed in it becomes its piece of it (a view: nothing is copied back, and
 * no staging memory is kept between calls). Either way the new gradient is the sum
 * times 1/N, lazily: the scaling fuses into whatever reads it next (the optimizer's
 * step). The MPI calls are the gradients' bytes over a bucket's, not one per tensor.
 *
 * TL's backward realizes every leaf's gradient in one realize at its end, so no bucket
 * is ready while backward still runs; the only overlap left is with the packing. With
 * TL_DIST_PIPELINE=1 a bucket's MPI_Iallreduce runs while the next is packed; here that
 * measured slower (OpenMPI progresses a non-blocking collective only inside MPI calls),
 * so it is off by default (docs/distributed.md).
 *
 * Cuda gradients go by NCCL where every rank chose it (dist_device.c): the same
 * buckets, packed on the device by copies queued on the cuda stream and summed there in
 * place, with nothing waited for (the pipeline does not apply). */
#include <stdlib.h>
#include <string.h>

#include "api/context.h"
#include "autograd/autograd.h"
#include "core/format.h"
#include "dist/dist.h"
#include "dist/dist_internal.h"

static struct {
  size_t bytes; /* a bucket's */
  int pipeline; /* -1: not read yet */
} B = {0, -1};

void tl_dist_set_bucket_bytes(size_t bytes) { B.bytes = bytes < 64 ? 64 : bytes; }

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
  tl_ctx *ctx;
  const char *what;
  tl_dtype dt;
  size_t es;
  int64_t cap; /* elements per bucket */
  tl_tensor *const *grads;
  const void **in;  /* their values (staged through host memory) */
  const tl_dist_dev *dev; /* or their device memory (by NCCL) */
  bool nccl;
  tl_tensor **outs; /* the new gradients (sums), made here */
  const int *list;  /* the gradients that go through buckets, in order */
  tl_error *err;
} stream;

/* a bucket: the gradients list[first..last), packed into a new tensor summed in place */
typedef struct {
  int first, last;
  tl_tensor *sum;
  tl_mpi_request req;
  bool busy;
} bucket;

static tl_status engine_error(stream *s) {
  return tl_error_set(s->err, tl_last_status(s->ctx), "%s: %s", s->what, tl_last_error(s->ctx));
}

/* by NCCL: b's gradients packed on the device (copies queued on the stream), summed in place */
static tl_status start_nccl(stream *s, bucket *b, int64_t total) {
  tl_dist_dev out = {0};
  b->sum = tl_dist_new_device_output(s->ctx, s->dev[s->list[b->first]].be, s->what, s->dt, 1, &total, &out);
  if (!b->sum) return engine_error(s);
  size_t at = 0;
  for (int k = b->first; k < b->last; k++) {
    size_t nb = (size_t)tl_numel(s->grads[s->list[k]]) * s->es;
    tl_status st = tl_dist_dev_copy(&out, at, &s->dev[s->list[k]], nb, s->err);
    if (st) return st;
    at += nb;
  }
  b->busy = true;
  return tl_nccl_allreduce(NULL, tl_dist_dev_address(&out), total, s->dt, TL_MPI_SUM_OP, tl_dist_dev_stream(&out), s->err);
}

/* packs b's gradients into a new tensor and starts its sum there */
static tl_status start(stream *s, bucket *b) {
  int64_t total = 0;
  for (int k = b->first; k < b->last; k++) total += tl_numel(s->grads[s->list[k]]);
  if (s->nccl) return start_nccl(s, b, total);
  void *dst = NULL;
  b->sum = tl_dist_new_output(s->ctx, s->what, s->dt, 1, &total, &dst);
  if (!b->sum) return engine_error(s);
  char *at = dst;
  for (int k = b->first; k < b->last; k++) {
    size_t nb = (size_t)tl_numel(s->grads[s->list[k]]) * s->es;
    memcpy(at, s->in[s->list[k]], nb);
    at += nb;
  }
  b->busy = true;
  if (B.pipeline) return tl_mpi_iallreduce_sum(NULL, dst, (int)total, s->dt, &b->req, s->err);
  return tl_mpi_allreduce(NULL, dst, total, s->dt, TL_MPI_SUM_OP, s->err);
}

/* waits for b's sums; each of its gradients becomes its piece of them (a view) */
static tl_status finish(stream *s, bucket *b) {
  tl_status st = b->busy && B.pipeline && !s->nccl ? tl_mpi_wait(&b->req, s->err) : TL_OK;
  int64_t pos = 0;
  for (int k = b->first; k < b->last && b->busy && !st; k++) {
    tl_tensor *g = s->grads[s->list[k]];
    int64_t shape[TL_MAX_DIMS] = {0};
    for (int a = 0; a < tl_ndim(g); a++) shape[a] = tl_dim(g, a);
    tl_tensor *piece = tl_slice(b->sum, 0, pos, pos + tl_numel(g), 1);
    tl_tensor *v = piece ? tl_reshape(piece, tl_ndim(g), shape) : NULL;
    if (piece) tl_release(piece);
    if (!v) st = engine_error(s);
    s->outs[s->list[k]] = v;
    pos += tl_numel(g);
  }
  if (b->sum) tl_release(b->sum);
  *b = (bucket){0};
  return st;
}

/* a gradient of a bucket or more: summed from its own memory into its new buffer (no
 * packing) */
static tl_status direct(stream *s, int p) {
  int64_t shape[TL_MAX_DIMS] = {0};
  for (int k = 0; k < tl_ndim(s->grads[p]); k++) shape[k] = tl_dim(s->grads[p], k);
  if (s->nccl) { /* device to device */
    tl_dist_dev out = {0};
    s->outs[p] = tl_dist_new_device_output(s->ctx, s->dev[p].be, s->what, s->dt, tl_ndim(s->grads[p]), shape, &out);
    if (!s->outs[p]) return engine_error(s);
    return tl_nccl_allreduce(tl_dist_dev_address(&s->dev[p]), tl_dist_dev_address(&out), tl_numel(s->grads[p]), s->dt,
                             TL_MPI_SUM_OP, tl_dist_dev_stream(&out), s->err);
  }
  void *dst = NULL;
  s->outs[p] = tl_dist_new_output(s->ctx, s->what, s->dt, tl_ndim(s->grads[p]), shape, &dst);
  if (!s->outs[p]) return engine_error(s);
  return tl_mpi_allreduce(s->in[p], dst, tl_numel(s->grads[p]), s->dt, TL_MPI_SUM_OP, s->err);
}

/* this dtype's gradients: the big ones directly, then the others in buckets, each
 * bucket packed while the one before is summed (TL_DIST_PIPELINE=1) */
static tl_status reduce_dtype(stream *s, int n, int *list) {
  int m = 0;
  tl_status st = TL_OK;
  for (int i = 0; i < n && !st; i++)
    if (tl_get_dtype(s->grads[i]) == s->dt) {
      if (tl_numel(s->grads[i]) >= s->cap) st = direct(s, i);
      else list[m++] = i;
    }
  s->list = list;
  bucket b[2] = {{0}, {0}};
  int cur = 0;
  for (int k = 0; k < m && !st;) {
    int64_t fill = 0;
    b[cur].first = k;
    while (k < m && fill + tl_numel(s->grads[list[k]]) <= s->cap) fill += tl_numel(s->grads[list[k++]]);
    b[cur].last = k;
    st = start(s, &b[cur]);
    cur ^= 1;
    tl_status prev = finish(s, &b[cur]); /* the bucket before, summed meanwhile */
    if (!st) st = prev;
  }
  tl_status last = finish(s, &b[cur ^ 1]);
  finish(s, &b[cur]); /* nothing left there, or an error's leftovers */
  return st ? st : last;
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

/* every gradient's values on the host (realized); false with the error in *err */
typedef struct {
  int n;
  tl_tensor **grads;
  const void **in;
  tl_ctx *ctx;
  const char *what;
  tl_error *err;
} fetch_args;

static bool fetch(void *arg) {
  fetch_args *a = arg;
  for (int i = 0; i < a->n; i++)
    if (!(a->in[i] = tl_data(a->grads[i]))) {
      tl_error_set(a->err, tl_last_status(a->ctx), "%s: %s", a->what, tl_last_error(a->ctx));
      return false;
    }
  return true;
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
  int *list = calloc((size_t)n + 1, sizeof *list);
  tl_dist_dev *dev = calloc((size_t)n + 1, sizeof *dev);
  if (!grads || !outs || !in || !list || !dev) st = tl_error_set(&e, TL_ERR_NOMEM, "%s: out of memory", what);
  tl_ctx *ctx = NULL;
  /* every parameter a leaf requiring grad, its gradient computed: else this rank fails */
  for (int i = 0; i < n && !st; i++) {
    tl_tensor *t = tl_api_tensor(params[i], what);
    if (!t) st = tl_error_set(&e, TL_ERR_ARG, "%s: parameter %d is not a live tensor", what, i);
    else if (ctx && t->slot.ctx != ctx) st = tl_error_set(&e, TL_ERR_ARG, "%s: parameters of different contexts", what);
    else if (!(grads[i] = tl_grad(params[i]))) st = tl_error_set(&e, tl_last_status(t->slot.ctx), "%s: parameter %d: %s",
                                                                 what, i, tl_last_error(t->slot.ctx));
    else if (tl_get_dtype(grads[i]) != TL_F32 && tl_get_dtype(grads[i]) != TL_F64) /* only these are summed below */
      st = tl_error_set(&e, TL_ERR_DTYPE, "%s: parameter %d is %s: only f32 and f64 gradients are averaged across ranks",
                        what, i, tl_dtype_name(tl_get_dtype(grads[i])));
    if (t) ctx = t->slot.ctx;
  }
  bool wish = false, all = false, any = false, nccl = false;
  fetch_args fa = {n, grads, in, ctx, what, &e};
  if (!st && n && tl_mpi_size() > 1) {
    if (tl_realize_many(n, grads) != TL_OK) st = tl_error_set(&e, tl_last_status(ctx), "%s: %s", what, tl_last_error(ctx));
    wish = !st; /* every gradient in cuda memory, NCCL usable */
    for (int i = 0; i < n && wish; i++) wish = tl_dist_nccl_wish(grads[i], &dev[i]);
    if (!st && !wish && !fetch(&fa)) st = e.status;
  }
  int64_t d[DIST_DESC_WORDS];
  tl_dist_describe_sync(d, n, st != TL_OK);
  if (!st) describe(d + DIST_DESC_SHAPE, n, grads);
  if (wish) d[DIST_DESC_STATE] |= DIST_DESC_NCCL;
  if (tl_mpi_size() > 1) {
    tl_status ag = tl_dist_agree_path(d, what, &all, &any, &e);
    if (!st) st = ag;
    if (!st) st = tl_dist_settle_path(d, what, wish, all, any, fetch, &fa, &nccl, &e);
  }
  if (!st && n && tl_mpi_size() > 1) {
    tl_dist_count_path(nccl);
    size_t bytes = bucket_bytes();
    for (int k = 0; k < 2 && !st; k++) { /* f32, then f64 */
      stream s = {.ctx = ctx, .what = what, .dt = k ? TL_F64 : TL_F32, .es = k ? 8 : 4, .grads = grads, .in = in,
                  .dev = dev, .nccl = nccl, .outs = outs, .err = &e};
      s.cap = (int64_t)(bytes / s.es);
      st = reduce_dtype(&s, n, list);
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
  free(list);
  free(dev);
  if (st) {
    if (ctx) tl_error_set(&ctx->err, st, "%s", e.msg);
    tl_api_fail_orphan(st, "%s", e.msg);
  }
  return st;
}

tl_status tl_dist_sync_grads(int n, tl_tensor *const *params) {
  return tl_dist_sync_grads_as(n, params, "tl_dist_sync_grads");
}
