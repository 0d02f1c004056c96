/* ast.c — a walk over the syntax tree shared by the passes that search it. */
#include "lang/front/ast.h"

#include <stdlib.h>

/* the walk as recursion: only when the explicit stack below cannot grow */
static tl_node *find_recursive(tl_node *n, bool (*pred)(tl_node *n, void *arg), void *arg) {
  if (!n) return NULL;
  if (pred(n, arg)) return n;
  tl_node *hit = NULL;
  for (tl_node *c = n->args; c && !hit; c = c->next) hit = find_recursive(c, pred, arg);
  for (tl_node *c = n->stmts; c && !hit; c = c->next) hit = find_recursive(c, pred, arg);
  tl_node *kids[] = {n->lhs, n->rhs, n->cond, n->then, n->els, n->body, n->value};
  for (size_t i = 0; i < sizeof kids / sizeof kids[0] && !hit; i++) hit = find_recursive(kids[i], pred, arg);
  return hit;
}

/* The same order with an explicit stack: a chain `1 + 1 + ... + 1` of 100,000 terms is
 * a tree 100,000 deep. An entry marked `list` stands for a node and its siblings after it. */
typedef struct {
  tl_node *n;
  bool list;
} find_entry;

tl_node *tl_ast_find(tl_node *root, bool (*pred)(tl_node *n, void *arg), void *arg) {
  find_entry small[64], *st = small;
  size_t k = 0, cap = 64;
  tl_node *hit = NULL;
  st[k++] = (find_entry){root, false};
  while (k > 0) {
    find_entry e = st[--k];
    tl_node *n = e.n;
    if (!n) continue;
    if (cap - k < 10) { /* room for the next sibling and the node's nine kinds of child */
      find_entry *bigger = malloc(sizeof *bigger * cap * 2);
      if (!bigger) { /* out of memory: finish this node's subtree, then its siblings, by recursion */
        hit = find_recursive(n, pred, arg);
        for (tl_node *c = e.list ? n->next : NULL; c && !hit; c = c->next) hit = find_recursive(c, pred, arg);
        while (k > 0 && !hit) {
          e = st[--k];
          for (tl_node *c = e.n; c && !hit; c = e.list ? c->next : NULL) hit = find_recursive(c, pred, arg);
        }
        break;
      }
      for (size_t i = 0; i < k; i++) bigger[i] = st[i];
      if (st != small) free(st);
      st = bigger;
      cap *= 2;
    }
    if (e.list && n->next) st[k++] = (find_entry){n->next, true}; /* after n's subtree */
    if (pred(n, arg)) {
      hit = n;
      break;
    }
    tl_node *kids[] = {n->value, n->body, n->els, n->then, n->cond, n->rhs, n->lhs}; /* pushed last to first */
    for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++)
      if (kids[i]) st[k++] = (find_entry){kids[i], false};
    if (n->stmts) st[k++] = (find_entry){n->stmts, true};
    if (n->args) st[k++] = (find_entry){n->args, true};
  }
  if (st != small) free(st);
  return hit;
}

int tl_ast_count(const tl_node *list) {
  int k = 0;
  for (; list; list = list->next) k++;
  return k;
}
