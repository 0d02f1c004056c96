/* sema_lib.c — checks the library types' files (sema_option.c, sema_vec.c,
 * sema_iter.c) share: in: a written type's arguments, a call's arguments; out: whether
 * their count is right, an error with a hint where it is not. */
#include "lang/sema_impl.h"

bool sema_type_arity(sema *s, const tl_type *t, int want, const char *hint) {
  int got = 0;
  for (const tl_type *e = t->elems; e; e = e->next) got++;
  if (got == want) return true;
  tl_diag_error(s->diag, t->line, t->col, "`%s` takes %d type argument%s, but %d %s given", t->name, want,
                want == 1 ? "" : "s", got, got == 1 ? "was" : "were");
  tl_diag_hint(s->diag, "%s", hint);
  return false;
}

bool sema_arity(sema *s, tl_node *n, const char *what, int want) {
  int got = tl_ast_count(n->args);
  if (got == want) return true;
  sema_error(s, n, "`%s` takes %d argument%s, but %d %s given", what, want, want == 1 ? "" : "s", got, got == 1 ? "was" : "were");
  sema_check_rest(s, n->args);
  return false;
}
