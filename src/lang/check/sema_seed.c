/* sema_seed.c — statements of the seed language rewritten into TL's own: in: an
 * expression statement before it is checked; out: the statement TL runs instead.
 * `t.fill_(v)` (PyTorch's in-place fill, the seed's) on a tensor variable is
 * `t = t.zeros_like() + v;`: the same shape and dtype, every element v (float
 * tensors: an integer one would turn float).
 * `Param::checkpoint(f, x)` (the seed's activation checkpointing) is the call `f(x)`, and
 * `Param::checkpoint(m.forward, x)` the method call `m.forward(x)`: the same values and
 * gradients, and no memory saved (the whole graph is kept for backward). */
#include <string.h>

#include "lang/check/sema_impl.h"

static tl_node *node(sema *s, tl_node proto) {
  tl_node *n = tl_arena_alloc(s->arena, sizeof *n);
  if (n) *n = proto;
  return n;
}

int tl_sema_seed_stmt(sema *s, tl_node *st) {
  tl_node *m = st->lhs;
  if (!m || m->kind != TL_N_METHOD || strcmp(m->name, "fill_") || !m->args || m->args->next || m->lhs->kind != TL_N_IDENT)
    return 0;
  tl_var *v = tl_sema_lookup(s, m->lhs->name);
  if (!v || !v->ty || v->ty->kind != TY_TENSOR) return 0;
  if (v->ty->dtype != TL_F32 && v->ty->dtype != TL_F64) { /* an integer's fill value would turn it float */
    tl_sema_error(s, m, "`fill_` fills a float tensor; `%s` holds %s", v->name, v->ty->dtype < 0 ? "another dtype" : tl_dtype_name(v->ty->dtype));
    tl_diag_hint(s->diag, "assign a new tensor: `%s = Tensor::full(..)` (as i64: `.to_i64()`)", v->name);
    for (tl_node *a = m->args; a; a = a->next) tl_sema_expr(s, a, NULL);
    return 2;
  }
  tl_node *target = node(s, *m->lhs);
  tl_node *zeros = node(s, (tl_node){.kind = TL_N_METHOD, .line = m->line, .col = m->col, .name = "zeros_like", .lhs = m->lhs});
  tl_node *sum = node(s, (tl_node){.kind = TL_N_BINARY, .line = m->line, .col = m->col, .op = TL_TOK_PLUS, .lhs = zeros,
                                   .rhs = m->args});
  if (!target || !zeros || !sum) return 0;
  target->next = NULL;
  *st = (tl_node){.kind = TL_N_ASSIGN, .line = m->line, .col = m->col, .op = TL_TOK_ASSIGN, .lhs = target, .rhs = sum,
                  .next = st->next, .str = "fill_"};
  tl_sema_seed_assign(s, st);
  return 1;
}

/* an assignment made from `t.fill_(v)` (str names the method; the checker may visit it
 * again): a plain `let` variable is accepted, as for other methods that change it */
void tl_sema_seed_assign(sema *s, tl_node *st) {
  if (!st->str || st->lhs->kind != TL_N_IDENT) return;
  tl_var *v = tl_sema_lookup(s, st->lhs->name);
  if (v) tl_sema_may_change(s, st, v, st->str);
}

int tl_sema_seed_checkpoint(sema *s, tl_node *n) {
  if (n->kind != TL_N_CALL || n->lhs->kind != TL_N_PATH || strcmp(n->lhs->name, "Param::checkpoint") ||
      tl_sema_find_fn(s, "Param::checkpoint"))
    return 0;
  if (!tl_sema_arity(s, n, "Param::checkpoint", 2)) return -1;
  tl_node *f = n->args, *x = f->next;
  f->next = NULL;
  if (f->kind == TL_N_FIELD) /* a bound method, the seed's `self.b1.forward` */
    *n = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = f->name, .lhs = f->lhs, .args = x,
                   .next = n->next};
  else
    *n = (tl_node){.kind = TL_N_CALL, .line = n->line, .col = n->col, .lhs = f, .args = x, .next = n->next};
  return 1;
}
