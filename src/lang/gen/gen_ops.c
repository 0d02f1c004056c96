/* gen_ops.c — code for torch's indexing, sorting and logical-reduction tensor methods
 * (sema_ops.c checks them, rt_ops_index.c runs them): one run-time call each, the
 * arguments left out passed as their defaults with a flag where the default is "none". */
#include "lang/gen/gen_impl.h"

static const char *i64_arg(gen *g, tl_node *a) { return tl_gen_new_temp(g, TY_I64_T, tl_gen_expr(g, a).c); }

cv tl_gen_ops_call(gen *g, tl_node *n) {
  tl_node *a = n->args;
  const char *l = tl_gen_fmt(g, "%d, %d", n->line, n->col);
  cv t = tl_gen_expr(g, n->lhs);
  const char *init;
  switch (n->len) {
  case TL_OPS_ARGSORT:
    init = tl_gen_fmt(g, "tlrt_argsort(R, %s, %s, %s, %s)", t.c, a ? i64_arg(g, a) : "-1",
                      a && a->next ? tl_gen_expr(g, a->next).c : "false", l);
    break;
  case TL_OPS_GATHER: {
    const char *dim = i64_arg(g, a);
    init = tl_gen_fmt(g, "tlrt_gather_dim(R, %s, %s, %s, %s)", t.c, dim, tl_gen_expr(g, a->next).c, l);
    break;
  }
  case TL_OPS_SCATTER: case TL_OPS_SCATTER_ADD: {
    const char *dim = i64_arg(g, a), *idx = tl_gen_expr(g, a->next).c;
    init = tl_gen_fmt(g, "tlrt_scatter(R, %s, %s, %s, %s, %s, %s)", t.c, dim, idx, tl_gen_expr(g, a->next->next).c,
                      n->len == TL_OPS_SCATTER_ADD ? "true" : "false", l);
    break;
  }
  case TL_OPS_LOGSUMEXP: {
    const char *dim = a ? i64_arg(g, a) : "0";
    init = tl_gen_fmt(g, "tlrt_logsumexp(R, %s, %s, %s, %s, %s)", t.c, a ? "true" : "false", dim,
                      a && a->next ? tl_gen_expr(g, a->next).c : "false", l);
    break;
  }
  case TL_OPS_ROLL: {
    const char *shift = i64_arg(g, a);
    init = tl_gen_fmt(g, "tlrt_roll(R, %s, %s, %s, %s, %s)", t.c, shift, a->next ? "true" : "false",
                      a->next ? i64_arg(g, a->next) : "0", l);
    break;
  }
  case TL_OPS_REPEAT: init = tl_gen_fmt(g, "tlrt_repeat(R, %s, %s, %s)", t.c, tl_gen_shape_arg(g, a, n->ty), l); break;
  default: /* any, all */
    init = tl_gen_fmt(g, "tlrt_any_all(R, %s, %s, %s, %s, %s)", t.c, n->len == TL_OPS_ALL ? "true" : "false",
                      a ? "true" : "false", a ? i64_arg(g, a) : "0", l);
  }
  return tl_gen_temp_value(g, n->ty, init);
}
