/* own.c — the ownership pass (LANGUAGE.md §6): liveness of every variable on each
 * function's control-flow graph, so the code generator can move a value at its last
 * use instead of copying it.
 * in: a checked function (variables numbered 0..nvars-1); out: node->last_use on
 * every read of a variable, true when no path from that read reaches another read
 * before a new definition.
 * The graph is the structured one of the syntax tree: sequence, `if` (join), loops
 * (a back edge from the end of the body and from `continue` to the head; `break` to
 * the exit), `return` (to the function's exit, where nothing is live). It is solved
 * backwards; a loop is iterated until its head's live set stops changing, and the
 * last pass leaves the flags of the fixpoint. */
#include "lang/check/own.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  int words;
  uint64_t *scratch; /* a pool of sets, handed out in stack order */
  int nsets, used;
  uint64_t *loop_exit[64], *loop_head[64];
  const tl_node *loop_node[64];
  int nloops;
  bool oom;
} own;

static uint64_t *set_new(own *o) {
  if (o->used == o->nsets) {
    o->oom = true;
    return o->scratch; /* never written past: the result is then unused */
  }
  uint64_t *s = o->scratch + (size_t)o->used++ * (size_t)o->words;
  memset(s, 0, sizeof *s * (size_t)o->words);
  return s;
}

static void set_copy(own *o, uint64_t *dst, const uint64_t *src) { memcpy(dst, src, sizeof *dst * (size_t)o->words); }
static void set_union(own *o, uint64_t *dst, const uint64_t *src) {
  for (int i = 0; i < o->words; i++) dst[i] |= src[i];
}
static bool set_equal(own *o, const uint64_t *a, const uint64_t *b) {
  return !memcmp(a, b, sizeof *a * (size_t)o->words);
}
static bool has(const uint64_t *s, int v) { return s[v >> 6] >> (v & 63) & 1; }
static void add(uint64_t *s, int v) { s[v >> 6] |= (uint64_t)1 << (v & 63); }
static void kill(uint64_t *s, int v) { s[v >> 6] &= ~((uint64_t)1 << (v & 63)); }

static void live_expr(own *o, tl_node *n, uint64_t *live);
static void live_stmt(own *o, tl_node *n, uint64_t *live);
static void live_loop(own *o, tl_node *n, uint64_t *live);

/* a pattern (`let (a, (b, _)) = ..`, a match arm's) defines each name bound in it */
static void kill_pattern(const tl_node *p, uint64_t *live) {
  if (!p) return;
  if (p->kind == TL_N_IDENT && p->var) kill(live, p->var->id);
  for (const tl_node *e = p->args; e; e = e->next) kill_pattern(e, live);
  if (p->kind == TL_N_FIELD_INIT || p->kind == TL_N_BINARY) kill_pattern(p->lhs, live);
  if (p->kind == TL_N_BINARY) kill_pattern(p->rhs, live);
}

/* A match: the scrutinee runs first; then each arm's test, and on a failed test (or
 * guard) the next arm: solved backwards, `later` is what the arms after this one need.
 * After the last arm nothing runs (no arm matched is a run-time error). */
static void live_match(own *o, tl_node *n, uint64_t *live) {
  int k = tl_ast_count(n->args), mark = o->used;
  tl_node **arms = malloc(sizeof *arms * (size_t)(k + 1));
  uint64_t *out = set_new(o), *later = set_new(o), *arm = set_new(o);
  if (!arms) {
    o->oom = true;
    return;
  }
  k = 0;
  for (tl_node *a = n->args; a; a = a->next) arms[k++] = a;
  set_copy(o, out, live);
  while (k--) {
    tl_node *a = arms[k];
    set_copy(o, arm, out);
    live_expr(o, a->rhs, arm);
    if (a->cond) {
      set_union(o, arm, later); /* the guard fails: on to the next arms */
      live_expr(o, a->cond, arm);
    }
    kill_pattern(a->lhs, arm);
    set_union(o, arm, later);
    set_copy(o, later, arm);
  }
  free(arms);
  set_copy(o, live, later);
  o->used = mark;
  live_expr(o, n->lhs, live);
}

/* a list, backwards: evaluation runs first to last */
static void live_list(own *o, tl_node *first, uint64_t *live, bool stmts) {
  tl_node *items[256];
  int k = 0;
  for (tl_node *c = first; c; c = c->next) {
    if (k == 256) { /* a long list: handle the tail first, recursively */
      live_list(o, c, live, stmts);
      break;
    }
    items[k++] = c;
  }
  while (k--) stmts ? live_stmt(o, items[k], live) : live_expr(o, items[k], live);
}

static void live_block(own *o, tl_node *n, uint64_t *live) {
  if (n->value) live_expr(o, n->value, live);
  live_list(o, n->stmts, live, true);
}

static void live_if(own *o, tl_node *n, uint64_t *live) {
  int mark = o->used;
  uint64_t *other = set_new(o);
  set_copy(o, other, live);
  live_block(o, n->then, live);
  if (n->els) live_expr(o, n->els, other);
  set_union(o, live, other);
  o->used = mark;
  live_expr(o, n->cond, live);
}

static void live_expr(own *o, tl_node *n, uint64_t *live) {
  if (!n) return;
  switch (n->kind) {
  case TL_N_IDENT: case TL_N_SELF:
    if (n->var && n->var->id >= 0) {
      n->last_use = !has(live, n->var->id);
      add(live, n->var->id);
    }
    return;
  case TL_N_BINARY: /* a left-leaning chain `a + b + c ...` in a loop: it may be 100,000 deep */
    for (; n->kind == TL_N_BINARY; n = n->lhs) {
      if (n->op == TL_TOK_ANDAND || n->op == TL_TOK_OROR) { /* rhs runs only sometimes */
        int mark = o->used;
        uint64_t *skip = set_new(o);
        set_copy(o, skip, live);
        live_expr(o, n->rhs, live);
        set_union(o, live, skip);
        o->used = mark;
      } else live_expr(o, n->rhs, live);
    }
    live_expr(o, n, live);
    return;
  case TL_N_IF: live_if(o, n, live); return;
  case TL_N_BLOCK: live_block(o, n, live); return;
  case TL_N_RANGE:
    live_expr(o, n->rhs, live);
    live_expr(o, n->lhs, live);
    return;
  case TL_N_MATCH: live_match(o, n, live); return;
  case TL_N_LOOP: live_loop(o, n, live); return; /* `let v = loop { .. }` */
  case TL_N_CALL: case TL_N_METHOD: case TL_N_INDEX: case TL_N_ARRAY: case TL_N_STRUCT_LIT: case TL_N_TUPLE:
  case TL_N_VARIANT:
  case TL_N_LOGIC: /* a query's or a fact's arguments read the function's values */
    live_list(o, n->args, live, false);
    live_expr(o, n->lhs, live); /* the receiver or indexed value runs first */
    return;
  /* `x?` may return early, where nothing is live: the join with the path on adds nothing */
  case TL_N_FIELD_INIT: case TL_N_UNARY: case TL_N_CAST: case TL_N_FIELD: case TL_N_TRY: live_expr(o, n->lhs, live); return;
  case TL_N_COMPR: /* reads only: a comprehension borrows everything it reads */
    if (n->body) live_block(o, n->body, live);
    live_list(o, n->stmts, live, false);
    return;
  case TL_N_GEN: live_expr(o, n->lhs, live); return;
  case TL_N_CLOSURE: /* the captures are read here; the body is a function of its own */
    live_list(o, n->stmts, live, false);
    if (n->ref && tl_own_analyze(((tl_closure_info *)n->ref)->fn)) o->oom = true;
    return;
  default: return;
  }
}

/* loops: the head's live set is solved to a fixpoint */
static void live_loop(own *o, tl_node *n, uint64_t *live) {
  if (o->nloops == 64) {
    o->oom = true;
    return;
  }
  int mark = o->used;
  uint64_t *exit = set_new(o), *head = set_new(o), *work = set_new(o); /* head grows from empty */
  set_copy(o, exit, live);
  for (int round = 0; round < 1000; round++) {
    o->loop_exit[o->nloops] = exit;
    o->loop_head[o->nloops] = head;
    o->loop_node[o->nloops] = n;
    o->nloops++;
    set_copy(o, work, head);
    live_block(o, n->body, work);
    o->nloops--;
    if (n->kind == TL_N_FOR) {
      kill(work, n->var->id);
      set_union(o, work, exit); /* the loop may end before any iteration */
    } else if (n->kind == TL_N_WHILE) {
      set_union(o, work, exit);
      live_expr(o, n->cond, work);
    }
    if (set_equal(o, work, head)) break;
    set_union(o, head, work);
  }
  set_copy(o, live, head);
  if (n->kind == TL_N_FOR) live_expr(o, n->lhs, live); /* the head runs once, before */
  o->used = mark;
}


static void live_stmt(own *o, tl_node *n, uint64_t *live) {
  switch (n->kind) {
  case TL_N_LET:
    if (n->var) kill(live, n->var->id);
    if (n->lhs) kill_pattern(n->lhs, live);
    live_expr(o, n->rhs, live);
    return;
  case TL_N_ASSIGN:
    if (n->op == TL_TOK_ASSIGN && n->lhs->kind == TL_N_IDENT && n->lhs->var) {
      kill(live, n->lhs->var->id); /* the old value is released, not read */
      live_expr(o, n->rhs, live);
      return;
    }
    live_expr(o, n->rhs, live);
    live_expr(o, n->lhs, live); /* a store reads its place */
    return;
  case TL_N_EXPR_STMT: live_expr(o, n->lhs, live); return;
  case TL_N_WHILE: case TL_N_LOOP: case TL_N_FOR: live_loop(o, n, live); return;
  case TL_N_BREAK: case TL_N_CONTINUE: { /* to its loop (n->ref: a labeled one may be outer) */
    int i = o->nloops - 1;
    while (i > 0 && n->ref && o->loop_node[i] != n->ref) i--;
    if (i >= 0) set_copy(o, live, n->kind == TL_N_BREAK ? o->loop_exit[i] : o->loop_head[i]);
    live_expr(o, n->lhs, live); /* `break value`: read before the jump */
    return;
  }
  case TL_N_RETURN:
    memset(live, 0, sizeof *live * (size_t)o->words);
    live_expr(o, n->lhs, live);
    return;
  default: live_expr(o, n, live);
  }
}

int tl_own_analyze(tl_fninfo *f) {
  own o = {.words = (f->nvars + 63) / 64 + 1, .nsets = 4096};
  o.scratch = malloc(sizeof *o.scratch * (size_t)o.words * (size_t)o.nsets);
  if (!o.scratch) return -1;
  uint64_t *live = set_new(&o);
  live_block(&o, f->fn->body, live);
  free(o.scratch);
  return o.oom ? -1 : 0;
}
