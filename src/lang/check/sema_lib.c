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
  if (!tl_sema_may_change(s, n, r->var, n->name)) {
    tl_sema_error(s, n, "cannot borrow `%s` as mutable: `%s` changes it", r->var->name, n->name);
    if (r->kind == TL_N_SELF) tl_diag_hint(s->diag, "take the receiver as `&mut self`");
    else tl_diag_hint(s->diag, "declare it mutable: `let mut %s`", r->var->name);
  }
}

/* The seed language's rule: its Vec, HashMap and structs were references, so a method
 * changing one needed no `mut` on the variable. TL accepts that for a variable a plain
 * `let` declared (it owns its value: a change reaches nobody else) with a warning, and
 * takes the variable as mutable from there on. A parameter, `self` or a pattern's
 * binding keeps Rust's error: it may borrow another variable's value. */
bool tl_sema_may_change(sema *s, const tl_node *at, tl_var *v, const char *what) {
  if (v->is_mut || v->kind == VAR_PARAM_REF) return true;
  if (v->kind != VAR_LOCAL || !v->plain_let) return false;
  tl_diag_warning(s->diag, at->line, at->col, "`%s` changes `%s`, which is not declared `mut` (accepted, as the seed language does)", what, v->name);
  tl_diag_hint(s->diag, "declare it mutable: `let mut %s`", v->name);
  v->is_mut = true;
  return true;
}
