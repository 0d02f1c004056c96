/* test_shapetracker.c — views: every movement op and random compositions of them
 * against a reference that moves real index arrays around, plus view merging. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/shapetracker.h"
#include "test.h"

/* reference: the materialized array of source offsets (-1 where padding) */
typedef struct {
  int ndim;
  int64_t shape[TL_MAX_DIMS];
  int64_t *off;
} ref;

static int64_t numel(const ref *r) { return tl_shape_numel(r->ndim, r->shape); }

static void unravel(int64_t i, int ndim, const int64_t *shape, int64_t *idx) {
  for (int d = ndim - 1; d >= 0; d--) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
}

static int64_t ravel(int ndim, const int64_t *shape, const int64_t *idx) {
  int64_t i = 0;
  for (int d = 0; d < ndim; d++) i = i * shape[d] + idx[d];
  return i;
}

/* out[i] = in[f(i)], where f maps an output index to an input index or fails */
typedef bool (*index_map)(const int64_t *out_idx, int64_t *in_idx, const void *arg);

static ref remap(const ref *in, int ndim, const int64_t *shape, index_map f, const void *arg) {
  ref r = {ndim, {0}, NULL};
  for (int d = 0; d < ndim; d++) r.shape[d] = shape[d];
  int64_t n = numel(&r);
  r.off = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    int64_t oi[TL_MAX_DIMS], ii[TL_MAX_DIMS];
    unravel(i, ndim, shape, oi);
    r.off[i] = f(oi, ii, arg) ? in->off[ravel(in->ndim, in->shape, ii)] : -1;
  }
  return r;
}

typedef struct {
  const ref *in;
  const int *perm;
  const int64_t *a, *b;
  const bool *flip;
} move_arg;

static bool map_permute(const int64_t *o, int64_t *i, const void *p) {
  const move_arg *m = p;
  for (int d = 0; d < m->in->ndim; d++) i[m->perm[d]] = o[d];
  return true;
}
static bool map_expand(const int64_t *o, int64_t *i, const void *p) {
  const move_arg *m = p;
  for (int d = 0; d < m->in->ndim; d++) i[d] = m->in->shape[d] == 1 ? 0 : o[d];
  return true;
}
static bool map_shrink(const int64_t *o, int64_t *i, const void *p) {
  const move_arg *m = p;
  for (int d = 0; d < m->in->ndim; d++) i[d] = o[d] + m->a[d];
  return true;
}
static bool map_pad(const int64_t *o, int64_t *i, const void *p) {
  const move_arg *m = p;
  for (int d = 0; d < m->in->ndim; d++) {
    i[d] = o[d] - m->a[d];
    if (i[d] < 0 || i[d] >= m->in->shape[d]) return false;
  }
  return true;
}
static bool map_flip(const int64_t *o, int64_t *i, const void *p) {
  const move_arg *m = p;
  for (int d = 0; d < m->in->ndim; d++) i[d] = m->flip[d] ? m->in->shape[d] - 1 - o[d] : o[d];
  return true;
}

/* every index of the tracker agrees with the reference */
static bool agrees(const tl_st *st, const ref *r) {
  if (tl_st_ndim(st) != r->ndim) return false;
  for (int d = 0; d < r->ndim; d++)
    if (tl_st_shape(st)[d] != r->shape[d]) return false;
  for (int64_t i = 0; i < numel(r); i++) {
    int64_t idx[TL_MAX_DIMS], off;
    unravel(i, r->ndim, r->shape, idx);
    bool valid = tl_st_index(st, idx, &off);
    if (valid != (r->off[i] >= 0) || (valid && off != r->off[i])) return false;
  }
  return true;
}

static uint64_t rng_state;
static int pick(int n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (int)((rng_state >> 33) % (uint64_t)n);
}

/* one random movement op applied to both; returns the new reference */
static ref random_move(tl_st *st, ref *r, const char **what) {
  int nd = r->ndim;
  int64_t a[TL_MAX_DIMS], b[TL_MAX_DIMS], s[TL_MAX_DIMS];
  int perm[TL_MAX_DIMS];
  bool fl[TL_MAX_DIMS];
  move_arg m = {r, perm, a, b, fl};
  switch (pick(6)) {
  case 0: { /* reshape: split or merge through a factorization of numel */
    *what = "reshape";
    int64_t n = numel(r), rest = n;
    int k = 0;
    for (int64_t f = 2; f <= rest && k < 4; f++)
      if (rest % f == 0 && pick(2)) {
        s[k++] = f;
        rest /= f;
        f = 1;
      }
    s[k++] = rest;
    if (!tl_st_reshape(st, k, s)) return (ref){0, {0}, NULL};
    ref out = {k, {0}, malloc(sizeof(int64_t) * (size_t)(n ? n : 1))};
    for (int d = 0; d < k; d++) out.shape[d] = s[d];
    for (int64_t i = 0; i < n; i++) out.off[i] = r->off[i];
    return out;
  }
  case 1:
    *what = "permute";
    for (int d = 0; d < nd; d++) perm[d] = d;
    for (int d = nd - 1; d > 0; d--) {
      int j = pick(d + 1), t = perm[d];
      perm[d] = perm[j];
      perm[j] = t;
    }
    for (int d = 0; d < nd; d++) s[d] = r->shape[perm[d]];
    tl_st_permute(st, perm);
    return remap(r, nd, s, map_permute, &m);
  case 2:
    *what = "expand";
    for (int d = 0; d < nd; d++) s[d] = r->shape[d] == 1 ? 1 + pick(3) : r->shape[d];
    tl_st_expand(st, s);
    return remap(r, nd, s, map_expand, &m);
  case 3:
    *what = "shrink";
    for (int d = 0; d < nd; d++) {
      a[d] = pick((int)r->shape[d]);
      b[d] = a[d] + 1 + pick((int)(r->shape[d] - a[d]));
      s[d] = b[d] - a[d];
    }
    tl_st_shrink(st, a, b);
    return remap(r, nd, s, map_shrink, &m);
  case 4:
    *what = "pad";
    for (int d = 0; d < nd; d++) {
      a[d] = pick(3);
      b[d] = pick(3);
      s[d] = r->shape[d] + a[d] + b[d];
    }
    tl_st_pad(st, a, b);
    return remap(r, nd, s, map_pad, &m);
  default:
    *what = "flip";
    for (int d = 0; d < nd; d++) fl[d] = pick(2);
    tl_st_flip(st, fl);
    return remap(r, nd, r->shape, map_flip, &m);
  }
}

TEST(st_random_compositions_match_reference) {
  int failures = 0;
  for (uint64_t seed = 1; seed <= 600 && failures < 3; seed++) {
    rng_state = seed;
    int64_t shape[3] = {1 + pick(4), 1 + pick(4), 1 + pick(4)};
    int nd = 1 + pick(3);
    tl_st st = tl_st_contiguous(nd, shape);
    ref r = {nd, {0}, NULL};
    for (int d = 0; d < nd; d++) r.shape[d] = shape[d];
    r.off = malloc(sizeof(int64_t) * (size_t)numel(&r));
    for (int64_t i = 0; i < numel(&r); i++) r.off[i] = i;
    for (int step = 0; step < 6; step++) {
      const char *what = "";
      ref next = random_move(&st, &r, &what);
      free(r.off);
      r = next;
      if (!r.off) break; /* view stack full: the tensor layer nests a node instead */
      if (numel(&r) > 20000) break;
      if (!agrees(&st, &r)) {
        tl_test_fail(__FILE__, __LINE__, "seed %llu: tracker disagrees after step %d (%s)",
                     (unsigned long long)seed, step, what);
        failures++;
        break;
      }
    }
    free(r.off);
  }
}

TEST(st_contiguous_and_permute_index) {
  tl_st st = tl_st_contiguous(2, (int64_t[]){2, 3});
  int64_t off;
  CHECK(tl_st_index(&st, (int64_t[]){1, 2}, &off));
  CHECK_INT(off, 5);
  CHECK(tl_st_is_contiguous(&st));
  tl_st_permute(&st, (int[]){1, 0});
  CHECK(!tl_st_is_contiguous(&st));
  CHECK(tl_st_index(&st, (int64_t[]){2, 1}, &off));
  CHECK_INT(off, 5);
  CHECK_INT(st.views[0].strides[0], 1);
  CHECK_INT(st.views[0].strides[1], 3);
}

TEST(st_reshape_merges_into_one_view) {
  tl_st st = tl_st_contiguous(3, (int64_t[]){2, 3, 4});
  CHECK(tl_st_reshape(&st, 2, (int64_t[]){6, 4}));
  CHECK_INT(st.nviews, 1);
  CHECK(tl_st_is_contiguous(&st));
  /* splitting one permuted axis is still one view */
  tl_st_permute(&st, (int[]){1, 0}); /* (4, 6) strides (1, 4) */
  CHECK(tl_st_reshape(&st, 3, (int64_t[]){4, 2, 3}));
  CHECK_INT(st.nviews, 1);
  CHECK_INT(st.views[0].strides[1], 12);
  CHECK_INT(st.views[0].strides[2], 4);
}

TEST(st_reshape_of_transpose_needs_two_views_then_merges_back) {
  tl_st st = tl_st_contiguous(2, (int64_t[]){2, 3});
  tl_st_permute(&st, (int[]){1, 0});           /* (3, 2) strides (1, 3) */
  CHECK(tl_st_reshape(&st, 1, (int64_t[]){6})); /* no single view can do it */
  CHECK_INT(st.nviews, 2);
  int64_t off;
  int64_t want[6] = {0, 3, 1, 4, 2, 5};
  for (int64_t i = 0; i < 6; i++) {
    CHECK(tl_st_index(&st, &i, &off));
    CHECK_INT(off, want[i]);
  }
  CHECK(tl_st_reshape(&st, 2, (int64_t[]){3, 2})); /* back: the views merge */
  CHECK_INT(st.nviews, 1);
  CHECK_INT(st.views[0].strides[0], 1);
  CHECK_INT(st.views[0].strides[1], 3);
}

TEST(st_expand_is_stride_zero_and_merges) {
  tl_st st = tl_st_contiguous(2, (int64_t[]){3, 1});
  tl_st_expand(&st, (int64_t[]){3, 4});
  CHECK_INT(st.views[0].strides[1], 0);
  int64_t off;
  CHECK(tl_st_index(&st, (int64_t[]){2, 3}, &off));
  CHECK_INT(off, 2);
  CHECK(tl_st_reshape(&st, 3, (int64_t[]){3, 2, 2})); /* splitting a broadcast axis */
  CHECK_INT(st.nviews, 1);
  CHECK_INT(st.views[0].strides[1], 0);
  CHECK_INT(st.views[0].strides[2], 0);
}

/* A view node keeps only the views its tracker uses: one view is its count and one
 * tl_view; loading a kept one back gives the same tracker, the unused views zero.
 * Copied from a heap block of exactly that size (ASan would see a read past it). */
TEST(st_kept_bytes_are_the_views_in_use) {
  tl_st st = tl_st_contiguous(2, (int64_t[]){4, 6});
  CHECK_INT((int)tl_st_bytes(&st), (int)(offsetof(tl_st, views) + sizeof(tl_view)));
  tl_st_permute(&st, (int[]){1, 0});
  CHECK(tl_st_reshape(&st, 1, (int64_t[]){24})); /* a transpose flattened: a second view */
  CHECK_INT(st.nviews, 2);
  CHECK_INT((int)tl_st_bytes(&st), (int)(offsetof(tl_st, views) + 2 * sizeof(tl_view)));
  tl_st *kept = malloc(tl_st_bytes(&st));
  memcpy(kept, &st, tl_st_bytes(&st));
  tl_st back;
  memset(&back, 0xff, sizeof back);
  tl_st_load(&back, kept);
  CHECK(tl_st_equal(&back, &st));
  CHECK_INT(back.views[2].ndim, 0);
  CHECK_INT((int)back.views[3].strides[0], 0);
  int64_t a, b;
  for (int64_t i = 0; i < 24; i++) {
    CHECK(tl_st_index(&back, &i, &a) && tl_st_index(&st, &i, &b));
    CHECK_INT((int)a, (int)b);
  }
  free(kept);
}

TEST(st_shrink_pad_flip_validity) {
  tl_st st = tl_st_contiguous(1, (int64_t[]){5});
  tl_st_shrink(&st, (int64_t[]){1}, (int64_t[]){4}); /* elements 1..3 */
  CHECK_INT(st.views[0].offset, 1);
  tl_st_pad(&st, (int64_t[]){2}, (int64_t[]){1}); /* _ _ 1 2 3 _ */
  CHECK(st.views[0].masked);
  CHECK_INT(st.views[0].mask_lo[0], 2);
  CHECK_INT(st.views[0].mask_hi[0], 5);
  int64_t off, i;
  i = 1;
  CHECK(!tl_st_index(&st, &i, &off));
  i = 2;
  CHECK(tl_st_index(&st, &i, &off));
  CHECK_INT(off, 1);
  bool f[1] = {true};
  tl_st_flip(&st, f); /* _ 3 2 1 _ _ */
  i = 1;
  CHECK(tl_st_index(&st, &i, &off));
  CHECK_INT(off, 3);
  i = 4;
  CHECK(!tl_st_index(&st, &i, &off));
  /* shrinking back inside the valid box drops the mask */
  tl_st_shrink(&st, (int64_t[]){1}, (int64_t[]){4});
  CHECK(!st.views[0].masked);
  i = 0;
  CHECK(tl_st_index(&st, &i, &off));
  CHECK_INT(off, 3);
}

TEST(st_masked_reshape_keeps_mask_on_untouched_axes) {
  tl_st st = tl_st_contiguous(2, (int64_t[]){2, 3});
  tl_st_pad(&st, (int64_t[]){0, 1}, (int64_t[]){0, 1}); /* (2, 5), axis 1 masked */
  CHECK(tl_st_reshape(&st, 3, (int64_t[]){2, 1, 5}));   /* adding a size-1 axis */
  CHECK_INT(st.nviews, 1);
  CHECK_INT(st.views[0].mask_lo[2], 1);
  CHECK_INT(st.views[0].mask_hi[2], 4);
  CHECK(tl_st_reshape(&st, 1, (int64_t[]){10})); /* merging a masked axis: a new view */
  CHECK_INT(st.nviews, 2);
  int64_t off, i = 6;
  CHECK(tl_st_index(&st, &i, &off)); /* row 1, column 1 of the pad: element (1, 0) */
  CHECK_INT(off, 3);
  i = 5;
  CHECK(!tl_st_index(&st, &i, &off));
}
