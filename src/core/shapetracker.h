/* shapetracker.h — views: how a logical index maps to a buffer offset.
 *
 * A view is shape, strides, offset and an optional mask (the box of valid
 * indices; outside it the value is 0, which is how pad works). A shape tracker is a
 * stack of views: views[nviews-1] is what the user sees, views[0] indexes the
 * contiguous buffer (or source) below. A reshape that no single view can express
 * pushes a new view; views merge back whenever the composition is one view again.
 * Every movement op only edits the tracker: nothing is copied.
 *
 * in: shapes and movement-op arguments (validated by the caller); out: a new
 * tracker, or false when the stack is full (the caller then nests a VIEW node). */
#ifndef TL_CORE_SHAPETRACKER_H
#define TL_CORE_SHAPETRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "tl.h"

#define TL_MAX_VIEWS 4

typedef struct tl_view {
  int ndim;
  bool masked;
  int64_t offset;
  int64_t shape[TL_MAX_DIMS];
  int64_t strides[TL_MAX_DIMS];
  int64_t mask_lo[TL_MAX_DIMS]; /* valid when mask_lo <= i < mask_hi, on every axis */
  int64_t mask_hi[TL_MAX_DIMS];
} tl_view;

typedef struct tl_st {
  int nviews;
  tl_view views[TL_MAX_VIEWS];
} tl_st;

/* The element count; INT64_MAX when the product overflows (a shape that does not fit). */
int64_t tl_shape_numel(int ndim, const int64_t *shape);
/* Every size in [0, TL_MAX_NUMEL] and the product of the non-zero sizes at most
 * TL_MAX_NUMEL: then element counts, strides, offsets and byte sizes of views over
 * the shape cannot overflow. A shape with a size 0 must fit too, since its strides
 * are still products of the other sizes. */
bool tl_shape_fits(int ndim, const int64_t *shape);
void tl_shape_strides(int ndim, const int64_t *shape, int64_t *strides); /* row-major */

tl_view tl_view_contiguous(int ndim, const int64_t *shape);
tl_st tl_st_contiguous(int ndim, const int64_t *shape);
const tl_view *tl_st_top(const tl_st *st);
int tl_st_ndim(const tl_st *st);
const int64_t *tl_st_shape(const tl_st *st);
/* The bytes of st that its views use: a node keeps only those (one view: a quarter
 * of the struct, small enough for malloc's fast path). tl_st_load copies them into a
 * whole tracker, the unused views zeroed; never copy a kept one by assignment. */
size_t tl_st_bytes(const tl_st *st);
void tl_st_load(tl_st *dst, const tl_st *kept);
bool tl_st_equal(const tl_st *a, const tl_st *b);
uint64_t tl_st_hash(const tl_st *st);
/* one unmasked row-major view at offset 0 over a buffer of the same numel */
bool tl_st_is_contiguous(const tl_st *st);

/* Movement ops. Arguments must already be valid for the shape (the tensor layer
 * checks and reports errors); the functions return false only when the view stack
 * would overflow. */
bool tl_st_reshape(tl_st *st, int ndim, const int64_t *shape);
void tl_st_permute(tl_st *st, const int *perm);
void tl_st_expand(tl_st *st, const int64_t *shape); /* size-1 axes grow, same rank */
void tl_st_shrink(tl_st *st, const int64_t *begin, const int64_t *end);
void tl_st_pad(tl_st *st, const int64_t *before, const int64_t *after);
void tl_st_flip(tl_st *st, const bool *axes);
/* Reshape of one view without a new view: false if not expressible. */
bool tl_view_reshape(const tl_view *v, int ndim, const int64_t *shape, tl_view *out);
/* Drops views that compose into one (the merge step); called by every op. */
void tl_st_simplify(tl_st *st);

/* Numeric index: the buffer offset of logical index idx, and whether it is valid. */
bool tl_st_index(const tl_st *st, const int64_t *idx, int64_t *offset);

#endif
