/* form.c — which loop form a kernel takes (see form.h): the tests on a sum's shape and
 * strides that pick a GEMM or the interchanged loop, run by the scheduler. */
#include "sched/form.h"

#include "core/shapetracker.h"

/* M N K below this: the plain loops cost less than a call of the GEMM */
enum { GEMM_MIN_WORK = 4096 };

/* ---- GEMM ----------------------------------------------------------------------------
 * A float sum over one axis of the product of two plain strided views, where each
 * output axis but the batch ones is indexed by one operand only, is C = A B (batched):
 * the prelude's packed, register-tiled routine runs it (docs/decisions.md). The output
 * axis with stride 1 in C is N; the operand that varies along it is B, the other A;
 * M is the last other axis only A varies along; the remaining output axes are batch
 * axes (either operand may broadcast along them). */
static const int64_t *view_strides(const tl_uop *v) { return ((const tl_st *)v->arg.p)->views[0].strides; }

static bool plain_view(const tl_uop *v) {
  if (v->op != TL_OP_VIEW) return false;
  const tl_st *st = v->arg.p;
  return st->nviews == 1 && !st->views[0].masked;
}

bool tl_form_gemm_roles(const tl_uop *root, tl_gemm_roles *r) {
  if (root->op != TL_OP_RSUM || (root->dtype != TL_F32 && root->dtype != TL_F64) || tl_uop_numel(root) == 0)
    return false;
  const tl_uop *p = root->src[0];
  if (p->op != TL_OP_MUL || !plain_view(p->src[0]) || !plain_view(p->src[1])) return false;
  r->kd = r->nd = r->md = -1;
  for (int d = 0; d < root->ndim; d++) {
    bool reduced = root->arg.u >> d & 1;
    if (reduced && p->shape[d] == 0) return false;
    if (reduced && p->shape[d] > 1) {
      if (r->kd >= 0) return false; /* one reduced axis */
      r->kd = d;
    }
    if (!reduced && root->shape[d] > 1) r->nd = d;
  }
  if (r->kd < 0 || r->nd < 0) return false;
  const int64_t *sx = view_strides(p->src[0]), *sy = view_strides(p->src[1]);
  int nd = r->nd;
  if (sx[nd] && !sy[nd]) r->a = p->src[1], r->b = p->src[0];
  else if (sy[nd] && !sx[nd]) r->a = p->src[0], r->b = p->src[1];
  else return false;
  const int64_t *sa = view_strides(r->a), *sb = view_strides(r->b);
  for (int d = nd - 1; d >= 0 && r->md < 0; d--)
    if (!(root->arg.u >> d & 1) && root->shape[d] > 1 && sa[d] && !sb[d]) r->md = d;
  int64_t m = r->md >= 0 ? root->shape[r->md] : 1, n = root->shape[nd], k = p->shape[r->kd];
  /* one row times a matrix read along its rows runs as the GEMM's row kernel; one
   * read along its columns (a matrix-vector product) is a dot product per output,
   * which the plain sum does at memory speed */
  if (m == 1 && sb[nd] != 1) return false;
  return m * n * k >= GEMM_MIN_WORK;
}

/* the non-1 sizes of two shapes agree, in order */
static bool same_sizes(const tl_uop *a, const tl_uop *b) {
  int i = 0, j = 0;
  for (;; i++, j++) {
    while (i < a->ndim && a->shape[i] == 1) i++;
    while (j < b->ndim && b->shape[j] == 1) j++;
    if (i == a->ndim || j == b->ndim) return i == a->ndim && j == b->ndim;
    if (a->shape[i] != b->shape[j]) return false;
  }
}

bool tl_form_epilogue_view(const tl_uop *root, const tl_uop *view) {
  tl_gemm_roles r;
  if (!tl_op_is_elementwise(root->op) || root->op == TL_OP_CONTIGUOUS || view->op != TL_OP_VIEW) return false;
  const tl_uop *sum = view->src[0];
  return sum->dtype == root->dtype && tl_st_is_contiguous(view->arg.p) && same_sizes(sum, view) &&
         tl_form_gemm_roles(sum, &r);
}

/* the nodes under u met so far by one walk, and what each gave */
enum { EPILOGUE_NODES = 64 };
typedef struct {
  int n;
  bool full; /* more nodes than fit: the answer is no */
  const tl_uop *node[EPILOGUE_NODES];
  bool reads[EPILOGUE_NODES];
} epilogue_walk;

/* whether u was met before (*at: its slot), or a new slot for it (*at < 0: none) */
static bool walk_met(epilogue_walk *w, const tl_uop *u, int *at) {
  for (int i = 0; i < w->n; i++)
    if (w->node[i] == u) return *at = i, true;
  *at = w->n < EPILOGUE_NODES ? w->n++ : -1;
  if (*at < 0) w->full = true;
  else w->node[*at] = u, w->reads[*at] = false;
  return false;
}

/* the GEMM sum some elementwise path from u reads through an epilogue view, or NULL */
static const tl_uop *epilogue_sum(epilogue_walk *w, const tl_uop *root, const tl_uop *u) {
  int at;
  if (walk_met(w, u, &at) || at < 0) return NULL;
  if (u->op == TL_OP_VIEW) return tl_form_epilogue_view(root, u) ? u->src[0] : NULL;
  if (!tl_op_is_elementwise(u->op) || u->op == TL_OP_CONTIGUOUS) return NULL;
  for (int i = 0; i < u->nsrc; i++) {
    const tl_uop *sum = epilogue_sum(w, root, u->src[i]);
    if (sum) return sum;
  }
  return NULL;
}

/* whether u reads sum; *ok turns false where a node other than an elementwise one or
 * the sum's one view reads it (a softmax's max over the row: the GEMM could not run
 * it as an epilogue) */
static bool reads_gemm_sum(epilogue_walk *w, const tl_uop *u, const tl_uop *sum, bool *ok) {
  int at;
  if (u == sum) return true;
  if (u->op == TL_OP_BUFFER || u->op == TL_OP_CONST || !*ok) return false;
  if (walk_met(w, u, &at)) return w->reads[at];
  if (at < 0) return *ok = false;
  bool reads = false;
  for (int i = 0; i < u->nsrc; i++) reads |= reads_gemm_sum(w, u->src[i], sum, ok);
  bool through = u->op == TL_OP_VIEW ? u->src[0] == sum : tl_op_is_elementwise(u->op) && u->op != TL_OP_CONTIGUOUS;
  if (reads && !through) *ok = false;
  return w->reads[at] = reads;
}

bool tl_form_gemm_epilogue(const tl_uop *u) {
  if (!tl_op_is_elementwise(u->op) || u->op == TL_OP_CONTIGUOUS) return false;
  epilogue_walk w = {0};
  const tl_uop *sum = epilogue_sum(&w, u, u);
  bool ok = sum != NULL && !w.full;
  w.n = 0;
  if (ok) reads_gemm_sum(&w, u, sum, &ok);
  return ok && !w.full;
}

/* ---- the interchanged sum -------------------------------------------------------------
 * A sum whose inputs are contiguous along the last output axis but strided along the
 * reduced axes (a matmul) runs better as out[.., n] += src(.., n, k) with the k loop
 * outside the n loop: every inner loop then walks memory with stride 1 and
 * vectorizes. The sum of each element is taken in the same order as before. */
static bool strided_reduce_input(const tl_uop *u, const tl_uop *root, int last, const tl_form_ctx *fc, int depth) {
  if (depth > 16) return false;
  if (u->op == TL_OP_VIEW) {
    const tl_st *st = u->arg.p;
    const tl_uop *s = u->src[0];
    if (st->nviews != 1 || st->views[0].masked ||
        (s->op != TL_OP_BUFFER && s->op != TL_OP_CONTIGUOUS && tl_op_kind(s->op) != 'R' &&
         !(fc && fc->host && fc->computed(fc->sched, s))))
      return false;
    if (st->views[0].strides[last] != 1) return false;
    for (int d = 0; d < u->ndim; d++)
      if ((root->arg.u >> d & 1) && u->shape[d] > 1 && st->views[0].strides[d] == 1) return false;
    return true;
  }
  if (fc && fc->host && (u->op == TL_OP_BUFFER || fc->computed(fc->sched, u))) {
    /* read whole from a buffer, contiguous in its own shape (the sum's, unreduced) */
    for (int d = last + 1; d < u->ndim; d++)
      if (u->shape[d] > 1) return false;
    for (int d = 0; d < last && d < u->ndim; d++)
      if ((root->arg.u >> d & 1) && u->shape[d] > 1) return true;
    return false;
  }
  if (!tl_op_is_elementwise(u->op)) return false;
  for (int i = 0; i < u->nsrc; i++)
    if (strided_reduce_input(u->src[i], root, last, fc, depth + 1)) return true;
  return false;
}

/* a reduce under u, down to the buffers, and through views if `through_views` */
static bool has_reduce(const tl_uop *u, bool through_views, int depth) {
  if (tl_op_kind(u->op) == 'R' || depth > 32) return true;
  if (u->op == TL_OP_BUFFER || (u->op == TL_OP_VIEW && !through_views)) return false;
  for (int i = 0; i < u->nsrc; i++)
    if (has_reduce(u->src[i], through_views, depth + 1)) return true;
  return false;
}

/* a reduce read through a broadcast (softmax's max): fused into the row loops it runs
 * once a row; inside the interchanged loops it would run again for every element */
static bool broadcast_reduce(const tl_uop *u, int depth) {
  if (depth > 32) return true;
  if (u->op == TL_OP_BUFFER) return false;
  if (u->op == TL_OP_VIEW) {
    const tl_view *v = &((const tl_st *)u->arg.p)->views[0];
    for (int d = 0; d < v->ndim; d++)
      if (v->shape[d] > 1 && v->strides[d] == 0) return has_reduce(u->src[0], true, depth + 1);
  }
  for (int i = 0; i < u->nsrc; i++)
    if (broadcast_reduce(u->src[i], depth + 1)) return true;
  return false;
}

/* the terms of each column's sum: at most the lowering's f32 block (128), which one
 * f32 accumulator adds either way; a longer sum keeps the blocked loops' f64 partials */
enum { COLUMN_DEPTH_MAX = 128 };
static int64_t column_depth(const tl_uop *root) {
  int64_t n = 1;
  for (int d = 0; d < root->ndim; d++)
    if (root->arg.u >> d & 1) n *= root->src[0]->shape[d];
  return n;
}

/* a column sum's block of the last axis: whole vectors of either build (16 f32), at
 * least two blocks; 0 if the axis has no such split */
enum { COLUMN_BLOCK = 32, COLUMN_BLOCK_MIN = 16 };
static int64_t column_block(int64_t n) {
  for (int64_t w = COLUMN_BLOCK; w >= COLUMN_BLOCK_MIN; w /= 2)
    if (n % w == 0 && n / w >= 2) return w;
  return 0;
}

int tl_form_interchange_axis(const tl_uop *root, const tl_form_ctx *fc) {
  bool host = fc && fc->host;
  if (root->op != TL_OP_RSUM || !tl_dtype_is_float(root->dtype)) return -1;
  int last = -1, outer = 0;
  for (int d = 0; d < root->ndim; d++)
    if (root->shape[d] > 1) {
      if (last >= 0) outer++;
      last = d;
    }
  const tl_uop *src = root->src[0];
  if (last < 0 || has_reduce(src, false, 0)) return -1;
  if (!outer && (!host || !column_block(root->shape[last]) || column_depth(root) > COLUMN_DEPTH_MAX ||
                 broadcast_reduce(src, 0)))
    return -1;
  return strided_reduce_input(src, root, last, fc, 0) ? last : -1;
}

int64_t tl_form_interchange_blocks(const tl_uop *root, int axis) {
  for (int d = 0; d < root->ndim; d++)
    if (d != axis && root->shape[d] > 1) return 1;
  return root->shape[axis] / column_block(root->shape[axis]);
}

