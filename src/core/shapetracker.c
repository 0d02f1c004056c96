#include "shapetracker.h"

#include <stddef.h>
#include <string.h>

#include "hash.h"

/* Saturates instead of overflowing: the API refuses shapes over TL_MAX_NUMEL before
 * they reach a view, so saturation only keeps an unchecked caller free of UB. */
int64_t tl_shape_numel(int ndim, const int64_t *shape) {
  int64_t n = 1;
  bool over = false;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 0) return 0;
    over |= __builtin_mul_overflow(n, shape[i], &n);
  }
  return over ? INT64_MAX : n;
}

bool tl_shape_fits(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0 || shape[i] > TL_MAX_NUMEL) return false;
    if (shape[i] && n > TL_MAX_NUMEL / shape[i]) return false; /* checked before it can overflow */
    if (shape[i]) n *= shape[i];
  }
  return true;
}

void tl_shape_strides(int ndim, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = shape[i] == 1 ? 0 : s; /* size-1 axes get stride 0: one canonical form */
    if (__builtin_mul_overflow(s, shape[i], &s)) s = INT64_MAX; /* only for shapes that do not fit */
  }
}

tl_view tl_view_contiguous(int ndim, const int64_t *shape) {
  tl_view v;
  memset(&v, 0, sizeof v);
  v.ndim = ndim;
  memcpy(v.shape, shape, sizeof(int64_t) * (size_t)ndim);
  tl_shape_strides(ndim, shape, v.strides);
  return v;
}

tl_st tl_st_contiguous(int ndim, const int64_t *shape) {
  tl_st st;
  memset(&st, 0, sizeof st);
  st.nviews = 1;
  st.views[0] = tl_view_contiguous(ndim, shape);
  return st;
}

const tl_view *tl_st_top(const tl_st *st) { return &st->views[st->nviews - 1]; }
int tl_st_ndim(const tl_st *st) { return tl_st_top(st)->ndim; }
const int64_t *tl_st_shape(const tl_st *st) { return tl_st_top(st)->shape; }

static bool view_equal(const tl_view *a, const tl_view *b) {
  if (a->ndim != b->ndim || a->masked != b->masked || a->offset != b->offset) return false;
  size_t n = sizeof(int64_t) * (size_t)a->ndim;
  if (memcmp(a->shape, b->shape, n) || memcmp(a->strides, b->strides, n)) return false;
  return !a->masked || (!memcmp(a->mask_lo, b->mask_lo, n) && !memcmp(a->mask_hi, b->mask_hi, n));
}

size_t tl_st_bytes(const tl_st *st) {
  int n = st->nviews < 1 ? 1 : st->nviews > TL_MAX_VIEWS ? TL_MAX_VIEWS : st->nviews;
  return offsetof(tl_st, views) + sizeof(tl_view) * (size_t)n;
}

void tl_st_load(tl_st *dst, const tl_st *kept) {
  size_t n = tl_st_bytes(kept);
  memcpy(dst, kept, n);
  memset((char *)dst + n, 0, sizeof *dst - n);
}

bool tl_st_equal(const tl_st *a, const tl_st *b) {
  if (a->nviews != b->nviews) return false;
  for (int i = 0; i < a->nviews; i++)
    if (!view_equal(&a->views[i], &b->views[i])) return false;
  return true;
}

uint64_t tl_st_hash(const tl_st *st) {
  uint64_t h = tl_hash_mix(TL_HASH_INIT, (uint64_t)st->nviews);
  for (int i = 0; i < st->nviews; i++) {
    const tl_view *v = &st->views[i];
    h = tl_hash_mix(h, (uint64_t)v->ndim * 31 + v->masked);
    h = tl_hash_mix(h, (uint64_t)v->offset);
    for (int d = 0; d < v->ndim; d++) {
      h = tl_hash_mix(h, (uint64_t)v->shape[d]);
      h = tl_hash_mix(h, (uint64_t)v->strides[d]);
      if (v->masked) h = tl_hash_mix(tl_hash_mix(h, (uint64_t)v->mask_lo[d]), (uint64_t)v->mask_hi[d]);
    }
  }
  return h;
}

static bool view_is_contiguous(const tl_view *v) {
  if (v->masked || v->offset != 0) return false;
  int64_t expect[TL_MAX_DIMS];
  tl_shape_strides(v->ndim, v->shape, expect);
  for (int d = 0; d < v->ndim; d++)
    if (v->shape[d] != 1 && v->strides[d] != expect[d]) return false;
  return true;
}

bool tl_st_is_contiguous(const tl_st *st) {
  return st->nviews == 1 && view_is_contiguous(&st->views[0]);
}

/* A mask that covers the whole shape is no mask. */
static void view_drop_full_mask(tl_view *v) {
  if (!v->masked) return;
  for (int d = 0; d < v->ndim; d++)
    if (v->mask_lo[d] != 0 || v->mask_hi[d] != v->shape[d]) return;
  v->masked = false;
  memset(v->mask_lo, 0, sizeof v->mask_lo);
  memset(v->mask_hi, 0, sizeof v->mask_hi);
}

static bool view_is_empty(const tl_view *v) {
  if (!v->masked) return false;
  for (int d = 0; d < v->ndim; d++)
    if (v->mask_lo[d] >= v->mask_hi[d]) return true;
  return false;
}

/* Reshape within one view. Old and new axes are grouped into the smallest runs with
 * equal products (size-1 axes aside); a run of several old axes must be one
 * contiguous chain of strides, and a masked run must be one axis to one axis or
 * unmasked altogether. That is exactly when no new view is needed. */
bool tl_view_reshape(const tl_view *v, int ndim, const int64_t *shape, tl_view *out) {
  tl_view r;
  memset(&r, 0, sizeof r);
  r.ndim = ndim;
  memcpy(r.shape, shape, sizeof(int64_t) * (size_t)ndim);
  if (tl_shape_numel(ndim, shape) == 0 || view_is_empty(v)) {
    tl_shape_strides(ndim, shape, r.strides);
    r.masked = view_is_empty(v);
    *out = r; /* every element is either absent or invalid: any layout will do */
    return true;
  }
  int old[TL_MAX_DIMS], nold = 0, neu[TL_MAX_DIMS], nneu = 0;
  for (int d = 0; d < v->ndim; d++)
    if (v->shape[d] != 1) old[nold++] = d;
  for (int d = 0; d < ndim; d++)
    if (shape[d] != 1) neu[nneu++] = d;
    else r.mask_hi[d] = 1; /* size-1 axes: stride 0, mask [0,1) */
  r.offset = v->offset;
  r.masked = v->masked;
  int a = 0, c = 0;
  while (a < nold && c < nneu) {
    int b = a + 1, e = c + 1;
    int64_t po = v->shape[old[a]], pn = shape[neu[c]];
    while (po != pn) {
      if (po < pn) po *= v->shape[old[b++]];
      else pn *= shape[neu[e++]];
    }
    for (int t = a; t + 1 < b; t++)
      if (v->strides[old[t]] != v->strides[old[t + 1]] * v->shape[old[t + 1]]) return false;
    if (v->masked) {
      if (b - a == 1 && e - c == 1) {
        r.mask_lo[neu[c]] = v->mask_lo[old[a]];
        r.mask_hi[neu[c]] = v->mask_hi[old[a]];
      } else {
        for (int t = a; t < b; t++)
          if (v->mask_lo[old[t]] != 0 || v->mask_hi[old[t]] != v->shape[old[t]]) return false;
        for (int t = c; t < e; t++) r.mask_hi[neu[t]] = shape[neu[t]];
      }
    }
    int64_t s = v->strides[old[b - 1]];
    for (int t = e - 1; t >= c; t--) {
      r.strides[neu[t]] = s;
      s *= shape[neu[t]];
    }
    a = b;
    c = e;
  }
  if (!r.masked) memset(r.mask_hi, 0, sizeof r.mask_hi);
  view_drop_full_mask(&r);
  *out = r;
  return true;
}

/* Merge step: a top view that is a plain row-major reshape of the view below folds
 * into it when that reshape is one view; a plain row-major view below the top is
 * the identity on offsets and simply goes. */
void tl_st_simplify(tl_st *st) {
  while (st->nviews >= 2) {
    tl_view *top = &st->views[st->nviews - 1], *below = &st->views[st->nviews - 2];
    tl_view merged;
    if (view_is_contiguous(below)) {
      *below = *top;
    } else if (view_is_contiguous(top) &&
               tl_shape_numel(top->ndim, top->shape) == tl_shape_numel(below->ndim, below->shape) &&
               tl_view_reshape(below, top->ndim, top->shape, &merged)) {
      *below = merged;
    } else {
      return;
    }
    memset(top, 0, sizeof *top);
    st->nviews--;
  }
}

bool tl_st_reshape(tl_st *st, int ndim, const int64_t *shape) {
  tl_view *top = &st->views[st->nviews - 1], r;
  if (tl_view_reshape(top, ndim, shape, &r)) {
    *top = r;
  } else {
    if (st->nviews == TL_MAX_VIEWS) return false;
    st->views[st->nviews++] = tl_view_contiguous(ndim, shape);
  }
  tl_st_simplify(st);
  return true;
}

void tl_st_permute(tl_st *st, const int *perm) {
  tl_view *v = &st->views[st->nviews - 1], old = *v;
  for (int d = 0; d < v->ndim; d++) {
    v->shape[d] = old.shape[perm[d]];
    v->strides[d] = old.strides[perm[d]];
    v->mask_lo[d] = old.mask_lo[perm[d]];
    v->mask_hi[d] = old.mask_hi[perm[d]];
  }
  tl_st_simplify(st);
}

void tl_st_expand(tl_st *st, const int64_t *shape) {
  tl_view *v = &st->views[st->nviews - 1];
  for (int d = 0; d < v->ndim; d++) {
    if (v->shape[d] == shape[d]) continue;
    v->shape[d] = shape[d];
    v->strides[d] = 0;
    if (v->masked && v->mask_lo[d] < v->mask_hi[d]) v->mask_hi[d] = shape[d];
    else if (v->masked) v->mask_hi[d] = 0;
  }
  tl_st_simplify(st);
}

static int64_t clamp(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

void tl_st_shrink(tl_st *st, const int64_t *begin, const int64_t *end) {
  tl_view *v = &st->views[st->nviews - 1];
  for (int d = 0; d < v->ndim; d++) {
    int64_t n = end[d] - begin[d];
    v->offset += begin[d] * v->strides[d];
    if (v->masked) {
      v->mask_lo[d] = clamp(v->mask_lo[d] - begin[d], 0, n);
      v->mask_hi[d] = clamp(v->mask_hi[d] - begin[d], 0, n);
    }
    v->shape[d] = n;
    if (n == 1) {
      v->strides[d] = 0; /* canonical; the offset already holds the position */
    }
  }
  view_drop_full_mask(v);
  tl_st_simplify(st);
}

void tl_st_pad(tl_st *st, const int64_t *before, const int64_t *after) {
  tl_view *v = &st->views[st->nviews - 1];
  bool any = false;
  for (int d = 0; d < v->ndim; d++) any |= before[d] != 0 || after[d] != 0;
  if (!any) return;
  if (!v->masked) {
    for (int d = 0; d < v->ndim; d++) {
      v->mask_lo[d] = 0;
      v->mask_hi[d] = v->shape[d];
    }
    v->masked = true;
  }
  for (int d = 0; d < v->ndim; d++) {
    v->offset -= before[d] * v->strides[d];
    v->mask_lo[d] += before[d];
    v->mask_hi[d] += before[d];
    v->shape[d] += before[d] + after[d];
  }
  view_drop_full_mask(v);
  tl_st_simplify(st);
}

void tl_st_flip(tl_st *st, const bool *axes) {
  tl_view *v = &st->views[st->nviews - 1];
  for (int d = 0; d < v->ndim; d++) {
    if (!axes[d] || v->shape[d] <= 1) continue;
    v->offset += (v->shape[d] - 1) * v->strides[d];
    v->strides[d] = -v->strides[d];
    if (v->masked) {
      int64_t lo = v->mask_lo[d];
      v->mask_lo[d] = v->shape[d] - v->mask_hi[d];
      v->mask_hi[d] = v->shape[d] - lo;
    }
  }
  tl_st_simplify(st);
}

bool tl_st_index(const tl_st *st, const int64_t *idx, int64_t *offset) {
  int64_t cur[TL_MAX_DIMS];
  const tl_view *top = tl_st_top(st);
  memcpy(cur, idx, sizeof(int64_t) * (size_t)top->ndim);
  int64_t off = 0;
  for (int vi = st->nviews - 1; vi >= 0; vi--) {
    const tl_view *v = &st->views[vi];
    off = v->offset;
    for (int d = 0; d < v->ndim; d++) {
      if (v->masked && (cur[d] < v->mask_lo[d] || cur[d] >= v->mask_hi[d])) return false;
      off += cur[d] * v->strides[d];
    }
    if (vi > 0) { /* unflatten into the shape of the view below */
      const tl_view *b = &st->views[vi - 1];
      int64_t rest = off;
      for (int d = b->ndim - 1; d >= 0; d--) {
        cur[d] = b->shape[d] ? rest % b->shape[d] : 0;
        rest = b->shape[d] ? rest / b->shape[d] : 0;
      }
    }
  }
  *offset = off;
  return true;
}
