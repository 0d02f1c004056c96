/* sema_annotate.c — what the passes after the checker read, recorded on the checked
 * tree once every function is checked (types.h): the generator reads these flags and
 * never asks the checker. Each is the checker's own predicate on the final tree. */
#include "lang/check/sema_impl.h"

static bool annotate(tl_node *n, void *arg) {
  (void)arg;
  tl_node *x, *y;
  n->flex_read = tl_sema_is_flex_read(n);
  if ((n->kind == TL_N_METHOD || n->kind == TL_N_CALL) && tl_sema_grad_math(n, &x, &y)) n->grad |= TL_GRAD_MATH;
  return false; /* every node */
}

void tl_sema_annotate(sema *s) {
  for (tl_fninfo *f = s->out->fns; f; f = f->next)
    if (f->fn->body) tl_ast_find(f->fn->body, annotate, NULL);
  for (tl_struct_info *st = s->out->structs; st; st = st->next)
    st->has_eq = st->generic == 'V' && st->targs[0] && tl_sema_vec_eq_ok(st->targs[0]);
}
