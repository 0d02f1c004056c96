/* planner.c — greedy best-fit placement by decreasing size.
 *
 * Why this algorithm: buffers are taken largest first (ties: longer lifetime first,
 * then index, so the plan is deterministic). Each one looks only at the buffers
 * already placed whose lifetimes overlap its own, walks their byte ranges in offset
 * order, and takes the smallest gap it fits in; with no fitting gap it goes just
 * above them. Large buffers placed first lay down the "skeleton" of the arena, and
 * the many small ones then fill the holes between them instead of raising the peak.
 * This is the strategy of TFLite's arena planner and MXNet's memory planner; it is
 * simple, O(n^2 log n), and on random schedules lands on average ~1% above the
 * lower bound (the largest total of simultaneously live bytes). A linear scan with a
 * free list is cheaper but fragments badly when sizes vary, which they do.
 *
 * Why arena_bytes <= naive_bytes: by induction, a buffer goes either into a gap
 * (below some placed buffer's end) or right at the top of its conflicts, which is at
 * most the arena so far; so each placement raises the arena by at most its own size. */
#include "planner.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct {
  size_t size; /* aligned */
  int first, last, idx;
  size_t offset;
} plan_item;

typedef struct {
  size_t lo, hi; /* a placed buffer's bytes [lo, hi) */
} plan_span;

static int lifetimes_overlap(int a, int b, int c, int d) { return a <= d && c <= b; }

/* rounds s up to TL_PLAN_ALIGN; 0 when that would overflow (s > 0 is then an error) */
static size_t align_up(size_t s) {
  if (s > SIZE_MAX - (TL_PLAN_ALIGN - 1)) return 0;
  return (s + (TL_PLAN_ALIGN - 1)) / TL_PLAN_ALIGN * TL_PLAN_ALIGN;
}

static tl_status check_input(const tl_plan_buffer *bufs, int n, tl_error *err) {
  if (n < 0) return tl_error_set(err, TL_ERR_ARG, "memory plan: negative buffer count %d", n);
  if (!bufs && n > 0)
    return tl_error_set(err, TL_ERR_ARG, "memory plan: NULL buffers with count %d", n);
  for (int i = 0; i < n; i++)
    if (bufs[i].first > bufs[i].last)
      return tl_error_set(err, TL_ERR_ARG,
                          "memory plan: buffer %d has first kernel %d after last kernel %d",
                          i, bufs[i].first, bufs[i].last);
  return TL_OK;
}

/* largest first; a longer lifetime conflicts with more buffers, so place it earlier */
static int by_size_desc(const void *pa, const void *pb) {
  const plan_item *a = pa, *b = pb;
  if (a->size != b->size) return a->size < b->size ? 1 : -1;
  int la = a->last - a->first, lb = b->last - b->first;
  if (la != lb) return la < lb ? 1 : -1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

static int by_offset(const void *pa, const void *pb) {
  const plan_span *a = pa, *b = pb;
  return (a->lo > b->lo) - (a->lo < b->lo);
}

/* the lowest offset of the smallest gap of at least `size` bytes among the spans
 * (sorted by offset); the top of all spans when no gap fits. Spans may overlap each
 * other (their buffers need not be live together), hence the running `top`. */
static size_t best_fit(const plan_span *spans, int k, size_t size) {
  size_t top = 0, best = 0, best_gap = SIZE_MAX;
  int found = 0;
  for (int i = 0; i < k; i++) {
    if (spans[i].lo > top) {
      size_t gap = spans[i].lo - top;
      if (gap >= size && gap < best_gap) {
        best = top, best_gap = gap, found = 1;
      }
    }
    if (spans[i].hi > top) top = spans[i].hi;
  }
  return found ? best : top;
}

/* places items[i] against items[0..i) (already placed); returns its end */
static size_t place_one(plan_item *items, int i, plan_span *spans) {
  plan_item *it = &items[i];
  int k = 0;
  for (int j = 0; j < i; j++)
    if (items[j].size && lifetimes_overlap(it->first, it->last, items[j].first, items[j].last))
      spans[k++] = (plan_span){items[j].offset, items[j].offset + items[j].size};
  qsort(spans, (size_t)k, sizeof *spans, by_offset);
  it->offset = best_fit(spans, k, it->size);
  return it->offset + it->size;
}

/* aligned copies of the buffers and their naive total; TL_ERR_RANGE on overflow */
static tl_status make_items(const tl_plan_buffer *bufs, int n, plan_item *items,
                            size_t *naive, tl_error *err) {
  *naive = 0;
  for (int i = 0; i < n; i++) {
    size_t s = align_up(bufs[i].size);
    if (bufs[i].size && !s)
      return tl_error_set(err, TL_ERR_RANGE, "memory plan: buffer %d size %zu overflows", i,
                          bufs[i].size);
    if (s > SIZE_MAX - *naive)
      return tl_error_set(err, TL_ERR_RANGE,
                          "memory plan: total size overflows at buffer %d (size %zu)", i,
                          bufs[i].size);
    *naive += s;
    items[i] = (plan_item){s, bufs[i].first, bufs[i].last, i, 0};
  }
  return TL_OK;
}

tl_status tl_plan_make(tl_plan_buffer *bufs, int n, tl_plan *out, tl_error *err) {
  if (!out) return tl_error_set(err, TL_ERR_ARG, "memory plan: NULL output plan");
  tl_status st = check_input(bufs, n, err);
  if (st) return st;
  *out = (tl_plan){0, 0};
  if (n == 0) return TL_OK;
  plan_item *items = malloc((size_t)n * sizeof *items);
  plan_span *spans = malloc((size_t)n * sizeof *spans);
  if (!items || !spans) {
    st = tl_error_set(err, TL_ERR_NOMEM, "memory plan: out of memory for %d buffers", n);
    goto done;
  }
  st = make_items(bufs, n, items, &out->naive_bytes, err);
  if (st) goto done;
  qsort(items, (size_t)n, sizeof *items, by_size_desc);
  for (int i = 0; i < n; i++) {
    if (!items[i].size) continue; /* zero-size: offset 0, no bytes, nothing to avoid */
    size_t end = place_one(items, i, spans);
    if (end > out->arena_bytes) out->arena_bytes = end;
  }
  for (int i = 0; i < n; i++) bufs[items[i].idx].offset = items[i].offset;
done:
  free(items);
  free(spans);
  return st;
}

/* one buffer on its own: aligned, and its aligned slot inside the arena */
static tl_status validate_one(const tl_plan_buffer *b, int i, size_t arena, tl_error *err) {
  if (b->offset % TL_PLAN_ALIGN)
    return tl_error_set(err, TL_ERR_INTERNAL,
                        "memory plan: buffer %d offset %zu is not aligned to %d", i,
                        b->offset, TL_PLAN_ALIGN);
  size_t s = align_up(b->size);
  if (b->size && !s)
    return tl_error_set(err, TL_ERR_RANGE, "memory plan: buffer %d size %zu overflows", i,
                        b->size);
  if (b->offset > arena || s > arena - b->offset)
    return tl_error_set(err, TL_ERR_INTERNAL,
                        "memory plan: buffer %d bytes [%zu, %zu) lie outside the arena of "
                        "%zu bytes",
                        i, b->offset, b->offset + s, arena);
  return TL_OK;
}

/* two buffers live at once must not share a byte. Offsets are aligned, so comparing
 * aligned slots is the same as comparing the bytes actually used. */
static tl_status validate_pair(const tl_plan_buffer *bufs, int i, int j, tl_error *err) {
  const tl_plan_buffer *a = &bufs[i], *b = &bufs[j];
  if (!a->size || !b->size || !lifetimes_overlap(a->first, a->last, b->first, b->last))
    return TL_OK;
  size_t ae = a->offset + align_up(a->size), be = b->offset + align_up(b->size);
  if (a->offset >= be || b->offset >= ae) return TL_OK;
  return tl_error_set(err, TL_ERR_INTERNAL,
                      "memory plan: buffer %d (bytes [%zu, %zu), kernels [%d, %d]) and "
                      "buffer %d (bytes [%zu, %zu), kernels [%d, %d]) collide",
                      i, a->offset, ae, a->first, a->last, j, b->offset, be, b->first,
                      b->last);
}

tl_status tl_plan_validate(const tl_plan_buffer *bufs, int n, const tl_plan *plan,
                           tl_error *err) {
  if (!plan) return tl_error_set(err, TL_ERR_ARG, "memory plan: NULL plan");
  tl_status st = check_input(bufs, n, err);
  for (int i = 0; !st && i < n; i++) st = validate_one(&bufs[i], i, plan->arena_bytes, err);
  for (int i = 0; !st && i < n; i++)
    for (int j = i + 1; !st && j < n; j++) st = validate_pair(bufs, i, j, err);
  return st;
}
