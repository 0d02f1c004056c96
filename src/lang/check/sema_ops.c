/* sema_ops.c — the checker's side of torch's indexing, sorting and logical-reduction
 * tensor methods (docs/language.md §5): t.argsort(dim, descending), t.gather(dim, idx),
 * t.scatter(dim, idx, src), t.scatter_add(dim, idx, src), t.logsumexp(dim, keepdim), t.roll(shift, dim),
 * t.repeat([..]), t.any(dim), t.all(dim); arguments in brackets may be left out.
 * node->ival is B_OPS and node->len a TL_OPS_*, which gen_ops.c reads; rt_ops_index.c
 * runs them over the C API (tl_gather...). */
#include <string.h>

#include "lang/check/sema_impl.h"

static const struct {
  const char *name;
  int lo, hi; /* argument counts */
} rows[] = {
    [TL_OPS_ARGSORT] = {"argsort", 0, 2}, [TL_OPS_GATHER] = {"gather", 2, 2},  [TL_OPS_SCATTER] = {"scatter", 3, 3},
    [TL_OPS_LOGSUMEXP] = {"logsumexp", 0, 2}, [TL_OPS_ROLL] = {"roll", 1, 2}, [TL_OPS_REPEAT] = {"repeat", 1, 8},
    [TL_OPS_ANY] = {"any", 0, 1},         [TL_OPS_ALL] = {"all", 0, 1}, [TL_OPS_SCATTER_ADD] = {"scatter_add", 3, 3},
};

static void expect_bool(sema *s, tl_node *a, const char *what) {
  tl_ty *t = tl_sema_expr(s, a, TY_BOOL_T);
  if (!tl_sema_ty_fits(TY_BOOL_T, t)) tl_sema_mismatch(s, a, what, TY_BOOL_T, t);
}

/* a tensor argument; an index must hold integers (i64 or i32) when its dtype is known */
static tl_ty *expect_tensor(sema *s, tl_node *a, const char *method, const char *what, bool index) {
  tl_ty *t = tl_sema_expr(s, a, NULL);
  char b[64];
  if (t->kind == TY_ERROR) return t;
  if (t->kind != TY_TENSOR) {
    tl_sema_error(s, a, "the %s of `%s` is a tensor, not %s", what, method, tl_ty_name(t, b, sizeof b));
    return TY_ERR;
  }
  if (index && t->dtype >= 0 && t->dtype != TL_I64 && t->dtype != TL_I32) {
    tl_sema_error(s, a, "the index of `%s` must be an integer tensor, not %s", method, tl_ty_name(t, b, sizeof b));
    tl_diag_hint(s->diag, "make it one with `.to_i64()` or `.long()`");
    return TY_ERR;
  }
  return t;
}

/* repeat(2, 3) is repeat([2, 3]): the counts become one array argument */
static void counts_as_array(sema *s, tl_node *n) {
  tl_node *arr = tl_arena_alloc(s->arena, sizeof *arr);
  if (!arr) return;
  *arr = (tl_node){.kind = TL_N_ARRAY, .line = n->args->line, .col = n->args->col, .args = n->args};
  n->args = arr;
}

static tl_ty *check_row(sema *s, tl_node *n, int row, tl_ty *t) {
  const char *m = rows[row].name;
  tl_node *a = n->args;
  int got = tl_ast_count(a);
  n->ival = B_OPS;
  n->len = (size_t)row;
  if (got < rows[row].lo || got > rows[row].hi) {
    if (rows[row].lo == rows[row].hi)
      tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", m, rows[row].lo, rows[row].lo == 1 ? "" : "s", got);
    else tl_sema_error(s, n, "`%s` takes %d to %d arguments, not %d", m, rows[row].lo, rows[row].hi, got);
    tl_sema_check_rest(s, a);
    return TY_ERR;
  }
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", m);
    return TY_ERR;
  }
  int reduced = t->rank > 0 ? t->rank - 1 : -1;
  switch (row) {
  case TL_OPS_ARGSORT: /* (dim = -1, descending = false) -> i64 */
    if (a) tl_sema_expect_i64(s, a, "dim");
    if (a && a->next) expect_bool(s, a->next, "descending");
    return tl_sema_tensor(s, TL_I64, t->rank);
  case TL_OPS_GATHER:
    tl_sema_expect_i64(s, a, "dim");
    return expect_tensor(s, a->next, m, "index", true)->kind == TY_ERROR ? TY_ERR : tl_sema_tensor(s, t->dtype, t->rank);
  case TL_OPS_SCATTER: case TL_OPS_SCATTER_ADD:
    tl_sema_expect_i64(s, a, "dim");
    if (expect_tensor(s, a->next, m, "index", true)->kind == TY_ERROR) return TY_ERR;
    return expect_tensor(s, a->next->next, m, "source", false)->kind == TY_ERROR ? TY_ERR : t;
  case TL_OPS_LOGSUMEXP: { /* (dim, keepdim = false); no dim: every element; integers in f32 */
    if (a) tl_sema_expect_i64(s, a, "dim");
    bool keep = a && a->next;
    if (keep) expect_bool(s, a->next, "keepdim");
    int dt = t->dtype == TL_F64 ? TL_F64 : t->dtype < 0 ? -1 : TL_F32;
    return tl_sema_tensor(s, dt, !a ? 0 : keep && a->next->kind == TL_N_BOOL && a->next->ival ? t->rank
                                          : keep && a->next->kind != TL_N_BOOL ? -1 : reduced);
  }
  case TL_OPS_ROLL:
    tl_sema_expect_i64(s, a, "shift");
    if (a->next) tl_sema_expect_i64(s, a->next, "dim");
    return t;
  case TL_OPS_REPEAT: {
    if (got > 1) counts_as_array(s, n);
    int k = tl_sema_check_shape(s, n->args);
    return tl_sema_tensor(s, t->dtype, k >= 0 && t->rank >= 0 ? (k > t->rank ? k : t->rank) : -1);
  }
  case TL_OPS_ANY: case TL_OPS_ALL: /* (dim) -> bool */
    if (a) tl_sema_expect_i64(s, a, "dim");
    return tl_sema_tensor(s, TL_BOOL, a ? reduced : 0);
  default: return TY_ERR;
  }
}

tl_ty *tl_sema_ops_method(sema *s, tl_node *n, tl_ty *t) {
  for (int i = 0; i < (int)(sizeof rows / sizeof rows[0]); i++)
    if (!strcmp(n->name, rows[i].name)) return check_row(s, n, i, t);
  return NULL;
}
