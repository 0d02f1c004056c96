/* sema_lib.c — checks the library types' files (sema_option.c, sema_vec.c,
 * sema_iter.c) share: in: a written type's arguments, a call's arguments, a method's
 * receiver; out: whether their count is right, whether the receiver may be changed,
 * an error with a hint where not. */
#include "lang/check/sema_impl.h"

bool tl_sema_type_arity(sema *s, const tl_type *t, int want, const char *hint) {
  int got = 0;
  for (const tl_type *e = t->elems; e; e = e->next) got++;
  if (got == want) return true;
  tl_diag_error(s->diag, t->line, t->col, "`%s` takes %d type argument%s, but %d %s given", t->name, want,
                want == 1 ? "" : "s", got, got == 1 ? "was" : "were");
  tl_diag_hint(s->diag, "%s", hint);
  return false;
}

bool tl_sema_arity(sema *s, tl_node *n, const char *what, int want) {
  int got = tl_ast_count(n->args);
  if (got == want) return true;
  tl_sema_error(s, n, "`%s` takes %d argument%s, but %d %s given", what, want, want == 1 ? "" : "s", got, got == 1 ? "was" : "were");
  tl_sema_check_rest(s, n->args);
  return false;
}

void tl_sema_receiver_mut(sema *s, tl_node *n) {
  tl_node *r = n->lhs;
  while (r->kind == TL_N_FIELD || r->kind == TL_N_INDEX) r = r->lhs;
  if ((r->kind != TL_N_IDENT && r->kind != TL_N_SELF) || !r->var) {
    if (r->kind != TL_N_IDENT && r->kind != TL_N_SELF) tl_sema_error(s, n, "`%s` changes its receiver: call it on a variable", n->name);
    return;
  }
  if (tl_sema_closure_written(s, n, r->var)) return; /* sema_closure.c */
  if (!r->var->is_mut && r->var->kind != VAR_PARAM_REF) {
    tl_sema_error(s, n, "cannot borrow `%s` as mutable: `%s` changes it", r->var->name, n->name);
    tl_diag_hint(s->diag, "declare it mutable: `let mut %s`", r->var->name);
  }
}
