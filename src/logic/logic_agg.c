/* logic_agg.c — aggregates in rule bodies (Soufflé's `n = count : { edge(x, _) }`,
 * `s = sum y : { w(x, y) }`, min, max), lowered on the parsed tree before the checker
 * sees the rule. The body in braces becomes a rule of its own,
 *   count#1(x, _#1) :- edge(x, _#1).
 * whose head holds the body's variables that also occur outside the braces first (the
 * group), then the others (each `_` of a positive atom a variable of its own, so every
 * solution is a tuple: count and sum see solutions, as Soufflé and SWI-Prolog's
 * aggregate_all do); the aggregate becomes the literal `count#1(x; n)`: for each
 * binding of the group, reduce the hidden relation's tuples with that group (the value
 * column for sum/min/max) into n. The hidden relation is read like a negated one (the
 * rule must be stratified over it), so it is complete when the reduction runs.
 * Names with `#` cannot be written in a program, so they meet no user relation. */
#include <stdio.h>
#include <string.h>

#include "logic/logic_front.h"

typedef struct {
  tl_arena *arena;
  const char *names[256];
  int n;
  bool oom;
} nameset;

static bool is_var_node(const tl_node *t) {
  return (t->kind == TL_N_IDENT && t->op != TL_TOK_STRING && strcmp(t->name, "_")) || t->kind == TL_N_LVAR;
}

static bool has(const nameset *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->names[i], name)) return true;
  return false;
}

static void add(nameset *s, const char *name) {
  if (!has(s, name) && s->n < 256) s->names[s->n++] = name;
}

/* the variable names of term t (a single node) */
static void term_names(nameset *s, const tl_node *t) {
  if (!t) return;
  if (is_var_node(t)) add(s, t->name);
  if (t->kind == TL_N_BINARY || t->kind == TL_N_UNARY) term_names(s, t->lhs), term_names(s, t->rhs);
}

/* the variable names of literal l (an atom, a comparison, an aggregate's result and
 * the group it reads) */
static void literal_names(nameset *s, const tl_node *l) {
  if (l->kind == TL_N_BINARY) {
    term_names(s, l->lhs), term_names(s, l->rhs);
    return;
  }
  if (l->kind != TL_N_LOGIC) return;
  if (l->op == TL_TOK_COLON && l->lhs) { /* an aggregate not yet lowered: its result */
    term_names(s, l->lhs);
    return;
  }
  for (const tl_node *a = l->args; a; a = a->next) term_names(s, a);
}

static tl_node *copy_node(tl_arena *a, const tl_node *t) {
  tl_node *n = tl_arena_alloc(a, sizeof *n);
  if (n) *n = *t, n->next = NULL;
  return n;
}

static tl_node *name_node(tl_arena *a, const char *name, const tl_node *at) {
  tl_node *n = tl_arena_alloc(a, sizeof *n);
  if (!n) return NULL;
  n->kind = TL_N_IDENT;
  n->line = at->line, n->col = at->col;
  n->name = name;
  return n;
}

static char *fmt_name(tl_arena *a, const char *fmt, const char *s, int k) {
  char buf[64];
  snprintf(buf, sizeof buf, fmt, s, k);
  char *m = tl_arena_alloc(a, strlen(buf) + 1);
  if (m) strcpy(m, buf);
  return m;
}

/* names bound inside literal list l: positive atoms' arguments, arithmetic results
 * whose operands are bound (to a fixpoint) */
static void bound_names(nameset *s, const tl_node *l) {
  for (const tl_node *x = l; x; x = x->next)
    if (x->kind == TL_N_LOGIC && x->op != TL_TOK_NOT && x->op != TL_TOK_COLON && !tl_lf_is_builtin(x->name))
      for (const tl_node *a = x->args; a; a = a->next)
        if (is_var_node(a)) add(s, a->name);
  for (int grew = 1; grew;) {
    grew = 0;
    for (const tl_node *x = l; x; x = x->next) {
      if (x->kind != TL_N_LOGIC || x->op == TL_TOK_NOT || !tl_lf_is_builtin(x->name) || tl_ast_count(x->args) != 3 ||
          !is_var_node(x->args->next->next) || has(s, x->args->next->next->name))
        continue;
      nameset ops = {0};
      term_names(&ops, x->args), term_names(&ops, x->args->next);
      bool all = true;
      for (int i = 0; i < ops.n && all; i++) all = has(s, ops.names[i]);
      if (all) add(s, x->args->next->next->name), grew = 1;
    }
  }
}

static tl_node *copy_literal(tl_arena *a, const tl_node *l) {
  tl_node *c = copy_node(a, l), head = {0}, *cur = &head;
  for (const tl_node *x = l->args; c && x; x = x->next)
    if (!(cur = cur->next = copy_node(a, x))) return NULL;
  if (c) c->args = head.next;
  return c;
}

/* Soufflé's `count : { e(x, y), y > t }` with t bound outside the braces only: the
 * outer positive atoms (and arithmetic) that bind such a variable are copied into the
 * braces (their variables join the group, bound outside as well), so the hidden rule
 * binds it too; false when out of memory */
static bool bring_in(tl_arena *a, tl_ast_item *it, tl_node *g, const nameset *out) {
  for (int round = 0; round < 8; round++) {
    nameset in = {0}, bound = {0};
    for (const tl_node *l = g->body; l; l = l->next) literal_names(&in, l);
    if (g->rhs) term_names(&in, g->rhs);
    bound_names(&bound, g->body);
    const char *need = NULL;
    for (int i = 0; i < in.n && !need; i++)
      if (!has(&bound, in.names[i]) && has(out, in.names[i])) need = in.names[i];
    if (!need) return true;
    bool copied = false;
    for (const tl_node *l = it->body; l; l = l->next) {
      if (l == g || l->kind != TL_N_LOGIC || l->op == TL_TOK_NOT || l->op == TL_TOK_COLON) continue;
      bool arith = tl_lf_is_builtin(l->name);
      if (arith && (tl_ast_count(l->args) != 3 || !is_var_node(l->args->next->next) ||
                    strcmp(l->args->next->next->name, need)))
        continue;
      nameset names = {0};
      literal_names(&names, l);
      if (!arith && !has(&names, need)) continue;
      tl_node *c = copy_literal(a, l);
      if (!c) return false;
      c->next = g->body, g->body = c;
      copied = true;
      if (!arith) break;
    }
    if (!copied) return true; /* unbound: the hidden rule says so */
  }
  return true;
}

/* one aggregate node g of rule it: its hidden rule (returned), g lowered in place */
static tl_ast_item *lower_one(tl_arena *a, tl_ast_item *it, tl_node *g, int *counter) {
  int k = ++*counter;
  /* the names outside the braces: the head, the other literals */
  nameset out = {0}, in = {0};
  for (const tl_node *x = it->atom->args; x; x = x->next) term_names(&out, x);
  for (const tl_node *l = it->body; l; l = l->next)
    if (l != g) literal_names(&out, l);
  term_names(&out, g->lhs);
  /* a wildcard of a positive atom inside: a variable of its own */
  for (tl_node *l = g->body; l; l = l->next) {
    if (l->kind != TL_N_LOGIC || l->op == TL_TOK_NOT) continue;
    for (tl_node *x = l->args; x; x = x->next)
      if (x->kind == TL_N_IDENT && x->op != TL_TOK_STRING && !strcmp(x->name, "_")) {
        const char *nm = fmt_name(a, "%s#%d", "_", ++*counter);
        if (!nm) return NULL;
        x->name = nm;
      }
  }
  /* the value: a variable, or an expression bound to a hidden one in the braces */
  const char *value = NULL;
  if (g->rhs) {
    if (is_var_node(g->rhs)) value = g->rhs->name;
    else {
      const char *nm = fmt_name(a, "%s#%d", "_v", ++*counter);
      tl_node *bind = tl_arena_alloc(a, sizeof *bind), *zero = tl_arena_alloc(a, sizeof *zero);
      tl_node *v = nm ? name_node(a, nm, g->rhs) : NULL, *e = copy_node(a, g->rhs);
      if (!bind || !zero || !v || !e) return NULL;
      bind->kind = TL_N_LOGIC, bind->ival = TL_LOGIC_ATOM, bind->name = "add";
      bind->line = g->rhs->line, bind->col = g->rhs->col;
      zero->kind = TL_N_INT, zero->line = e->line, zero->col = e->col;
      bind->args = e, e->next = zero, zero->next = v;
      tl_node *last = g->body;
      while (last->next) last = last->next;
      last->next = bind;
      value = nm;
    }
  }
  if (!bring_in(a, it, g, &out)) return NULL;
  for (const tl_node *l = g->body; l; l = l->next) literal_names(&in, l);
  if (value) add(&in, value);
  /* the hidden head: the group (names inside that occur outside), then the rest */
  const char *cols[256];
  int ncols = 0, ngroup = 0, vcol = -1;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < in.n; i++)
      if (has(&out, in.names[i]) == !pass) {
        if (value && !strcmp(in.names[i], value)) vcol = ncols;
        cols[ncols++] = in.names[i];
        ngroup += !pass;
      }
  const char *hidden = fmt_name(a, "%s#%d", g->str, k);
  tl_ast_item *h = tl_arena_alloc(a, sizeof *h);
  tl_node *head = tl_arena_alloc(a, sizeof *head);
  if (!hidden || !h || !head) return NULL;
  head->kind = TL_N_LOGIC, head->ival = TL_LOGIC_ATOM, head->name = hidden;
  head->line = g->line, head->col = g->col;
  tl_node hl = {0}, *hc = &hl, gl = {0}, *gc = &gl;
  for (int i = 0; i < ncols; i++) {
    if (!(hc = hc->next = name_node(a, cols[i], g))) return NULL;
    if (i < ngroup && !(gc = gc->next = name_node(a, cols[i], g))) return NULL;
  }
  head->args = hl.next;
  h->kind = TL_ITEM_RULE;
  h->line = it->line, h->col = it->col; /* typed just before the rule that reads it */
  h->name = hidden;
  h->atom = head;
  h->body = g->body;
  h->unit = it->unit;
  /* the literal: hidden(group..; result) */
  tl_node *res = copy_node(a, g->lhs);
  if (!res) return NULL;
  gc->next = res;
  g->args = gl.next;
  g->name = hidden;
  g->len = (size_t)(vcol < 0 ? 0 : vcol);
  g->ref = h;
  return h;
}

int tl_lf_lower_aggregates(tl_arena *a, tl_ast_item *it, tl_ast_item **hidden, int room, int *counter) {
  int n = 0;
  for (tl_node *l = it->body; l; l = l->next) {
    if (l->kind != TL_N_LOGIC || l->op != TL_TOK_COLON || l->ref) continue;
    if (n == room) return -1;
    tl_ast_item *h = lower_one(a, it, l, counter);
    if (!h) return -1;
    hidden[n++] = h;
  }
  return n;
}
