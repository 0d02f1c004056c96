/* planner.h — the realize-time memory planner: packs a schedule's intermediate
 * buffers into one arena, letting buffers whose lifetimes do not overlap share bytes.
 * in: each buffer's size and lifetime [first, last] in kernel indices (written by
 * kernel `first`, last read by kernel `last`); out: a byte offset per buffer and the
 * arena size. Pure data: no allocation survives a call, nothing else of the engine
 * is used.
 *
 * Two lifetimes [a,b] and [c,d] overlap when a <= d && c <= b: a buffer last read by
 * kernel k and one first written by kernel k are live at once (k reads the one while
 * writing the other), so they never share bytes. */
#ifndef TL_SCHED_PLANNER_H
#define TL_SCHED_PLANNER_H

#include <stddef.h>

#include "core/error.h"

typedef struct tl_plan_buffer {
  size_t size;     /* bytes (may be 0) */
  int first, last; /* kernel indices: written by kernel `first`, last read by `last` */
  size_t offset;   /* out: byte offset in the arena, a multiple of TL_PLAN_ALIGN */
} tl_plan_buffer;

typedef struct tl_plan {
  size_t arena_bytes; /* peak: the arena size needed */
  size_t naive_bytes; /* sum of all (aligned) sizes: what one allocation each would cost */
} tl_plan;

/* every offset and every reserved slot is a multiple of this (a cache line, and wide
 * enough for any SIMD load a kernel emits) */
#define TL_PLAN_ALIGN 64

/* Places every buffer so that no two buffers with overlapping lifetimes share bytes.
 * Algorithm: greedy best-fit by decreasing size (see planner.c). Guarantees
 * arena_bytes <= naive_bytes. Zero-size buffers get offset 0 and take no bytes.
 * Returns TL_OK, or TL_ERR_ARG (n < 0, NULL bufs with n > 0, first > last),
 * TL_ERR_RANGE (a size or the total overflows size_t), TL_ERR_NOMEM, with a message. */
tl_status tl_plan_make(tl_plan_buffer *bufs, int n, tl_plan *out, tl_error *err);

/* Proves a plan: every offset aligned, every buffer's aligned slot inside
 * [0, arena_bytes), and no two buffers with overlapping lifetimes overlapping in
 * memory. On failure the message names the offending buffer(s). O(n^2). */
tl_status tl_plan_validate(const tl_plan_buffer *bufs, int n, const tl_plan *plan,
                           tl_error *err);

#endif
