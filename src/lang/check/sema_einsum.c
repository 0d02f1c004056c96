/* sema_einsum.c — the seed language's implicit tensor equation: `let C = A[i, j] *
 * B[j, k];` where i, j, k name nothing in scope (no variable, constant or function) is
 * the comprehension `[i, k | { A[i, j] * B[j, k] }]`, Einstein's convention: a name
 * indexing one tensor is an output axis (in the order of first use), a name shared by
 * several is summed. Every range follows from the tensors it indexes (sema_compr).
 * `let C[i] = ..` names its axes itself (parse.c's tensor_equation). */
#include <string.h>

#include "lang/check/sema_impl.h"

enum { MAX_NAMES = 8 };

typedef struct {
  sema *s;
  const char *names[MAX_NAMES];
  int uses[MAX_NAMES]; /* the tensors indexed with the name */
  int n;
} free_names;

static bool is_free(sema *s, const tl_node *e) {
  return e->kind == TL_N_IDENT && !tl_sema_lookup(s, e->name) && !tl_sema_find_fn(s, e->name) &&
         !tl_sema_const_exists(s, e->name);
}

/* an expression that binds no name of its own (a closure's parameter, a block's `let`,
 * a match arm's pattern would make a free-looking name bound there) */
static bool plain(const tl_node *n) {
  switch (n->kind) {
  case TL_N_INT: case TL_N_FLOAT: case TL_N_BOOL: case TL_N_IDENT: case TL_N_PATH: case TL_N_UNARY: case TL_N_BINARY:
  case TL_N_CAST: case TL_N_RANGE: case TL_N_CALL: case TL_N_METHOD: case TL_N_FIELD: case TL_N_INDEX: case TL_N_SELF:
    return true;
  default: return false;
  }
}

/* true stops the walk: not an equation */
static bool collect(tl_node *n, void *arg) {
  free_names *f = arg;
  if (!plain(n)) return true;
  if (n->kind != TL_N_INDEX) return false;
  for (tl_node *a = n->args; a; a = a->next) {
    if (!is_free(f->s, a)) continue;
    int k = 0;
    while (k < f->n && strcmp(f->names[k], a->name)) k++;
    if (k == MAX_NAMES) return true; /* more axes than any tensor has: leave it to the errors */
    if (k == f->n) f->names[f->n++] = a->name, f->uses[k] = 0;
    f->uses[k]++;
  }
  return false;
}

bool tl_sema_einsum_let(sema *s, tl_node *let) {
  tl_node *rhs = let->rhs;
  if (!rhs || rhs->kind == TL_N_COMPR || s->compr_depth) return false;
  free_names f = {.s = s};
  if (tl_ast_find(rhs, collect, &f) || f.n == 0) return false;
  tl_node *value = tl_arena_alloc(s->arena, sizeof *value), *body = tl_arena_alloc(s->arena, sizeof *body);
  if (!value || !body) return false;
  *value = *rhs;
  value->next = NULL;
  *body = (tl_node){.kind = TL_N_BLOCK, .line = rhs->line, .col = rhs->col, .value = value};
  tl_node head = {0}, *cur = &head;
  for (int k = 0; k < f.n; k++) {
    if (f.uses[k] > 1) continue;
    tl_node *axis = tl_arena_alloc(s->arena, sizeof *axis);
    if (!axis) return false;
    *axis = (tl_node){.kind = TL_N_IDENT, .line = rhs->line, .col = rhs->col, .name = f.names[k]};
    cur = cur->next = axis;
  }
  *rhs = (tl_node){.kind = TL_N_COMPR, .line = rhs->line, .col = rhs->col, .args = head.next, .body = body};
  return true;
}
