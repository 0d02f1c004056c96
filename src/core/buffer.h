/* buffer.h — refcounted host memory and the context's memory statistics.
 * in: a dtype and an element count; out: a buffer from the context's cache of freed
 * blocks (or fresh), counted in its tl_mem. A device backend's buffers have no host
 * data: they hold its handle, and a host copy made when the host reads them
 * (runtime/backend.h, host_view). */
#ifndef TL_CORE_BUFFER_H
#define TL_CORE_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "tl.h"

typedef struct tl_buffer tl_buffer;

#define TL_BUFFER_CACHE_SLOTS 64
#define TL_BUFFER_CACHE_MAX_BYTES ((size_t)1 << 30)
/* Counters and a cache of freed blocks by size class: a loop that realizes the same
 * shapes again reuses memory, with no malloc and no fresh pages, after its first turn.
 * Bounded in blocks and bytes; the oldest block goes first. */
typedef struct tl_mem {
  uint64_t live_buffers, live_bytes, peak_bytes, mallocs, frees, cache_hits, buffers_made;
  void *cached[TL_BUFFER_CACHE_SLOTS];
  size_t cached_size[TL_BUFFER_CACHE_SLOTS];
  size_t cached_bytes;
  int ncached;
} tl_mem;
void tl_mem_release_cache(tl_mem *m); /* frees the cached blocks */
/* the bytes a request of n takes: its size class (the host cache's and the devices') */
size_t tl_mem_size_class(size_t n);

/* which copies of a device buffer hold its current values */
enum { TL_COPY_HOST = 1, TL_COPY_DEVICE = 2 };

struct tl_buffer {
  int32_t refs;
  uint8_t dtype;   /* a tl_dtype (a byte, so that `backend` fits beside it) */
  uint8_t backend; /* the backend that made it: 1 + its index in runtime/backend.c's
                      table (a view: its owner's); 0: made outside one */
  int64_t numel;
  size_t nbytes;
  void *data;
  size_t alloc_size;
  tl_mem *mem;      /* the owning context's counters and cache */
  tl_buffer *owner; /* a view into another buffer (an arena): holds it, frees nothing */
  size_t offset;    /* a view: bytes from its owner's start */
  /* device memory (data is NULL; views use their owner's): */
  void *dev;        /* the backend's handle */
  void (*dev_free)(tl_buffer *b); /* the backend's: gives dev (and host) back */
  void *dev_home;   /* the backend's state dev_free needs */
  void *host;       /* the host copy, made when the host first reads or writes it */
  uint8_t copies;   /* TL_COPY_*: which copies are current */
};

tl_buffer *tl_buffer_new(tl_dtype dtype, int64_t numel, tl_mem *mem);
/* numel elements of dtype at byte offset inside owner (which it keeps alive) */
tl_buffer *tl_buffer_view(tl_buffer *owner, size_t offset, tl_dtype dtype, int64_t numel);
/* the buffer that holds the memory (b, or the owner of its owners); b->offset is
 * where b starts in it */
static inline tl_buffer *tl_buffer_root(const tl_buffer *b) {
  while (b->owner) b = b->owner;
  return (tl_buffer *)b;
}
void tl_buffer_retain(tl_buffer *b);
void tl_buffer_release(tl_buffer *b);

#endif
