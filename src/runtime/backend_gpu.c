/* backend_gpu.c — a device backend over its driver (gpu_driver.h): opencl and cuda are
 * each this code and a driver. Kernels are rendered by codegen/render_gpu.c for the
 * device, built by the driver (once per process, cached) and launched on their grid.
 * Buffers are device memory, kept in a cache of freed blocks by size class (a steady
 * loop allocates nothing on the device), with a host copy made when the host reads
 * or writes one (core/buffer.h: which copies are current).
 * in: lowered kernels, host bytes; out: device buffers, and their bytes on the host. */
#include "runtime/backend_gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"

enum { DEV_CACHE_SLOTS = 64 };

typedef struct {
  const tl_gpu_driver *drv;
  void *dev;
  tl_gpu_info info;
  tl_gpu_target target; /* the device's kind, or the driver's target_env's (tests run a GPU's kernels on PoCL) */
  /* freed device blocks, oldest first: reused by a request of the same size class */
  void *cached[DEV_CACHE_SLOTS];
  size_t cached_bytes;
  int ncached;
  uint64_t live, live_bytes, peak_bytes, allocs, reuses; /* tensors' device buffers */
} gpu_state;

static gpu_state *state(const tl_backend *be) { return be->state; }
static const tl_gpu_driver *driver(const tl_backend *be) { return be->i->driver; }

/* ---- availability: one probe per driver and process ---- */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

static void probe(const tl_gpu_driver *d, tl_gpu_probe *p) {
  void *dev = NULL;
  tl_error err = {0};
  p->ok = d->open(&dev, &err) == TL_OK;
  if (p->ok) {
    tl_gpu_info info;
    d->info(dev, &info);
    snprintf(p->found, sizeof p->found, "%s", info.found);
    d->close(dev);
    return;
  }
  /* "NAME: not available (REASON: FIX)" -> "REASON: FIX" */
  const char *m = strstr(err.msg, "not available (");
  snprintf(p->reason, sizeof p->reason, "%s", m ? m + strlen("not available (") : err.msg);
  size_t n = strlen(p->reason);
  if (m && n && p->reason[n - 1] == ')') p->reason[n - 1] = 0;
}

static tl_gpu_probe *probed(const tl_gpu_driver *d, tl_gpu_probe *p) {
  pthread_mutex_lock(&probe_lock);
  if (!p->done) probe(d, p), p->done = true;
  pthread_mutex_unlock(&probe_lock);
  return p;
}

const char *tl_gpu_unavailable(const tl_gpu_driver *d, tl_gpu_probe *p) {
  return probed(d, p)->ok ? NULL : p->reason;
}

const char *tl_gpu_found(const tl_gpu_driver *d, tl_gpu_probe *p) { return probed(d, p)->ok ? p->found : NULL; }

/* ---- the instance ---- */
tl_status tl_gpu_prepare(tl_backend *be, tl_error *err) {
  if (!be->state && !(be->state = calloc(1, sizeof(gpu_state))))
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory starting the %s backend", be->i->name);
  gpu_state *s = state(be);
  if (s->dev) return TL_OK;
  s->drv = driver(be);
  tl_status st = s->drv->open(&s->dev, err);
  if (st) return st;
  s->drv->info(s->dev, &s->info);
  const char *forced = getenv(s->drv->target_env);
  s->target.lang = s->drv->lang;
  s->target.cpu = forced && !strcmp(forced, "gpu") ? false : forced && !strcmp(forced, "cpu") ? true : s->info.cpu;
  return TL_OK;
}

static void release_cache(gpu_state *s) {
  for (int i = 0; i < s->ncached; i++) s->drv->free(s->dev, s->cached[i]);
  s->ncached = 0;
  s->cached_bytes = 0;
}

/* every tensor's buffer is gone by now (the context frees them first): what the
 * driver still holds is a leak, and is said */
void tl_gpu_release(tl_backend *be) {
  gpu_state *s = state(be);
  if (!s) return;
  if (s->dev) {
    release_cache(s);
    uint64_t leaked = s->drv->close(s->dev);
    if (leaked) fprintf(stderr, "tl: %s: %llu device buffers still live at shutdown (a bug in TL: please report it)\n",
                        be->i->name, (unsigned long long)leaked);
  }
  free(s);
  be->state = NULL;
}

void tl_gpu_caps(const tl_backend *be, tl_backend_caps *out) {
  const gpu_state *s = be ? state(be) : NULL;
  *out = (tl_backend_caps){.max_group = 1, .max_group_dims = {1, 1, 1}};
  if (!s || !s->dev) return;
  out->max_group = s->info.max_group;
  for (int d = 0; d < 3; d++) out->max_group_dims[d] = s->info.max_group;
  out->local_mem_bytes = s->info.shared_bytes;
  out->f64 = s->info.f64;
  out->f16 = s->info.f16;
  out->units = 1;
}

void tl_gpu_stats(const tl_backend *be, tl_stats *st) {
  const gpu_state *s = state(be);
  if (!s || !s->dev) return;
  s->drv->stats(s->dev, st);
  st->device_cached_bytes += s->cached_bytes;
}

/* ---- memory ---- */
static void dev_free(tl_buffer *b) {
  gpu_state *s = b->dev_home;
  s->live--;
  s->live_bytes -= b->alloc_size;
  free(b->host);
  void *d = b->dev;
  if (s->drv->size(d) > TL_BUFFER_CACHE_MAX_BYTES) {
    s->drv->free(s->dev, d);
    return;
  }
  while (s->ncached && (s->ncached == DEV_CACHE_SLOTS || s->cached_bytes + s->drv->size(d) > TL_BUFFER_CACHE_MAX_BYTES)) {
    s->cached_bytes -= s->drv->size(s->cached[0]);
    s->drv->free(s->dev, s->cached[0]);
    memmove(s->cached, s->cached + 1, sizeof *s->cached * (size_t)--s->ncached);
  }
  s->cached[s->ncached++] = d;
  s->cached_bytes += s->drv->size(d);
}

static void *dev_take(gpu_state *s, size_t size) {
  for (int i = s->ncached - 1; i >= 0; i--)
    if (s->drv->size(s->cached[i]) == size) {
      void *d = s->cached[i];
      s->cached_bytes -= size;
      memmove(s->cached + i, s->cached + i + 1, sizeof *s->cached * (size_t)(--s->ncached - i));
      s->reuses++;
      return d;
    }
  void *d = NULL;
  tl_error e = {0};
  if (s->drv->alloc(s->dev, size, &d, &e) && s->ncached) { /* the cache's blocks go back first */
    release_cache(s);
    s->drv->alloc(s->dev, size, &d, &e);
  }
  return d;
}

tl_buffer *tl_gpu_alloc(tl_backend *be, tl_dtype dtype, int64_t numel, tl_mem *mem) {
  gpu_state *s = state(be);
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
static tl_status to_device(gpu_state *s, tl_buffer *root, tl_error *err) {
  if (root->copies & TL_COPY_DEVICE) return TL_OK;
  tl_status st = s->drv->write(s->dev, root->dev, 0, root->host, root->nbytes, err);
  if (!st) root->copies |= TL_COPY_DEVICE;
  return st;
}

tl_status tl_gpu_from_host(tl_backend *be, tl_buffer *dst, size_t off, const void *src, size_t n, tl_error *err) {
  gpu_state *s = state(be);
  tl_buffer *root = tl_buffer_root(dst);
  tl_status st = n < root->nbytes ? to_device(s, root, err) : TL_OK; /* the rest stays as it was */
  if (!st) st = s->drv->write(s->dev, root->dev, dst->offset + off, src, n, err);
  if (!st) root->copies = TL_COPY_DEVICE;
  return st;
}

tl_status tl_gpu_to_host(tl_backend *be, void *dst, const tl_buffer *src, size_t off, size_t n, tl_error *err) {
  const tl_buffer *root = tl_buffer_root(src);
  if (root->copies & TL_COPY_HOST) {
    if (n) memcpy(dst, (const char *)root->host + src->offset + off, n);
    return TL_OK;
  }
  const gpu_state *s = state(be);
  return s->drv->read(s->dev, root->dev, src->offset + off, dst, n, err);
}

tl_status tl_gpu_copy(tl_backend *be, tl_buffer *dst, const tl_buffer *src, size_t n, tl_error *err) {
  gpu_state *s = state(be);
  tl_buffer *from = tl_buffer_root(src), *to = tl_buffer_root(dst);
  tl_status st = to_device(s, from, err);
  if (!st && n < to->nbytes) st = to_device(s, to, err);
  if (!st) st = s->drv->copy(s->dev, from->dev, src->offset, to->dev, dst->offset, n, err);
  if (!st) to->copies = TL_COPY_DEVICE;
  return st;
}

void *tl_gpu_host_view(tl_backend *be, tl_buffer *b, bool write, tl_error *err) {
  tl_buffer *root = tl_buffer_root(b);
  if (!root->host && !(root->host = malloc(root->alloc_size))) {
    tl_error_set(err, TL_ERR_NOMEM, "%s: out of memory for a host copy of %zu bytes", be->i->name, root->nbytes);
    return NULL;
  }
  if (!(root->copies & TL_COPY_HOST)) {
    const gpu_state *s = state(be);
    if (s->drv->read(s->dev, root->dev, 0, root->host, root->nbytes, err)) return NULL;
    root->copies |= TL_COPY_HOST;
  }
  if (write) root->copies = TL_COPY_HOST;
  return (char *)root->host + b->offset;
}

tl_status tl_gpu_device_memory(tl_backend *be, tl_buffer *b, void **dev, void **buf, size_t *off, tl_error *err) {
  gpu_state *s = state(be);
  tl_buffer *root = tl_buffer_root(b);
  if (!s || !s->dev || !root->dev || b->backend != be->index + 1)
    return tl_error_set(err, TL_ERR_ARG, "%s: not a buffer of this device", be->i->name);
  tl_status st = to_device(s, root, err);
  if (st) return st;
  *dev = s->dev, *buf = root->dev, *off = b->offset;
  return TL_OK;
}

/* ---- kernels ---- */
tl_status tl_gpu_plan(tl_backend *be, const tl_lowered *low, tl_kernel *k, tl_error *err) {
  (void)err;
  k->work = low->work;
  tl_render_gpu_grid(low, &state(be)->target, &k->grid_dims, k->grid, k->group);
  return TL_OK;
}

char *tl_gpu_render(tl_backend *be, const tl_lowered *low, const tl_kernel *k, const char **body) {
  (void)k;
  char *src = tl_render_gpu(low, &state(be)->target);
  const char *fn = src ? strstr(src, "\nTL_KERNEL ") : NULL;
  *body = fn ? fn + 1 : src;
  return src;
}

tl_status tl_gpu_compile(tl_backend *be, const char *src, tl_kernel *k, tl_error *err) {
  const gpu_state *s = state(be);
  return s->drv->kernel(s->dev, src, &k->device_code, err);
}

tl_status tl_gpu_flush(tl_backend *be, tl_error *err) { /* each kernel was built when asked */
  (void)be, (void)err;
  return TL_OK;
}

static tl_status check_arg(const tl_backend *be, const tl_kernel *k, int i, const tl_kernel_arg *a, tl_error *err) {
  const tl_buffer *b = a->buf;
  if (!b || !tl_buffer_root(b)->dev || b->backend != be->index + 1)
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d is not a %s buffer", k->name, i, be->i->name);
  if (a->dtype != k->arg_dtype[i])
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d has dtype %s, expected %s", k->name, i,
                        tl_dtype_name(a->dtype), tl_dtype_name(k->arg_dtype[i]));
  if (a->nbytes < k->arg_min_bytes[i])
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: argument %d has %zu bytes, needs %zu", k->name, i, a->nbytes,
                        k->arg_min_bytes[i]);
  return TL_OK;
}

tl_status tl_gpu_launch(tl_backend *be, const tl_kernel *k, const tl_kernel_arg *args, const uint64_t *words,
                           tl_error *err) {
  gpu_state *s = state(be);
  if (!k->device_code) return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: not built for %s", k->name, be->i->name);
  if (k->nwords > 0 && !words)
    return tl_error_set(err, TL_ERR_ARG, "kernel %.64s: takes %d data words, given none", k->name, k->nwords);
  tl_gpu_arg cargs[2 * TL_KERNEL_MAX_ARGS + 2 * TL_KERNEL_MAX_ARGS];
  uint64_t offsets[TL_KERNEL_MAX_ARGS];
  int n = 0;
  for (int i = 0; i < k->nargs; i++) {
    tl_status st = check_arg(be, k, i, &args[i], err);
    tl_buffer *root = st ? NULL : tl_buffer_root(args[i].buf);
    if (!st) st = to_device(s, root, err);
    if (st) return st;
    offsets[i] = args[i].buf->offset + args[i].offset;
    cargs[n++] = (tl_gpu_arg){.buf = root->dev};
    cargs[n++] = (tl_gpu_arg){.value = &offsets[i], .size = sizeof offsets[i]};
  }
  for (int j = 0; j < k->nwords && n < (int)(sizeof cargs / sizeof cargs[0]); j++)
    cargs[n++] = (tl_gpu_arg){.value = &words[j], .size = sizeof words[j]};
  tl_status st = s->drv->launch(s->dev, k->device_code, n, cargs, k->grid_dims, k->grid, k->group[0] ? k->group : NULL, err);
  if (!st && k->nargs) tl_buffer_root(args[0].buf)->copies = TL_COPY_DEVICE;
  return st;
}

tl_status tl_gpu_synchronize(tl_backend *be, tl_error *err) {
  const gpu_state *s = state(be);
  return s->drv->finish(s->dev, err);
}

