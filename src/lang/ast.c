/* ast.c — a walk over the syntax tree shared by the passes that search it. */
#include "lang/ast.h"

tl_node *tl_ast_find(tl_node *n, bool (*pred)(tl_node *n, void *arg), void *arg) {
  if (!n) return NULL;
  if (pred(n, arg)) return n;
  tl_node *hit = NULL;
  for (tl_node *c = n->args; c && !hit; c = c->next) hit = tl_ast_find(c, pred, arg);
  for (tl_node *c = n->stmts; c && !hit; c = c->next) hit = tl_ast_find(c, pred, arg);
  tl_node *kids[] = {n->lhs, n->rhs, n->cond, n->then, n->els, n->body, n->value};
  for (size_t i = 0; i < sizeof kids / sizeof kids[0] && !hit; i++) hit = tl_ast_find(kids[i], pred, arg);
  return hit;
}
