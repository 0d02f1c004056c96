/* backend.c — the table of backends, choosing one by name, and instances. Adding a
 * backend: its tl_backend_i in a file of its own, one line in `table` below. */
#include "runtime/backend.h"

#include <stdlib.h>
#include <string.h>

/* every backend this build knows, whether or not it can run here (unavailable() says
 * why not: `tl devices` lists them all) */
static const tl_backend_i *const table[] = {&tl_backend_cpu, &tl_backend_interp, &tl_backend_opencl, &tl_backend_cuda};
enum { NTABLE = (int)(sizeof table / sizeof table[0]) };

int tl_backend_count(void) { return NTABLE; }

const tl_backend_i *tl_backend_get(int index) { return index >= 0 && index < NTABLE ? table[index] : NULL; }

const tl_backend_i *tl_backend_find(const char *name) {
  for (int i = 0; name && i < NTABLE; i++)
    if (!strcmp(table[i]->name, name)) return table[i];
  return NULL;
}

/* "cpu or interp", "cpu, interp or opencl": the backends that can run here */
static void usable_names(char *out, size_t cap) {
  const char *names[NTABLE];
  int n = 0;
  for (int i = 0; i < NTABLE; i++)
    if (!table[i]->unavailable || !table[i]->unavailable()) names[n++] = table[i]->name;
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < n && used < cap; i++)
    used += (size_t)snprintf(out + used, cap - used, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
}

tl_status tl_backend_check(const char *name, tl_error *err) {
  const tl_backend_i *i = tl_backend_find(name);
  if (!i) {
    char names[200];
    usable_names(names, sizeof names);
    return tl_error_set(err, TL_ERR_BACKEND, "unknown backend '%s' (expected %s)", name ? name : "(null)", names);
  }
  const char *why = i->unavailable ? i->unavailable() : NULL;
  if (why) return tl_error_set(err, TL_ERR_BACKEND, "backend '%s' is not available: %s", name, why);
  return TL_OK;
}

bool tl_backend_init(tl_backend *be, const tl_backend_i *i, const tl_backend_opts *opts) {
  if (tl_backend_find(i->name) != i) return false; /* only the table's */
  memset(be, 0, sizeof *be);
  be->i = i;
  be->opts = opts;
  while (table[be->index] != i) be->index++;
  return true;
}

void tl_backend_fini(tl_backend *be) {
  if (!be->i) return;
  tl_replay_cache_free(&be->replay); /* its kernels go with the state */
  if (be->i->release) be->i->release(be);
  memset(be, 0, sizeof *be);
}

tl_status tl_backend_prepare(tl_backend *be, tl_error *err) {
  tl_status st = be->i->prepare ? be->i->prepare(be, err) : TL_OK;
  be->ready = !st;
  return st;
}

void tl_backend_reconfigure(tl_backend *be) {
  be->ready = false;
  tl_replay_clear(&be->replay);
  if (be->i->configure) be->i->configure(be);
}

/* ---- host memory: the buffers of cpu and interp ---- */
tl_buffer *tl_backend_host_alloc(tl_backend *be, tl_dtype dtype, int64_t numel, tl_mem *mem) {
  tl_buffer *b = tl_buffer_new(dtype, numel, mem);
  if (b) b->backend = (uint8_t)(be->index + 1);
  return b;
}

tl_status tl_backend_host_from(tl_backend *be, tl_buffer *dst, size_t off, const void *src, size_t n, tl_error *err) {
  (void)be, (void)err;
  if (n) memcpy((char *)dst->data + off, src, n);
  return TL_OK;
}

tl_status tl_backend_host_to(tl_backend *be, void *dst, const tl_buffer *src, size_t off, size_t n, tl_error *err) {
  (void)be, (void)err;
  if (n) memcpy(dst, (const char *)src->data + off, n);
  return TL_OK;
}

tl_status tl_backend_host_copy(tl_backend *be, tl_buffer *dst, const tl_buffer *src, size_t n, tl_error *err) {
  (void)be, (void)err;
  if (n) memcpy(dst->data, src->data, n);
  return TL_OK;
}
