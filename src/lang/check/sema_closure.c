/* sema_closure.c — closures and function values in the checker (LANGUAGE.md §11):
 * in: CLOSURE nodes `|x: i64| -> i64 { x + k }`, `|x| x * k`, `|| e`, function types
 * `fn(i64) -> i64`, a named function used as a value, calls of values of fn type;
 * out: their types (TY_FN), each closure's tl_closure_info (node->ref: the closure
 * checked as a function of its own, and its captures) and capture reads (node->stmts).
 * A closure captures by value: each outer variable its body names becomes an inner
 * variable (a borrowed parameter of the closure's function, held by its environment),
 * copied in where the closure is made, or moved there when that is the variable's
 * last use (own.c sees the capture reads as reads at the closure). */
#include "lang/check/sema_impl.h"

#include <stdio.h>
#include <string.h>

/* a closure being checked, innermost first */
struct sema_closure {
  tl_closure_info *info;
  struct sema_closure *parent;
  int cap; /* the capacity of info->fn->vars while a closure inside it is checked */
};

/* ---- fn types ---- */

static tl_ty *sema_fn_type(sema *s, tl_ty **params, int n, tl_ty *ret) {
  tl_ty *t = tl_arena_alloc(s->arena, sizeof *t);
  tl_ty **p = tl_arena_alloc(s->arena, sizeof *p * (size_t)(n ? n : 1));
  if (!t || !p) return TY_ERR;
  if (n) memcpy(p, params, sizeof *p * (size_t)n);
  *t = (tl_ty){.kind = TY_FN, .dtype = -1, .rank = -1, .fn_params = p, .fn_nparams = n, .fn_ret = ret};
  return t;
}

/* may a function of type have go where want is expected? The same parameters and
 * result (want's result NULL: any); tensors' dtype and rank may be unknown on a side */
bool tl_sema_fn_fits(const tl_ty *want, const tl_ty *have) {
  if (want->fn_nparams != have->fn_nparams) return false;
  for (int i = 0; i < want->fn_nparams; i++)
    if (!tl_sema_ty_fits(have->fn_params[i], want->fn_params[i]) || !tl_sema_ty_fits(want->fn_params[i], have->fn_params[i]))
      return false;
  return !want->fn_ret || !have->fn_ret || tl_sema_ty_fits(want->fn_ret, have->fn_ret);
}

/* A Vec, HashMap, Option or tuple type is one shared struct for each list of its type
 * arguments as their C form has them: tensors without dtype or rank, tuples as their
 * struct. A fn type among them is erased so too, parameter by parameter, and two fn
 * types are the same argument only with the same parameters and result: one
 * `Vec<fn(i64) -> i64>` and another `Vec<fn(f32) -> f32>` (issue 22). */
static tl_ty *erase_one(sema *s, tl_ty *t) {
  if (!t) return t;
  if (t->kind == TY_TENSOR && (t->dtype >= 0 || t->rank >= 0 || t->ent_cols)) return tl_sema_tensor(s, -1, -1);
  if (tl_ty_is_tuple(t) && t->elems) return tl_sema_struct_ty(s, t->st);
  if (t->kind == TY_FN) return tl_sema_fn_erase(s, t);
  return t;
}

tl_ty *tl_sema_fn_erase(sema *s, tl_ty *t) {
  tl_ty *params[64];
  if (t->kind != TY_FN || t->fn_nparams > 64) return t;
  for (int i = 0; i < t->fn_nparams; i++) params[i] = erase_one(s, t->fn_params[i]);
  return sema_fn_type(s, params, t->fn_nparams, erase_one(s, t->fn_ret));
}

bool tl_sema_ty_same_erased(const tl_ty *a, const tl_ty *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  if (a->kind == TY_STRUCT) return a->st == b->st;
  if (a->kind != TY_FN) return true;
  if (a->fn_nparams != b->fn_nparams) return false;
  for (int i = 0; i < a->fn_nparams; i++)
    if (!tl_sema_ty_same_erased(a->fn_params[i], b->fn_params[i])) return false;
  return tl_sema_ty_same_erased(a->fn_ret, b->fn_ret);
}

/* "fn(i64, f32) -> bool", "fn()" (a unit result is not written), "fn(i64) -> _" */
void tl_sema_fn_name(const tl_ty *t, char *buf, size_t size) {
  size_t len = (size_t)snprintf(buf, size, "fn(");
  char b[160];
  for (int i = 0; i < t->fn_nparams && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", tl_ty_name(t->fn_params[i], b, sizeof b));
  if (len >= size) return;
  if (!t->fn_ret) snprintf(buf + len, size - len, ") -> _");
  else if (t->fn_ret->kind == TY_UNIT) snprintf(buf + len, size - len, ")");
  else snprintf(buf + len, size - len, ") -> %s", tl_ty_name(t->fn_ret, b, sizeof b));
}

tl_ty *tl_sema_fn_resolve(sema *s, const tl_type *t) {
  tl_ty *params[64];
  int n = 0;
  bool bad = false;
  for (const tl_type *e = t->elems; e; e = e->next) {
    if (n == 64) {
      tl_diag_error(s->diag, e->line, e->col, "a function type has at most 64 parameters");
      return TY_ERR;
    }
    params[n] = tl_sema_resolve_type(s, e);
    bad |= params[n++]->kind == TY_ERROR;
  }
  tl_ty *ret = t->ret ? tl_sema_resolve_type(s, t->ret) : TY_UNIT_T;
  return bad || ret->kind == TY_ERROR ? TY_ERR : sema_fn_type(s, params, n, ret);
}

/* ---- captures ---- */

static bool owns(const tl_fninfo *f, const tl_var *v) { return v->id < f->nvars && f->vars[v->id] == v; }

static bool add_var(sema *s, tl_fninfo *f, int *cap, tl_var *v) {
  if (f->nvars == *cap) {
    int n = *cap ? *cap * 2 : 16;
    tl_var **nv = tl_arena_alloc(s->arena, sizeof *nv * (size_t)n);
    if (!nv) return false;
    if (f->nvars) memcpy(nv, f->vars, sizeof *nv * (size_t)f->nvars);
    f->vars = nv;
    *cap = n;
  }
  v->id = f->nvars;
  f->vars[f->nvars++] = v;
  return true;
}

/* v as closure c sees it: its own variable, or a capture (made on first use, through
 * every closure between v's function and c) */
static tl_var *capture(sema *s, struct sema_closure *c, tl_var *v, const tl_node *at) {
  if (!c || owns(c->info->fn, v)) return v;
  tl_var *outer = capture(s, c->parent, v, at); /* as the closure around c sees it */
  tl_capture **tail = &c->info->caps;
  for (; *tail; tail = &(*tail)->next)
    if ((*tail)->outer == outer) return (*tail)->inner;
  tl_var *in = tl_arena_alloc(s->arena, sizeof *in);
  tl_node *read = tl_arena_alloc(s->arena, sizeof *read);
  tl_capture *k = tl_arena_alloc(s->arena, sizeof *k);
  if (!in || !read || !k) return v;
  *in = (tl_var){.name = v->name, .ty = outer->ty, .kind = VAR_PARAM, .captured = true, .line = v->line, .col = v->col};
  if (!add_var(s, c->info->fn, c == s->closure ? &s->cap_vars : &c->cap, in)) return v;
  *read = (tl_node){.kind = TL_N_IDENT, .line = at->line, .col = at->col, .name = v->name, .var = outer, .ty = outer->ty};
  *k = (tl_capture){.outer = outer, .inner = in, .read = read};
  *tail = k;
  c->info->ncaps++;
  return in;
}

tl_var *tl_sema_closure_capture(sema *s, tl_var *v, const tl_node *at) { return capture(s, s->closure, v, at); }

bool tl_sema_closure_written(sema *s, const tl_node *at, const tl_var *v) {
  if (!v || !v->captured) return false;
  tl_sema_error(s, at, "cannot assign to captured variable `%s`: closures capture by value", v->name);
  tl_diag_hint(s->diag, "the closure holds its own copy of `%s`; return the new value from the closure instead", v->name);
  return true;
}

/* ---- closures ---- */

/* where an expression starts, for an error about all of it (a binary node is at its
 * operator, a call at its `(`) */
static const tl_node *start_of(const tl_node *n) {
  while (n->lhs && (n->kind == TL_N_BINARY || n->kind == TL_N_CAST || n->kind == TL_N_METHOD || n->kind == TL_N_FIELD ||
                    n->kind == TL_N_INDEX || n->kind == TL_N_CALL || n->kind == TL_N_TRY))
    n = n->lhs;
  return n;
}

static bool is_return(tl_node *n, void *unused) {
  (void)unused;
  return n->kind == TL_N_RETURN;
}

/* the parameters: written types, else the expected fn type's (want, may be NULL) */
static bool closure_params(sema *s, tl_node *n, tl_fninfo *f, const tl_ty *want, bool quiet, tl_ty **types) {
  int i = 0;
  bool ok = true;
  for (tl_node *a = n->args; a; a = a->next, i++) {
    tl_ty *t = a->type ? tl_sema_resolve_type(s, a->type) : NULL;
    tl_ty *w = want ? want->fn_params[i] : NULL;
    if (t && w && (!tl_sema_ty_fits(w, t) || !tl_sema_ty_fits(t, w))) {
      tl_sema_mismatch(s, a, "mismatched closure parameter type", w, t);
      t = w; /* said once: the closure is then taken as the expected type */
    }
    if (!t) t = w;
    if (!t && !quiet && a->name[0] == '$') { /* a tuple pattern `|(a, b)|` (parse.c) */
      tl_sema_error(s, a, "cannot infer the type of this closure parameter");
      tl_diag_hint(s->diag, "write its type: `|(a, b): (i64, i64)|`, or pass the closure where a `fn(..)` type is expected");
    } else if (!t && !quiet) {
      tl_sema_error(s, a, "cannot infer the type of closure parameter `%s`", a->name);
      tl_diag_hint(s->diag, "write its type: `|%s: i64|`, or pass the closure where a `fn(..)` type is expected", a->name);
    }
    if (!t) t = TY_ERR;
    ok &= t->kind != TY_ERROR;
    a->var = tl_sema_declare(s, a, a->name, t, VAR_PARAM, false);
    a->ty = t;
    f->params[i] = a->var;
    types[i] = t;
  }
  return ok;
}

tl_ty *tl_sema_closure_expr(sema *s, tl_node *n, tl_ty *expect) {
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body computes numbers: a closure cannot be made in it");
    return TY_ERR;
  }
  int np = tl_ast_count(n->args);
  const tl_ty *want = expect && expect->kind == TY_FN ? expect : NULL;
  if (want && want->fn_nparams != np) {
    char b[200];
    tl_sema_error(s, n, "expected a closure that takes %d argument%s, but it takes %d", want->fn_nparams,
               want->fn_nparams == 1 ? "" : "s", np);
    tl_diag_hint(s->diag, "the expected type is %s", tl_ty_name(want, b, sizeof b));
  }
  bool arity_ok = !want || want->fn_nparams == np;
  if (!arity_ok) want = NULL;
  if (np > 64) {
    tl_sema_error(s, n, "a closure has at most 64 parameters");
    return TY_ERR;
  }
  tl_closure_info *info = tl_arena_alloc(s->arena, sizeof *info);
  tl_fninfo *f = tl_arena_alloc(s->arena, sizeof *f);
  tl_fn *fn = tl_arena_alloc(s->arena, sizeof *fn);
  tl_var **params = tl_arena_alloc(s->arena, sizeof *params * (size_t)(np ? np : 1));
  if (!info || !f || !fn || !params) return TY_ERR;
  *fn = (tl_fn){.line = n->line, .col = n->col, .name = "closure", .body = n->body, .unit = s->fn->fn->unit};
  *f = (tl_fninfo){.name = "closure", .fn = fn, .nparams = np, .params = params};
  info->fn = f;
  /* the closure is a function of its own: its variables are numbered from 0 */
  struct sema_closure c = {.info = info, .parent = s->closure};
  tl_fninfo *saved_fn = s->fn;
  int saved_cap = s->cap_vars, saved_loops = s->nloops;
  tl_node *loops[SEMA_MAX_LOOPS]; /* the closure's loops start again at 0: `break` in it is its own */
  memcpy(loops, s->loops, sizeof loops);
  sym *mark = s->syms;
  if (s->closure) s->closure->cap = s->cap_vars;
  s->fn = f;
  s->cap_vars = 0;
  s->nloops = 0;
  s->closure = &c;
  tl_ty *types[64];
  /* a parameter whose type is not known makes the closure's type unknown: no errors
   * follow from it, nor from a closure of the wrong arity (its body is checked still) */
  bool quiet = !arity_ok || (expect && expect->kind == TY_ERROR); /* an expected type already wrong */
  bool known = closure_params(s, n, f, want, quiet, types) && arity_ok;
  tl_ty *written = n->type ? tl_sema_resolve_type(s, n->type) : NULL;
  tl_ty *target = written ? written : want ? want->fn_ret : NULL;
  if (!target && tl_ast_find(n->body, is_return, NULL)) {
    tl_sema_error(s, n, "a closure with `return` in it needs its result type written");
    tl_diag_hint(s->diag, "write it: `|x: i64| -> i64 { .. }`");
    target = TY_ERR;
  }
  f->ret = target ? target : TY_ERR; /* `return` in the body checks against it */
  tl_ty *t = tl_sema_block(s, n->body, target);
  n->body->ty = t;
  if (target && !tl_sema_ty_fits(target, t))
    tl_sema_mismatch(s, n->body->value ? start_of(n->body->value) : n, "mismatched closure return type", target, t);
  if (!target) f->ret = t;
  if (f->ret->kind == TY_RANGE) {
    tl_sema_error(s, n, "a range is not a value: a closure cannot return one");
    f->ret = TY_ERR;
  }
  s->closure = c.parent;
  s->fn = saved_fn;
  s->cap_vars = c.parent ? c.parent->cap : saved_cap;
  s->nloops = saved_loops;
  memcpy(s->loops, loops, sizeof loops);
  s->syms = mark;
  info->ty = sema_fn_type(s, types, np, f->ret);
  n->ref = info;
  if (!known) info->ty = TY_ERR;
  tl_node **tail = &n->stmts; /* the captures are read where the closure is made */
  *tail = NULL;
  for (tl_capture *k = info->caps; k; k = k->next) {
    k->read->next = NULL;
    *tail = k->read;
    tail = &k->read->next;
  }
  return info->ty;
}

/* ---- named functions as values ---- */

tl_ty *tl_sema_fn_value(sema *s, tl_node *n, tl_fninfo *f) {
  if (f->self_struct || f->partial) return NULL;
  tl_ty *types[64];
  if (f->nparams > 64) return NULL;
  for (int i = 0; i < f->nparams; i++) {
    if (f->params[i]->kind == VAR_PARAM_REF) {
      tl_sema_error(s, n, "function `%s` takes `&mut` parameter `%s`: it cannot be used as a value", f->name, f->params[i]->name);
      tl_diag_hint(s->diag, "a value of fn type takes its arguments by value");
      return TY_ERR;
    }
    types[i] = f->params[i]->ty;
  }
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", f->name);
    return TY_ERR;
  }
  n->ref = f;
  n->var = NULL;
  return sema_fn_type(s, types, f->nparams, f->ret);
}

/* ---- calls of fn values ---- */

tl_ty *tl_sema_closure_call(sema *s, tl_node *n) {
  char b[200];
  n->ref = NULL;
  n->ival = B_FNVAL;
  tl_ty *t = tl_sema_expr(s, n->lhs, NULL);
  if (t->kind != TY_FN) {
    if (t->kind != TY_ERROR) {
      tl_sema_error(s, n->lhs, "expected function, found `%s`", tl_ty_name(t, b, sizeof b));
      tl_diag_hint(s->diag, "only a value of a function type such as `fn(i64) -> i64` can be called");
    }
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body calls only scalar math, not a function value");
    return TY_ERR;
  }
  int got = tl_ast_count(n->args);
  if (got != t->fn_nparams) {
    tl_sema_error(s, n->lhs, "expected %d argument%s, found %d", t->fn_nparams, t->fn_nparams == 1 ? "" : "s", got);
    tl_diag_hint(s->diag, "the function called is a %s", tl_ty_name(t, b, sizeof b));
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  int i = 0;
  for (tl_node *a = n->args; a; a = a->next, i++) {
    if (a->kind == TL_N_UNARY && a->op == TL_TOK_AMP) {
      tl_sema_error(s, a, "a function value takes its arguments by value, not `&mut`");
      tl_sema_expr(s, a->lhs, NULL);
      continue;
    }
    tl_ty *at = tl_sema_expr(s, a, t->fn_params[i]);
    if (!tl_sema_ty_fits(t->fn_params[i], at)) tl_sema_mismatch(s, a, "argument", t->fn_params[i], at);
  }
  return t->fn_ret;
}

tl_ty *tl_sema_closure_expect(sema *s, tl_node *arg, tl_ty **params, int nparams, tl_ty *ret) {
  tl_ty *want = sema_fn_type(s, params, nparams, ret);
  tl_ty *t = tl_sema_expr(s, arg, want);
  if (t->kind == TY_ERROR) return TY_ERR;
  if (t->kind != TY_FN || !tl_sema_ty_fits(want, t)) {
    tl_sema_mismatch(s, arg, "mismatched types", want, t);
    tl_diag_hint(s->diag, "pass a closure such as `|x| ..`, or a function's name%s", ret ? "" : " (`_`: any result type)");
    return TY_ERR;
  }
  return t;
}
