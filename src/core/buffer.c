#include "buffer.h"

#include <stdlib.h>
#include <string.h>

#include "dtype.h"

/* ---- buffers -------------------------------------------------------------- */
/* Size classes: powers of two from 64 bytes to 1 MiB, then multiples of 64 KiB, so a
 * freed block serves any later request of its class. */
size_t tl_mem_size_class(size_t n) {
  if (n <= 64) return 64;
  if (n <= ((size_t)1 << 20)) {
    size_t c = 64;
    while (c < n) c <<= 1;
    return c;
  }
  return (n + 65535) & ~(size_t)65535;
}

static void *mem_alloc(tl_mem *m, size_t size) {
  for (int i = m->ncached - 1; i >= 0; i--) /* newest first: likely still in cache */
    if (m->cached_size[i] == size) {
      void *p = m->cached[i];
      m->ncached--;
      memmove(m->cached + i, m->cached + i + 1, sizeof(void *) * (size_t)(m->ncached - i));
      memmove(m->cached_size + i, m->cached_size + i + 1, sizeof(size_t) * (size_t)(m->ncached - i));
      m->cached_bytes -= size;
      m->cache_hits++;
      return p;
    }
  m->mallocs++;
  return aligned_alloc(64, size);
}

static void mem_evict_oldest(tl_mem *m) {
  free(m->cached[0]);
  m->frees++;
  m->cached_bytes -= m->cached_size[0];
  m->ncached--;
  memmove(m->cached, m->cached + 1, sizeof(void *) * (size_t)m->ncached);
  memmove(m->cached_size, m->cached_size + 1, sizeof(size_t) * (size_t)m->ncached);
}

static void mem_free(tl_mem *m, void *p, size_t size) {
  if (size > TL_BUFFER_CACHE_MAX_BYTES) {
    free(p);
    m->frees++;
    return;
  }
  while (m->ncached && (m->ncached == TL_BUFFER_CACHE_SLOTS || m->cached_bytes + size > TL_BUFFER_CACHE_MAX_BYTES))
    mem_evict_oldest(m);
  m->cached[m->ncached] = p;
  m->cached_size[m->ncached++] = size;
  m->cached_bytes += size;
}

void tl_mem_release_cache(tl_mem *m) {
  while (m->ncached) mem_evict_oldest(m);
}

tl_buffer *tl_buffer_new(tl_dtype dtype, int64_t numel, tl_mem *mem) {
  tl_buffer *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  size_t nbytes = (size_t)numel * tl_dtype_size(dtype);
  size_t alloc = tl_mem_size_class(nbytes);
  b->data = mem_alloc(mem, alloc);
  if (!b->data) {
    free(b);
    return NULL;
  }
  b->refs = 1;
  b->dtype = dtype;
  b->numel = numel;
  b->nbytes = nbytes;
  b->alloc_size = alloc;
  b->mem = mem;
  mem->live_buffers++;
  mem->buffers_made++;
  mem->live_bytes += nbytes;
  if (mem->live_bytes > mem->peak_bytes) mem->peak_bytes = mem->live_bytes;
  return b;
}

tl_buffer *tl_buffer_view(tl_buffer *owner, size_t offset, tl_dtype dtype, int64_t numel) {
  size_t nbytes = (size_t)numel * tl_dtype_size(dtype);
  if (offset + nbytes > owner->nbytes) return NULL;
  tl_buffer *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->refs = 1;
  b->dtype = dtype;
  b->numel = numel;
  b->nbytes = nbytes;
  b->data = owner->data ? (char *)owner->data + offset : NULL; /* device memory: none */
  b->offset = owner->offset + offset;
  b->mem = owner->mem;
  b->owner = owner;
  b->backend = owner->backend;
  tl_buffer_retain(owner);
  return b;
}

void tl_buffer_retain(tl_buffer *b) { b->refs++; }

void tl_buffer_release(tl_buffer *b) {
  if (!b || --b->refs > 0) return;
  if (b->owner) {
    tl_buffer_release(b->owner);
    free(b);
    return;
  }
  b->mem->live_buffers--;
  b->mem->live_bytes -= b->nbytes;
  if (b->dev_free) b->dev_free(b);
  else mem_free(b->mem, b->data, b->alloc_size);
  free(b);
}
