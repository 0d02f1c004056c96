/* build.c — tensor-graph builders that know shapes (see build.h). */
#include "graph/build.h"

#include <string.h>

#include "core/shapetracker.h"

static void apply_move(tl_st *st, int kind, const int64_t *a, const int64_t *b, const int *perm,
                       const bool *flags, int ndim, bool *ok) {
  switch (kind) {
  case TL_MOVE_RESHAPE: *ok = tl_st_reshape(st, ndim, a); break;
  case TL_MOVE_PERMUTE: tl_st_permute(st, perm); break;
  case TL_MOVE_EXPAND: tl_st_expand(st, a); break;
  case TL_MOVE_SHRINK: tl_st_shrink(st, a, b); break;
  case TL_MOVE_PAD: tl_st_pad(st, a, b); break;
  case TL_MOVE_FLIP: tl_st_flip(st, flags); break;
  }
}

/* one movement: its kind and arguments, as tl_build_view takes them */
typedef struct {
  int kind;
  const int64_t *a, *b;
  const int *perm;
  const bool *flags;
  int ndim;
} move;

static bool apply_moves(tl_st *st, int n, const move *m) {
  bool ok = true;
  for (int i = 0; ok && i < n; i++) apply_move(st, m[i].kind, m[i].a, m[i].b, m[i].perm, m[i].flags, m[i].ndim, &ok);
  return ok;
}

/* Builds VIEW(base, tracker) for the moves in order, as one node: composes onto an
 * existing view when the stack has room, nests a new VIEW otherwise; an identity
 * view is no view. */
static tl_uop *build_moves(tl_graph *g, tl_uop *u, int n, const move *m) {
  if (!u) return NULL;
  tl_uop *base = u;
  tl_st st;
  bool ok = false;
  if (u->op == TL_OP_VIEW) {
    tl_st_load(&st, u->arg.p);
    base = u->src[0];
    ok = apply_moves(&st, n, m);
  }
  if (!ok) {
    base = u;
    st = tl_st_contiguous(u->ndim, u->shape);
    apply_moves(&st, n, m);
  }
  int out_ndim = tl_st_ndim(&st);
  const int64_t *shape = tl_st_shape(&st);
  if (tl_st_is_contiguous(&st) && out_ndim == base->ndim &&
      !memcmp(shape, base->shape, sizeof(int64_t) * (size_t)out_ndim))
    return tl_graph_keep(g, base);
  tl_arg arg = {.p = &st};
  return tl_uop_make(g, TL_OP_VIEW, base->dtype, 1, &base, arg, 0, out_ndim, shape);
}

tl_uop *tl_build_view(tl_graph *g, tl_uop *u, int kind, const int64_t *a, const int64_t *b, const int *perm,
                      const bool *flags, int ndim) {
  return build_moves(g, u, 1, &(move){kind, a, b, perm, flags, ndim});
}

/* a reshape adding the leading unit axes, then the expand, as one node (a scalar
 * broadcast in every binary op with a constant made two) */
tl_uop *tl_build_broadcast_to(tl_graph *g, tl_uop *u, int ndim, const int64_t *shape) {
  if (!u) return NULL;
  if (u->ndim == ndim && (ndim == 0 || !memcmp(u->shape, shape, sizeof(int64_t) * (size_t)ndim)))
    return tl_graph_keep(g, u);
  if (u->ndim == 0 && u->op != TL_OP_VIEW) { /* a scalar: every stride 0, as the moves give */
    tl_st st;
    st.nviews = 1;
    memset(&st.views[0], 0, sizeof st.views[0]);
    st.views[0].ndim = ndim;
    memcpy(st.views[0].shape, shape, sizeof(int64_t) * (size_t)ndim);
    return tl_uop_make(g, TL_OP_VIEW, u->dtype, 1, &u, (tl_arg){.p = &st}, 0, ndim, shape);
  }
  int64_t ones[TL_MAX_DIMS];
  int lead = ndim - u->ndim;
  for (int i = 0; i < ndim; i++) ones[i] = i < lead ? 1 : u->shape[i - lead];
  move m[2] = {{TL_MOVE_RESHAPE, ones, NULL, NULL, NULL, ndim}, {TL_MOVE_EXPAND, shape, NULL, NULL, NULL, ndim}};
  return build_moves(g, u, 2, m);
}

tl_uop *tl_build_reduce(tl_graph *g, tl_uop *u, int op, uint64_t axes) {
  if (!u) return NULL;
  tl_dtype half = (tl_dtype)u->dtype;
  if (tl_dtype_is_half(half)) { /* accumulates in f32, rounded once at the end (rewrite.c) */
    tl_uop *r = tl_build_reduce(g, tl_build_cast(g, u, TL_F32), op, axes);
    return r ? tl_build_cast(g, r, half) : NULL;
  }
  int64_t shape[TL_MAX_DIMS];
  for (int i = 0; i < u->ndim; i++) shape[i] = (axes >> i & 1) ? 1 : u->shape[i];
  tl_arg arg = {.u = axes};
  return tl_uop_make(g, op, (tl_dtype)u->dtype, 1, &u, arg, 0, u->ndim, shape);
}

/* ---- matmul: (..., M, K) x (..., K, N) as a broadcast product summed over K ------------- */
/* A right operand read with stride 1 along K but not along N (a transposed weight,
 * or b^T in a gradient) is copied first: the sum then runs with its reduce loop
 * outside N, four rows at a time (lower.c), instead of as one dot product per
 * element; the copy is K x N, the work M x K x N. */
static bool is_transposed(const tl_uop *b) {
  if (!b || b->op != TL_OP_VIEW || b->ndim < 2) return false;
  const tl_st *st = b->arg.p;
  const tl_view *v = &st->views[st->nviews - 1];
  if (st->nviews != 1 || v->masked) return false;
  for (int d = 0; d + 2 < b->ndim; d++)
    if (b->shape[d] > 1 && v->strides[d] == 0) return false; /* a broadcast batch: a copy would grow it */
  return b->shape[b->ndim - 1] > 1 && v->strides[b->ndim - 1] != 1 && v->strides[b->ndim - 2] == 1;
}

tl_uop *tl_build_matmul(tl_graph *g, tl_uop *a, tl_uop *b) {
  if (!a || !b || a->ndim == 0 || b->ndim == 0) return NULL;
  int64_t s[TL_MAX_DIMS];
  bool a_vec = a->ndim == 1, b_vec = b->ndim == 1;
  if (a_vec) {
    s[0] = 1;
    s[1] = a->shape[0];
    a = tl_build_view(g, a, TL_MOVE_RESHAPE, s, NULL, NULL, NULL, 2);
  }
  if (b_vec) {
    s[0] = b->shape[0];
    s[1] = 1;
    b = tl_build_view(g, b, TL_MOVE_RESHAPE, s, NULL, NULL, NULL, 2);
  }
  if (!a || !b) return NULL;
  int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1];
  int nb = (a->ndim > b->ndim ? a->ndim : b->ndim) - 2; /* batch axes */
  int64_t batch[TL_MAX_DIMS];
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - (a->ndim - 2)), ib = i - (nb - (b->ndim - 2));
    int64_t p = ia >= 0 ? a->shape[ia] : 1, q = ib >= 0 ? b->shape[ib] : 1;
    batch[i] = p == 1 ? q : p;
  }
  tl_dtype dt = tl_dtype_promote((tl_dtype)a->dtype, (tl_dtype)b->dtype);
  if (dt == TL_BOOL) dt = TL_I32;
  tl_dtype out_dt = dt;
  if (tl_dtype_is_half(dt)) dt = TL_F32; /* products and sums in f32, rounded once */
  a = tl_build_cast(g, a, dt);
  b = tl_build_cast(g, b, dt);
  /* the loop kernel of an integer product reads a transposed b along its rows; a float
   * one runs as a GEMM, whose packing reads any strides: a copy would only cost */
  if (!a || !b) return NULL;
  if (M > 1 && !tl_dtype_is_float(dt) && is_transposed(b)) b = tl_build_unary(g, TL_OP_CONTIGUOUS, b);
  /* a: (..., M, 1, K); b^T: (..., 1, N, K); product (..., M, N, K) */
  int perm[TL_MAX_DIMS];
  for (int i = 0; i < b->ndim; i++) perm[i] = i;
  perm[b->ndim - 2] = b->ndim - 1;
  perm[b->ndim - 1] = b->ndim - 2;
  b = tl_build_view(g, b, TL_MOVE_PERMUTE, NULL, NULL, perm, NULL, b->ndim);
  if (!a || !b) return NULL;
  int64_t sa[TL_MAX_DIMS], sb[TL_MAX_DIMS], full[TL_MAX_DIMS];
  int nd = nb + 3;
  for (int i = 0; i < nb; i++) {
    int ia = i - (nb - (a->ndim - 2)), ib = i - (nb - (b->ndim - 2));
    sa[i] = ia >= 0 ? a->shape[ia] : 1;
    sb[i] = ib >= 0 ? b->shape[ib] : 1;
    full[i] = batch[i];
  }
  sa[nb] = M; sa[nb + 1] = 1; sa[nb + 2] = K;
  sb[nb] = 1; sb[nb + 1] = N; sb[nb + 2] = K;
  full[nb] = M; full[nb + 1] = N; full[nb + 2] = K;
  a = tl_build_broadcast_to(g, tl_build_view(g, a, TL_MOVE_RESHAPE, sa, NULL, NULL, NULL, nd), nd, full);
  b = tl_build_broadcast_to(g, tl_build_view(g, b, TL_MOVE_RESHAPE, sb, NULL, NULL, NULL, nd), nd, full);
  tl_uop *r = tl_build_reduce(g, tl_build_binary(g, TL_OP_MUL, a, b), TL_OP_RSUM, (uint64_t)1 << (nd - 1));
  /* drop K, then the axes added for 1-D operands */
  int64_t out[TL_MAX_DIMS];
  int no = 0;
  for (int i = 0; i < nb; i++) out[no++] = batch[i];
  if (!a_vec) out[no++] = M;
  if (!b_vec) out[no++] = N;
  return tl_build_cast(g, tl_build_view(g, r, TL_MOVE_RESHAPE, out, NULL, NULL, NULL, no), out_dt);
}

/* ---- rows picked by an integer tensor ------------------------------------------------
 * One GATHER node, O(N*D): in a kernel the row index is a loaded value that becomes
 * part of the table's load index (lower.c). Its gradient is a SCATTER_ADD of the same
 * indices (grad_rules.c), also O(N*D) plus the zero fill of the [V, D] result. */
tl_uop *tl_build_gather(tl_graph *g, tl_uop *table, tl_uop *idx) {
  if (!table || !idx) return NULL;
  int64_t shape[TL_MAX_DIMS];
  memcpy(shape, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
  shape[idx->ndim] = table->shape[1];
  tl_uop *src[2] = {table, idx};
  tl_arg none = {0};
  return tl_uop_make(g, TL_OP_GATHER, (tl_dtype)table->dtype, 2, src, none, 0, idx->ndim + 1, shape);
}

tl_uop *tl_build_scatter_add(tl_graph *g, tl_uop *values, tl_uop *idx, int64_t rows) {
  if (!values || !idx) return NULL;
  if (tl_dtype_is_half((tl_dtype)values->dtype)) { /* sums in f32 (rewrite.c) */
    tl_uop *r = tl_build_scatter_add(g, tl_build_cast(g, values, TL_F32), idx, rows);
    return r ? tl_build_cast(g, r, (tl_dtype)values->dtype) : NULL;
  }
  tl_uop *src[2] = {values, idx};
  tl_arg none = {0};
  int64_t shape[2] = {rows, values->shape[values->ndim - 1]};
  return tl_uop_make(g, TL_OP_SCATTER_ADD, (tl_dtype)values->dtype, 2, src, none, 0, 2, shape);
}

/* ---- convolution: one CONV2D node per direction (uop.h), run by the prelude's
 * implicit-GEMM routine (codegen/kernel_prelude_conv.h) ---------------------------------- */
int64_t tl_conv_params_pack(tl_conv_params p) {
  return (int64_t)((uint64_t)p.sh | (uint64_t)p.sw << 16 | (uint64_t)p.ph << 32 | (uint64_t)p.pw << 48);
}

tl_conv_params tl_conv_params_unpack(int64_t word) {
  uint64_t w = (uint64_t)word;
  return (tl_conv_params){(int64_t)(w & 0xffff), (int64_t)(w >> 16 & 0xffff), (int64_t)(w >> 32 & 0xffff),
                          (int64_t)(w >> 48 & 0xffff)};
}

tl_uop *tl_build_conv2d(tl_graph *g, int mode, tl_uop *a, tl_uop *b, tl_conv_params p, const int64_t shape[4]) {
  if (!a || !b) return NULL;
  tl_uop *src[2] = {a, b};
  tl_arg arg = {.i = tl_conv_params_pack(p)};
  return tl_uop_make(g, TL_OP_CONV2D, (tl_dtype)a->dtype, 2, src, arg, mode, 4, shape);
}
