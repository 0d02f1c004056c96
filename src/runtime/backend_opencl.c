/* backend_opencl.c — the opencl backend: kernels rendered as OpenCL C
 * (codegen/render_cl.c), built by the driver (cl_driver.c: once per process, binaries
 * cached on disk) and launched on its grid. Buffers are device memory, kept in a cache
 * of freed blocks by size class (a steady loop allocates nothing on the device), with a
 * host copy made when the host reads or writes one.
 * in: lowered kernels, host bytes; out: device buffers, and their bytes on the host. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/render_cl.h"
#include "core/dtype.h"
#include "runtime/backend.h"
#include "runtime/cl_driver.h"

enum { DEV_CACHE_SLOTS = 64 };

typedef struct {
  tl_cl *cl;
  tl_cl_target target; /* the device's kind, or TL_OPENCL_TARGET's (tests run a GPU's kernels on PoCL) */
  /* freed device blocks, oldest first: reused by a request of the same size class */
  tl_cl_buf *cached[DEV_CACHE_SLOTS];
  size_t cached_bytes;
  int ncached;
  uint64_t live, live_bytes, peak_bytes, allocs, reuses; /* tensors' device buffers */
} cl_state;

static cl_state *state(const tl_backend *be) { return be->state; }

/* ---- availability: one probe per process ---- */
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static char probe_reason[sizeof(((tl_error *)0)->msg)], probe_found[512];
static bool probe_ok;

static void probe(void) {
  tl_cl *cl = NULL;
  tl_error err = {0};
  probe_ok = tl_cl_open(&cl, &err) == TL_OK;
  if (probe_ok) {
    const tl_cl_caps *c = tl_cl_get_caps(cl);
    snprintf(probe_found, sizeof probe_found, "%s: %s, %s, driver %s", c->platform, c->device, c->version, c->driver);
    tl_cl_close(cl);
    return;
  }
  /* "opencl: not available (REASON: FIX)" -> "REASON: FIX" */
  const char *m = strstr(err.msg, "not available (");
  snprintf(probe_reason, sizeof probe_reason, "%s", m ? m + strlen("not available (") : err.msg);
  size_t n = strlen(probe_reason);
  if (m && n && probe_reason[n - 1] == ')') probe_reason[n - 1] = 0;
}

static const char *cl_unavailable(void) {
  pthread_once(&probe_once, probe);
  return probe_ok ? NULL : probe_reason;
}

static const char *cl_found(void) {
  pthread_once(&probe_once, probe);
  return probe_ok ? probe_found : NULL;
}

/* ---- the instance ---- */
static tl_status cl_prepare(tl_backend *be, tl_error *err) {
  if (!be->state && !(be->state = calloc(1, sizeof(cl_state))))
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory starting the opencl backend");
  cl_state *s = state(be);
  if (s->cl) return TL_OK;
  tl_status st = tl_cl_open(&s->cl, err);
  if (st) return st;
  const char *forced = getenv("TL_OPENCL_TARGET");
  s->target.cpu = forced && !strcmp(forced, "gpu") ? false
                  : forced && !strcmp(forced, "cpu") ? true
                                                     : tl_cl_get_caps(s->cl)->is_cpu != 0;
  return TL_OK;
}

static void release_cache(cl_state *s) {
  for (int i = 0; i < s->ncached; i++) tl_cl_free(s->cl, s->cached[i]);
  s->ncached = 0;
  s->cached_bytes = 0;
}

/* every tensor's buffer is gone by now (the context frees them first): what the
 * driver still holds is a leak, and is said */
static void cl_release(tl_backend *be) {
  cl_state *s = state(be);
  if (!s) return;
  if (s->cl) {
    release_cache(s);
    uint64_t leaked = tl_cl_close(s->cl);
    if (leaked) fprintf(stderr, "tl: opencl: %llu device buffers still live at shutdown (a bug in TL: please report it)\n",
                        (unsigned long long)leaked);
  }
  free(s);
  be->state = NULL;
}

static void cl_caps(const tl_backend *be, tl_backend_caps *out) {
  const cl_state *s = be ? state(be) : NULL;
  const tl_cl_caps *c = s && s->cl ? tl_cl_get_caps(s->cl) : NULL;
  *out = (tl_backend_caps){.max_group = 1, .max_group_dims = {1, 1, 1}};
  if (!c) return;
  out->max_group = (int64_t)c->max_work_group;
  for (int d = 0; d < 3; d++) out->max_group_dims[d] = (int64_t)c->max_work_group;
  out->local_mem_bytes = (size_t)c->local_bytes;
  out->f64 = c->has_f64;
  out->f16 = c->has_f16;
  out->units = 1;
}

static void cl_stats(const tl_backend *be, tl_stats *st) {
  const cl_state *s = state(be);
  if (!s || !s->cl) return;
  tl_cl_stats c = tl_cl_get_stats(s->cl);
  st->kernels_compiled += c.builds;
  st->disk_cache_hits += c.disk_hits;
  st->mem_cache_hits += c.program_hits;
  st->disk_cache_rejects += c.disk_rejects;
  st->device_buffers += c.live_buffers;
  st->device_bytes += c.live_bytes;
  st->device_peak_bytes += c.peak_bytes;
  st->device_allocs += c.allocs;
  st->device_cached_bytes += s->cached_bytes;
}

/* ---- memory ---- */
static void dev_free(tl_buffer *b) {
  cl_state *s = b->dev_home;
  s->live--;
  s->live_bytes -= b->alloc_size;
  free(b->host);
  tl_cl_buf *d = b->dev;
  if (tl_cl_buf_size(d) > TL_BUFFER_CACHE_MAX_BYTES) {
    tl_cl_free(s->cl, d);
    return;
  }
  while (s->ncached && (s->ncached == DEV_CACHE_SLOTS || s->cached_bytes + tl_cl_buf_size(d) > TL_BUFFER_CACHE_MAX_BYTES)) {
    s->cached_bytes -= tl_cl_buf_size(s->cached[0]);
    tl_cl_free(s->cl, s->cached[0]);
    memmove(s->cached, s->cached + 1, sizeof *s->cached * (size_t)--s->ncached);
  }
  s->cached[s->ncached++] = d;
  s->cached_bytes += tl_cl_buf_size(d);
}

static tl_cl_buf *dev_take(cl_state *s, size_t size) {
  for (int i = s->ncached - 1; i >= 0; i--)
    if (tl_cl_buf_size(s->cached[i]) == size) {
      tl_cl_buf *d = s->cached[i];
      s->cached_bytes -= size;
      memmove(s->cached + i, s->cached + i + 1, sizeof *s->cached * (size_t)(--s->ncached - i));
      s->reuses++;
      return d;
    }
  tl_cl_buf *d = NULL;
  tl_error e = {0};
  if (tl_cl_alloc(s->cl, size, &d, &e) && s->ncached) { /* the cache's blocks go back first */
    release_cache(s);
    tl_cl_alloc(s->cl, size, &d, &e);
  }
  return d;
}

static tl_buffer *cl_alloc(tl_backend *be, tl_dtype dtype, int64_t numel, tl_mem *mem) {
  cl_state *s = state(be);
  tl_buffer *b = calloc(1, sizeof *b);
  size_t nbytes = (size_t)numel * tl_dtype_size(dtype), size = tl_mem_size_class(nbytes);
  if (!b || !(b->dev = dev_take(s, size))) {
    free(b);
    return NULL;
  }
  *b = (tl_buffer){.refs = 1, .dtype = (uint8_t)dtype, .backend = (uint8_t)(be->index + 1), .numel = numel,
                   .nbytes = nbytes, .alloc_size = size, .mem = mem, .dev = b->dev, .dev_free = dev_free,
                   .dev_home = s, .copies = TL_COPY_DEVICE};
  s->live++;
  s->allocs++;
  if ((s->live_bytes += size) > s->peak_bytes) s->peak_bytes = s->live_bytes;
  mem->live_buffers++;
  mem->buffers_made++;
  mem->live_bytes += nbytes;
  if (mem->live_bytes > mem->peak_bytes) mem->peak_bytes = mem->live_bytes;
  return b;
}

/* the device copy made current: the host's, sent */
static tl_status to_device(cl_state *s, tl_buffer *root, tl_error *err) {
  if (root->copies & TL_COPY_DEVICE) return TL_OK;
  tl_status st = tl_cl_write(s->cl, root->dev, 0, root->host, root->nbytes, err);
  if (!st) root->copies |= TL_COPY_DEVICE;
  return st;
}

static tl_status cl_from_host(tl_backend *be, tl_buffer *dst, size_t off, const void *src, size_t n, tl_error *err) {
  cl_state *s = state(be);
  tl_buffer *root = tl_buffer_root(dst);
  tl_status st = n < root->nbytes ? to_device(s, root, err) : TL_OK; /* the rest stays as it was */
  if (!st) st = tl_cl_write(s->cl, root->dev, dst->offset + off, src, n, err);
  if (!st) root->copies = TL_COPY_DEVICE;
  return st;
}

static tl_status cl_to_host(tl_backend *be, void *dst, const tl_buffer *src, size_t off, size_t n, tl_error *err) {
  const tl_buffer *root = tl_buffer_root(src);
  if (root->copies & TL_COPY_HOST) {
    if (n) memcpy(dst, (const char *)root->host + src->offset + off, n);
    return TL_OK;
  }
  return tl_cl_read(state(be)->cl, root->dev, src->offset + off, dst, n, err);
}

static tl_status cl_copy(tl_backend *be, tl_buffer *dst, const tl_buffer *src, size_t n, tl_error *err) {
  cl_state *s = state(be);
  tl_buffer *from = tl_buffer_root(src), *to = tl_buffer_root(dst);
  tl_status st = to_device(s, from, err);
  if (!st && n < to->nbytes) st = to_device(s, to, err);
  if (!st) st = tl_cl_copy(s->cl, from->dev, src->offset, to->dev, dst->offset, n, err);
  if (!st) to->copies = TL_COPY_DEVICE;
  return st;
}

static void *cl_host_view(tl_backend *be, tl_buffer *b, bool write, tl_error *err) {
  tl_buffer *root = tl_buffer_root(b);
  if (!root->host && !(root->host = malloc(root->alloc_size))) {
    tl_error_set(err, TL_ERR_NOMEM, "opencl: out of memory for a host copy of %zu bytes", root->nbytes);
    return NULL;
  }
  if (!(root->copies & TL_COPY_HOST)) {
    if (tl_cl_read(state(be)->cl, root->dev, 0, root->host, root->nbytes, err)) return NULL;
    root->copies |= TL_COPY_HOST;
  }
  if (write) root->copies = TL_COPY_HOST;
  return (char *)root->host + b->offset;
}

/* ---- kernels ---- */
static tl_status cl_plan(tl_backend *be, const tl_lowered *low, tl_kernel *k, tl_error *err) {
  (void)err;
  k->work = low->work;
  tl_render_cl_grid(low, &state(be)->target, &k->grid_dims, k->grid, k->group);
  return TL_OK;
}

static char *cl_render(tl_backend *be, const tl_lowered *low, const tl_kernel *k, const char **body) {
  (void)k;
  char *src = tl_render_cl(low, &state(be)->target);
  const char *fn = src ? strstr(src, "\n__kernel ") : NULL;
  *body = fn ? fn + 1 : src;
  return src;
}

static tl_status cl_compile(tl_backend *be, const char *src, tl_kernel *k, tl_error *err) {
  tl_cl_kernel *ck = NULL;
  tl_status st = tl_cl_kernel_get(state(be)->cl, src, "tl_kernel", &ck, err);
  k->device_code = ck;
  return st;
}

static tl_status cl_flush(tl_backend *be, tl_error *err) { /* each kernel was built when asked */
  (void)be, (void)err;
  return TL_OK;
}

static tl_status check_arg(const tl_backend *be, const tl_kernel *k, int i, const tl_kernel_arg *a, tl_error *err) {
  const tl_buffer *b = a->buf;
  if (!b || !tl_buffer_root(b)->dev || b->backend != be->index + 1)
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d is not an opencl buffer", k->name, i);
  if (a->dtype != k->arg_dtype[i])
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d has dtype %s, expected %s", k->name, i,
                        tl_dtype_name(a->dtype), tl_dtype_name(k->arg_dtype[i]));
  if (a->nbytes < k->arg_min_bytes[i])
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d has %zu bytes, needs %zu", k->name, i, a->nbytes,
                        k->arg_min_bytes[i]);
  return TL_OK;
}

static tl_status cl_launch(tl_backend *be, const tl_kernel *k, const tl_kernel_arg *args, const uint64_t *words,
                           tl_error *err) {
  cl_state *s = state(be);
  if (!k->device_code) return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: not built for opencl", k->name);
  if (k->nwords > 0 && !words)
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: takes %d data words, given none", k->name, k->nwords);
  tl_cl_arg cargs[2 * TL_KERNEL_MAX_ARGS + 2 * TL_KERNEL_MAX_ARGS];
  uint64_t offsets[TL_KERNEL_MAX_ARGS];
  int n = 0;
  for (int i = 0; i < k->nargs; i++) {
    tl_status st = check_arg(be, k, i, &args[i], err);
    tl_buffer *root = st ? NULL : tl_buffer_root(args[i].buf);
    if (!st) st = to_device(s, root, err);
    if (st) return st;
    offsets[i] = args[i].buf->offset + args[i].offset;
    cargs[n++] = (tl_cl_arg){.kind = TL_CL_ARG_BUF, .buf = root->dev};
    cargs[n++] = (tl_cl_arg){.kind = TL_CL_ARG_VALUE, .value = &offsets[i], .size = sizeof offsets[i]};
  }
  for (int j = 0; j < k->nwords && n < (int)(sizeof cargs / sizeof cargs[0]); j++)
    cargs[n++] = (tl_cl_arg){.kind = TL_CL_ARG_VALUE, .value = &words[j], .size = sizeof words[j]};
  tl_status st = tl_cl_launch(s->cl, k->device_code, n, cargs, k->grid_dims, k->grid, k->group[0] ? k->group : NULL, err);
  if (!st && k->nargs) tl_buffer_root(args[0].buf)->copies = TL_COPY_DEVICE;
  return st;
}

static tl_status cl_synchronize(tl_backend *be, tl_error *err) { return tl_cl_finish(state(be)->cl, err); }

const tl_backend_i tl_backend_opencl = {
    .name = "opencl",
    .about = "OpenCL C kernels on an OpenCL device",
    .unavailable = cl_unavailable,
    .found = cl_found,
    .prepare = cl_prepare,
    .release = cl_release,
    .caps = cl_caps,
    .stats = cl_stats,
    .buffer_alloc = cl_alloc,
    .copy_from_host = cl_from_host,
    .copy_to_host = cl_to_host,
    .copy = cl_copy,
    .host_view = cl_host_view,
    .plan = cl_plan,
    .render = cl_render,
    .compile = cl_compile,
    .flush = cl_flush,
    .launch = cl_launch,
    .synchronize = cl_synchronize,
};
