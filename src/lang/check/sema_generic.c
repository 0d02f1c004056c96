/* sema_generic.c — generics in the checker (LANGUAGE.md §11): in: generic fns
 * `fn max_of<T: Ord>(a: T, b: T) -> T`, structs `struct Pair<A, B>`, enums
 * `enum Tree<T>`, their impls `impl<T> Stack<T>`, and every use of them; out:
 * instances. Generics are monomorphized: a use with new type arguments (written
 * `f::<i64>(..)`, or inferred from the arguments and the expected type) makes an
 * instance, a plain tl_fninfo or tl_struct_info of its own whose types are resolved
 * with the type parameters bound (sema_tyenv), checked and generated as any other, so a
 * generic costs nothing at run time. A fn instance checks a fresh copy of the generic
 * body (the checker writes its results into the tree). Instances are cached by their
 * type arguments; a chain of instances deeper than GEN_MAX_DEPTH (polymorphic
 * recursion) is an error. Traits are in sema_trait.c. */
#include "lang/check/sema_generic.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_MAX_DEPTH 32

sema_gen *tl_sema_gen_of(sema *s) {
  if (!s->gen) s->gen = tl_arena_alloc(s->arena, sizeof *s->gen);
  return s->gen;
}

gen_tmpl *tl_sema_gen_find(sema *s, const char *name, char kind) {
  sema_gen *g = tl_sema_gen_of(s);
  for (gen_tmpl *t = g ? g->tmpls : NULL; t; t = t->next)
    if (!strcmp(t->name, name) && (!kind || t->kind == kind || (kind == 'd' && t->kind != 'f' && t->kind != 't')))
      return t;
  return NULL;
}

static int count_tparams(const tl_tparam *p) {
  int n = 0;
  for (; p; p = p->next) n++;
  return n;
}

static int count_types(const tl_type *t) {
  int n = 0;
  for (; t; t = t->next) n++;
  return n;
}

bool tl_sema_ty_same(const tl_ty *a, const tl_ty *b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  if (a->kind == TY_TENSOR) return a->dtype == b->dtype && a->rank == b->rank;
  if (a->kind == TY_FN) { /* one instance per signature: `Box<fn(i64) -> i64>`, `Box<fn(f32) -> f32>` */
    if (a->fn_nparams != b->fn_nparams || !a->fn_ret != !b->fn_ret) return false;
    for (int i = 0; i < a->fn_nparams; i++)
      if (!tl_sema_ty_same(a->fn_params[i], b->fn_params[i])) return false;
    return !a->fn_ret || tl_sema_ty_same(a->fn_ret, b->fn_ret);
  }
  if (a->kind != TY_STRUCT) return true;
  if (a->st != b->st) return false;
  if (!a->st->is_tuple) return true;
  for (int i = 0; i < a->st->nfields; i++)
    if (!tl_sema_ty_same(tl_ty_tuple_elem(a, i), tl_ty_tuple_elem(b, i))) return false;
  return true;
}

static bool same_args(tl_ty **a, tl_ty **b, int n) {
  for (int i = 0; i < n; i++)
    if (!tl_sema_ty_same(a[i], b[i])) return false;
  return true;
}

sema_tyenv *tl_sema_gen_env(sema *s, const tl_tparam *tps, tl_ty **args, int n, tl_ty *self, const char *owner) {
  sema_tyenv *e = tl_arena_alloc(s->arena, sizeof *e);
  const char **names = tl_arena_alloc(s->arena, sizeof *names * (size_t)(n + 1));
  tl_ty **tys = tl_arena_alloc(s->arena, sizeof *tys * (size_t)(n + 1));
  if (!e || !names || !tys) return NULL;
  for (int i = 0; i < n && tps; i++, tps = tps->next) names[i] = tps->name, tys[i] = args[i];
  *e = (sema_tyenv){.n = n, .names = names, .tys = tys, .self = self, .owner = owner,
                    .depth = s->env ? s->env->depth + 1 : 0};
  return e;
}

/* "Pair<i64, f64>" */
static const char *args_name(sema *s, const char *base, tl_ty **args, int n, const char *open) {
  char buf[1024], b[512];
  size_t len = (size_t)snprintf(buf, sizeof buf, "%s%s", base, open);
  for (int i = 0; i < n && len < sizeof buf; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? ", " : "", tl_ty_name(args[i], b, sizeof b));
  if (len < sizeof buf) snprintf(buf + len, sizeof buf - len, ">");
  char *out = tl_arena_alloc(s->arena, strlen(buf) + 1);
  if (out) strcpy(out, buf);
  return out ? out : base;
}

/* ---- declarations ---- */

static gen_tmpl *add_tmpl(sema *s, char kind, const char *name, tl_ast_item *it, tl_fn *fn, tl_tparam *tps) {
  sema_gen *g = tl_sema_gen_of(s);
  gen_tmpl *t = tl_arena_alloc(s->arena, sizeof *t);
  if (!g || !t) return NULL;
  *t = (gen_tmpl){.kind = kind, .name = name, .it = it, .fn = fn, .tparams = tps, .n = count_tparams(tps)};
  gen_tmpl **tail = &g->tmpls;
  while (*tail) tail = &(*tail)->next;
  *tail = t;
  return t;
}

bool tl_sema_generic_register(sema *s, tl_ast_item *it, bool broken) {
  bool generic = (it->kind == TL_ITEM_STRUCT || it->kind == TL_ITEM_ENUM) && it->tparams;
  bool fn = it->kind == TL_ITEM_FN && it->fn && it->fn->tparams;
  if (!generic && !fn && it->kind != TL_ITEM_TRAIT) return false;
  if (broken) return true; /* what did not parse of a generic is not declared */
  const char *name = fn ? it->fn->name : it->name;
  if (tl_sema_gen_find(s, name, fn ? 'f' : 0) || (!fn && tl_sema_find_struct(s, name))) {
    tl_diag_error(s->diag, it->line, it->col, "the name `%s` is defined twice", name);
    return true;
  }
  char kind = fn ? 'f' : it->kind == TL_ITEM_TRAIT ? 't' : it->kind == TL_ITEM_ENUM ? 'e' : 's';
  add_tmpl(s, kind, name, it, fn ? it->fn : NULL, fn ? it->fn->tparams : it->tparams);
  return true;
}

bool tl_sema_generic_fn_named(sema *s, const char *name) { return s->gen && tl_sema_gen_find(s, name, 'f'); }

bool tl_sema_gen_impl_params(sema *s, tl_ast_item *it, gen_tmpl *g) {
  bool ok = count_types(it->self_type->elems) == g->n && count_tparams(it->tparams) == g->n;
  const tl_tparam *p = it->tparams;
  for (const tl_type *e = it->self_type->elems; ok && e; e = e->next, p = p->next)
    ok = !e->elems && !e->is_tuple && !strcmp(e->name, p->name);
  if (ok) return true;
  tl_diag_error(s->diag, it->self_type->line, it->self_type->col, "an impl of generic type `%s` takes its type parameters as they are declared",
                g->name);
  char ps[256] = "";
  size_t len = 0;
  for (const tl_tparam *q = g->tparams; q && len < sizeof ps; q = q->next)
    len += (size_t)snprintf(ps + len, sizeof ps - len, "%s%s", q == g->tparams ? "" : ", ", q->name);
  tl_diag_hint(s->diag, "write `impl<%s> %s<%s>` (an impl for one instance only is not supported)", ps, g->name, ps);
  return false;
}

/* `impl<T> Stack<T> { .. }`: its methods are made for each instance of Stack used */
static void generic_impl(sema *s, tl_ast_item *it) {
  gen_tmpl *g = tl_sema_gen_find(s, it->name, 'd');
  if (!g) {
    tl_diag_error(s->diag, it->line, it->col, it->tparams ? "`impl` of unknown generic type `%s`" : "`impl` of unknown struct `%s`",
                  it->name);
    return;
  }
  if (!tl_sema_gen_impl_params(s, it, g)) return;
  gen_impl *gi = tl_arena_alloc(s->arena, sizeof *gi);
  if (!gi) return;
  gi->it = it;
  gi->next = g->impls;
  g->impls = gi;
}

static void sema_generic_plain_impl(sema *s, tl_ast_item *it);

bool tl_sema_generic_item(sema *s, tl_ast_item *it) {
  if (it->kind == TL_ITEM_FN && it->fn && it->fn->tparams) {
    gen_tmpl *g = tl_sema_gen_find(s, it->fn->name, 'f');
    if (g && g->fn == it->fn) tl_sema_trait_check_generic(s, g);
    return true;
  }
  if (it->kind == TL_ITEM_TRAIT) return true;
  if (it->kind != TL_ITEM_IMPL) return false;
  if (it->trait) {
    tl_sema_trait_impl(s, it);
    return true;
  }
  if (!it->tparams && !tl_sema_gen_find(s, it->name, 'd')) {
    sema_generic_plain_impl(s, it); /* its generic methods, made per call */
    return false;
  }
  generic_impl(s, it);
  return true;
}

/* ---- types ---- */

/* the instance of generic struct or enum g for these type arguments, made on first use */
/* the bounds of a generic struct's parameters (`struct Boxed<T: Shape>`), once per
 * instance, where it is first named */
static bool struct_bounds(sema *s, gen_tmpl *g, tl_ty **args, int line, int col) {
  int i = 0;
  bool ok = true;
  for (const tl_tparam *p = g->tparams; p; p = p->next, i++)
    for (const tl_type *b = p->bounds; b; b = b->next) {
      if (tl_sema_trait_satisfies(s, args[i], b->name)) continue;
      char t[256];
      tl_diag_error(s->diag, line, col, "the trait bound `%s: %s` is not satisfied", tl_ty_name(args[i], t, sizeof t), b->name);
      tl_sema_trait_hint(s, args[i], b->name, p->name, g->name);
      ok = false;
    }
  return ok;
}

static tl_struct_info *sema_gen_struct(sema *s, gen_tmpl *g, tl_ty **args, int line, int col) {
  int count = 0;
  tl_struct_info **tail = &s->out->structs;
  for (; *tail; tail = &(*tail)->next) {
    tl_struct_info *st = *tail;
    if (st->generic_of) count++;
    if (st->generic_of == g->name && same_args(st->gargs, args, g->n)) return st;
  }
  tl_struct_info *st = tl_arena_alloc(s->arena, sizeof *st);
  tl_ty **targs = tl_arena_alloc(s->arena, sizeof *targs * (size_t)(g->n + 1));
  char *cname = tl_arena_alloc(s->arena, 24);
  if (!st || !targs || !cname) return NULL;
  memcpy(targs, args, sizeof *targs * (size_t)g->n);
  snprintf(cname, 24, "tlg_%d", count); /* never a user's `tls_`, a tuple's or an Option's */
  st->name = args_name(s, g->name, args, g->n, "<");
  st->cname = cname;
  st->is_enum = g->kind == 'e';
  st->generic_of = g->name;
  st->ngargs = g->n;
  st->gargs = targs;
  st->line = g->it->line;
  st->col = g->it->col;
  *tail = st; /* known before its fields: `enum Tree<T> { Node(Tree<T>, T) }` finds itself */
  st->partial = !struct_bounds(s, g, args, line, col); /* its methods are not made: no errors follow */
  sema_tyenv *saved = s->env;
  tl_ty *self = s->self_ty;
  s->env = tl_sema_gen_env(s, g->tparams, args, g->n, NULL, NULL);
  s->self_ty = NULL;
  if (g->kind == 'e') tl_sema_enum_fill(s, st, g->it);
  else tl_sema_struct_fill(s, st, g->it);
  s->env = saved;
  s->self_ty = self;
  tl_sema_trait_instance(s, g, st); /* `impl<T> Shape for Boxed<T>` (sema_trait.c) */
  return st;
}

static bool is_scalar_name(const char *n) {
  return tl_sema_scalar_named(n) != NULL;
}

tl_ty *tl_sema_generic_resolve(sema *s, const tl_type *t) {
  if (!t->elems) {
    for (int i = 0; s->env && i < s->env->n; i++)
      if (!strcmp(s->env->names[i], t->name)) return s->env->tys[i];
    if (!strncmp(t->name, "Self::", 6)) return tl_sema_assoc_type(s, t); /* sema_trait.c */
    if (!strcmp(t->name, "Self")) {
      if (s->self_ty) return s->self_ty;
      tl_diag_error(s->diag, t->line, t->col, "`Self` is only available in impls and traits");
      return TY_ERR;
    }
  }
  gen_tmpl *g = tl_sema_gen_find(s, t->name, 'd');
  if (!g) {
    if (!t->elems || (!is_scalar_name(t->name) && !tl_sema_find_struct(s, t->name))) return NULL; /* unknown: sema.c says */
    tl_diag_error(s->diag, t->line, t->col, "type `%s` takes no type arguments", t->name);
    return TY_ERR;
  }
  int got = count_types(t->elems);
  if (got != g->n) {
    tl_diag_error(s->diag, t->line, t->col, "`%s` takes %d type argument%s, but %d %s given", g->name, g->n, g->n == 1 ? "" : "s", got,
                  got == 1 ? "was" : "were");
    return TY_ERR;
  }
  tl_ty *args[64];
  if (g->n > 64) return TY_ERR;
  int i = 0;
  bool ok = true;
  for (const tl_type *e = t->elems; e; e = e->next, i++) {
    args[i] = tl_sema_resolve_type(s, e);
    if (args[i]->kind == TY_ERROR) ok = false;
    else if (args[i]->kind == TY_UNIT || args[i]->kind == TY_RANGE) {
      tl_diag_error(s->diag, e->line, e->col, "a type argument cannot be %s", args[i]->kind == TY_UNIT ? "()" : "a range");
      ok = false;
    }
  }
  if (!ok) return TY_ERR;
  tl_struct_info *st = sema_gen_struct(s, g, args, t->line, t->col);
  return st ? tl_sema_struct_ty(s, st) : TY_ERR;
}

/* ---- inference ---- */

static int tparam_index(const tl_tparam *tps, const char *name) {
  for (int i = 0; tps; tps = tps->next, i++)
    if (!strcmp(tps->name, name)) return i;
  return -1;
}

/* binds the type parameters in the written type pat from the type have; false after a
 * mismatch (reported at `at`; at NULL: have is a hint, a mismatch is no error) */
static bool sema_gen_unify(sema *s, const tl_type *pat, tl_ty *have, const tl_tparam *tps, tl_ty **bind, tl_node **from,
                    tl_node *at) {
  if (!pat || have->kind == TY_ERROR) return true;
  if (pat->is_tuple) {
    if (!tl_ty_is_tuple(have) || count_types(pat->elems) != have->st->nfields) return true;
    int i = 0;
    for (const tl_type *e = pat->elems; e; e = e->next, i++)
      if (!sema_gen_unify(s, e, tl_ty_tuple_elem(have, i), tps, bind, from, at)) return false;
    return true;
  }
  int i = pat->elems ? -1 : tparam_index(tps, pat->name);
  if (i >= 0) {
    if (!bind[i] || tl_sema_ty_fits(have, bind[i])) { /* a tensor of unknown dtype takes any */
      if (from && !bind[i]) from[i] = at;
      bind[i] = have;
      return true;
    }
    if (tl_sema_ty_fits(bind[i], have)) return true;
    if (bind[i]->kind == TY_TENSOR && have->kind == TY_TENSOR && tl_sema_join(s, bind[i], have)) {
      bind[i] = tl_sema_join(s, bind[i], have); /* `T` is a tensor of either's rank */
      return true;
    }
    if (!at) return false; /* the expected type is a hint only */
    char a[256], b[256];
    tl_sema_error(s, at, "mismatched types: expected %s, found %s", tl_ty_name(bind[i], a, sizeof a), tl_ty_name(have, b, sizeof b));
    if (from && from[i])
      tl_diag_hint(s->diag, "the type parameter `%s` is %s here, from the value at %d:%d", pat->name, a, from[i]->line, from[i]->col);
    return false;
  }
  if (!strcmp(pat->name, "fn") && have->kind == TY_FN) { /* fn(A, B) -> R */
    int k = 0;
    for (const tl_type *e = pat->elems; e && k < have->fn_nparams; e = e->next, k++)
      if (!sema_gen_unify(s, e, have->fn_params[k], tps, bind, from, at)) return false;
    return !pat->ret || !have->fn_ret || sema_gen_unify(s, pat->ret, have->fn_ret, tps, bind, from, at);
  }
  if (!pat->elems || have->kind != TY_STRUCT) return true;
  int k = 0;
  for (const tl_type *e = pat->elems; e; e = e->next, k++) {
    tl_ty *h = NULL;
    if (have->st->generic_of && !strcmp(have->st->generic_of, pat->name) && k < have->st->ngargs) h = have->st->gargs[k];
    else if ((tl_ty_is_option(have) && !strcmp(pat->name, "Option")) || (tl_ty_is_result(have) && !strcmp(pat->name, "Result")))
      h = k < have->st->nfields ? have->st->fields[k].ty : NULL;
    else if ((have->st->generic == 'V' && !strcmp(pat->name, "Vec")) || (have->st->generic == 'M' && !strcmp(pat->name, "HashMap")))
      h = k < 2 ? have->st->targs[k] : NULL; /* NULL: a Vec<_> not inferred yet */
    if (h && !sema_gen_unify(s, e, h, tps, bind, from, at)) return false;
  }
  return true;
}

/* a value whose type its context gives: a literal number, `None`, `Tree::Leaf` of a
 * generic enum: checked after the others, against what they bound */
static bool late(sema *s, const tl_node *n) {
  if (n->kind == TL_N_UNARY && n->op == TL_TOK_MINUS) n = n->lhs;
  if (((n->kind == TL_N_INT || n->kind == TL_N_FLOAT) && !tl_sema_const_type(n)) || tl_sema_option_needs_context(n)) return true;
  if (n->kind == TL_N_CLOSURE) return true; /* its parameters' types come from the others */
  if (n->kind != TL_N_PATH || !strstr(n->name, "::")) return false;
  char name[256];
  snprintf(name, sizeof name, "%.*s", (int)(strstr(n->name, "::") - n->name), n->name);
  return tl_sema_gen_find(s, name, 'e') != NULL;
}

/* the written type pat with the parameters bound so far, or NULL when one is not (or
 * it does not resolve: its declaration reports that) */
static bool unbound_in(const tl_type *pat, const tl_tparam *tps, tl_ty **bind) {
  for (; pat; pat = pat->next) {
    int i = pat->elems || pat->is_tuple ? -1 : tparam_index(tps, pat->name);
    if ((i >= 0 && !bind[i]) || unbound_in(pat->elems, tps, bind)) return true;
  }
  return false;
}

static tl_ty *bound_type(sema *s, const tl_type *pat, const tl_tparam *tps, tl_ty **bind) {
  if (!pat) return NULL;
  int n = count_tparams(tps);
  const tl_type *one = pat;
  tl_type copy = *pat; /* pat alone, not the types after it */
  copy.next = NULL;
  one = &copy;
  if (unbound_in(one, tps, bind)) return NULL;
  tl_ty *unit = TY_UNIT_T; /* the unbound ones are not named in pat */
  tl_ty *args[64];
  for (int i = 0; i < n && i < 64; i++) args[i] = bind[i] ? bind[i] : unit;
  bind = args;
  tl_diag *d = s->diag;
  int errors = d->errors, nat = d->nat;
  size_t len = d->text.len;
  sema_tyenv *saved = s->env;
  s->env = tl_sema_gen_env(s, tps, bind, n, s->self_ty, NULL);
  tl_ty *t = tl_sema_resolve_type(s, one);
  s->env = saved;
  if (d->errors == errors) return t;
  d->errors = errors; /* said where it is declared */
  d->nat = nat;
  d->text.len = len;
  if (d->text.data) d->text.data[len] = '\0';
  return NULL;
}

/* binds type parameters from call arguments against written parameter types: the
 * typed arguments first, then the expected type of the result, so that a literal
 * takes the type they gave (`max_of(x, 2.0)` with x: f64) */
static bool infer_from_args(sema *s, const tl_param *params, tl_node *args, const tl_tparam *tps, tl_ty **bind, tl_node **from,
                            const tl_type *ret, tl_ty *expect) {
  bool ok = true;
  for (int round = 0; round < 2; round++) {
    if (round == 1 && expect && ret) sema_gen_unify(s, ret, expect, tps, bind, NULL, NULL); /* `let y: i32 = same(5)` */
    const tl_param *p = params;
    for (tl_node *a = args; a && p; a = a->next, p = p->next) {
      tl_node *x = a->kind == TL_N_UNARY && a->op == TL_TOK_AMP ? a->lhs : a;
      if (x->kind == TL_N_FIELD_INIT) x = x->lhs;
      if (late(s, x) != (round == 1)) continue;
      tl_ty *t = tl_sema_expr_hint(s, x, round ? bound_type(s, p->type, tps, bind) : NULL);
      if (t->kind == TY_ERROR) ok = false;
      else if (!sema_gen_unify(s, p->type, t, tps, bind, from, x)) ok = false;
    }
  }
  return ok;
}

/* each unbound parameter is an error: "type annotations needed" */
static bool all_bound(sema *s, tl_node *at, const tl_tparam *tps, tl_ty **bind, const char *what, const char *fix) {
  int i = 0;
  for (const tl_tparam *p = tps; p; p = p->next, i++)
    if (!bind[i]) {
      tl_sema_error(s, at, "type annotations needed: cannot infer the type parameter `%s` of `%s`", p->name, what);
      tl_diag_hint(s->diag, "%s", fix);
      return false;
    }
  return true;
}

/* explicit type arguments `f::<i64, f32>` */
static bool explicit_args(sema *s, const tl_type *tf, const char *what, int want, tl_ty **bind) {
  int got = count_types(tf->elems);
  if (got != want) {
    tl_diag_error(s->diag, tf->line, tf->col, "`%s` takes %d type argument%s, but %d %s given", what, want, want == 1 ? "" : "s", got,
                  got == 1 ? "was" : "were");
    return false;
  }
  int i = 0;
  bool ok = true;
  for (const tl_type *e = tf->elems; e; e = e->next, i++)
    if ((bind[i] = tl_sema_resolve_type(s, e))->kind == TY_ERROR) ok = false;
  return ok;
}

/* ---- fn instances ---- */

static void clone_rewrite(sema *s, tl_node *c, const sema_tyenv *e);

static tl_node *clone_node(sema *s, const tl_node *n, const sema_tyenv *e);

static tl_node *clone_list(sema *s, const tl_node *n, const sema_tyenv *e) {
  tl_node head = {0}, *cur = &head;
  for (; n; n = n->next) cur = cur->next = clone_node(s, n, e);
  return head.next;
}

static tl_node *clone_node(sema *s, const tl_node *n, const sema_tyenv *e) {
  if (!n) return NULL;
  tl_node *c = tl_arena_alloc(s->arena, sizeof *c);
  if (!c) return NULL;
  *c = *n;
  c->next = NULL;
  c->ty = NULL;
  c->var = NULL;
  c->ref = NULL;
  c->last_use = false;
  c->lhs = clone_list(s, n->lhs, e);
  c->rhs = clone_list(s, n->rhs, e);
  c->cond = clone_list(s, n->cond, e);
  c->then = clone_list(s, n->then, e);
  c->els = clone_list(s, n->els, e);
  c->body = clone_list(s, n->body, e);
  c->stmts = clone_list(s, n->stmts, e);
  c->value = clone_list(s, n->value, e);
  c->args = clone_list(s, n->args, e);
  clone_rewrite(s, c, e);
  return c;
}

/* `T::new()` in a generic body names the type T stands for: `Circle::new()` */
static void clone_rewrite(sema *s, tl_node *c, const sema_tyenv *e) {
  if (!e || (c->kind != TL_N_PATH && c->kind != TL_N_STRUCT_LIT) || !c->name) return;
  const char *sep = strstr(c->name, "::");
  size_t len = sep ? (size_t)(sep - c->name) : strlen(c->name);
  for (int i = 0; i < e->n; i++)
    if (strlen(e->names[i]) == len && !strncmp(e->names[i], c->name, len)) {
      char b[512];
      tl_ty_name(e->tys[i], b, sizeof b);
      char *out = tl_arena_alloc(s->arena, strlen(b) + strlen(c->name + len) + 1);
      if (!out) return;
      sprintf(out, "%s%s", b, c->name + len);
      c->name = out;
      return;
    }
}

static tl_fn *clone_fn(sema *s, const tl_fn *fn, const sema_tyenv *e) {
  tl_fn *c = tl_arena_alloc(s->arena, sizeof *c);
  if (!c) return NULL;
  *c = *fn;
  c->next = NULL;
  c->tparams = NULL;
  c->body = clone_node(s, fn->body, e);
  return c;
}

tl_fn *tl_sema_gen_clone_fn(sema *s, const tl_fn *fn, const sema_tyenv *env) { return clone_fn(s, fn, env); }

tl_node *tl_sema_gen_clone_list(sema *s, const tl_node *n) { return clone_list(s, n, NULL); }

/* a C name for an instance: its name's letters and digits, made unique by a number */
const char *tl_sema_gen_cname(sema *s, const char *name) {
  int k = tl_sema_gen_of(s)->count++;
  size_t n = strlen(name);
  char *c = tl_arena_alloc(s->arena, n + 32);
  if (!c) return "tlg_fn";
  int len = sprintf(c, "tlg_%d_", k);
  for (const char *p = name; *p; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_') c[len++] = *p;
  c[len] = '\0';
  return c;
}

/* the instance of tmpl (a generic fn, or a method of a generic impl: owner is the
 * struct instance) for these type arguments, made and declared on first use; its body
 * is checked after the function being checked (the instance is appended to the fns) */
static tl_fninfo *fn_instance(sema *s, tl_fn *tmpl, tl_struct_info *owner, const tl_tparam *tps, tl_ty **args, int n,
                              const tl_node *at) {
  sema_gen *g = tl_sema_gen_of(s);
  if (!g) return NULL;
  for (gen_inst *i = g->insts; i; i = i->next)
    if (i->tmpl == tmpl && i->owner == owner && same_args(i->args, args, n)) return i->f;
  int own = owner ? owner->ngargs : 0; /* a method's own type arguments follow its impl's */
  const char *name = owner && n == own ? tmpl->name : args_name(s, tmpl->name, args + own, n - own, "::<");
  if (s->env && s->env->depth >= GEN_MAX_DEPTH) {
    int line = at ? at->line : tmpl->line, col = at ? at->col : tmpl->col;
    tl_diag_error(s->diag, line, col, "reached the limit of %d nested instances while instantiating `%s`", GEN_MAX_DEPTH, tmpl->name);
    tl_diag_hint(s->diag, "`%s` calls itself with a new type each time (polymorphic recursion): its instances never end", tmpl->name);
    return NULL;
  }
  gen_inst *inst = tl_arena_alloc(s->arena, sizeof *inst);
  tl_ty **targs = tl_arena_alloc(s->arena, sizeof *targs * (size_t)(n + 1));
  if (!inst || !targs) return NULL;
  memcpy(targs, args, sizeof *targs * (size_t)n);
  sema_tyenv *env = tl_sema_gen_env(s, tps, targs, n, owner ? tl_sema_struct_ty(s, owner) : NULL, NULL);
  tl_fn *c = clone_fn(s, tmpl, env);
  if (!env || !c) return NULL;
  c->name = name;
  sema_tyenv *saved = s->env;
  s->env = env;
  tl_fninfo *f = tl_sema_declare_fn(s, c, owner);
  s->env = saved;
  if (!f) return NULL;
  f->cname = tl_sema_gen_cname(s, f->name);
  *inst = (gen_inst){.tmpl = tmpl, .owner = owner, .n = n, .args = targs, .f = f, .next = g->insts};
  g->insts = inst;
  return f;
}

/* the bounds of a generic fn's type parameters, at a call: `the trait bound .. is not
 * satisfied` at the argument that gave the type */
static bool check_bounds(sema *s, tl_node *call, const char *what, const tl_tparam *tps, tl_ty **bind, tl_node **from) {
  int i = 0;
  bool ok = true;
  for (const tl_tparam *p = tps; p; p = p->next, i++)
    for (const tl_type *b = p->bounds; b; b = b->next) {
      if (tl_sema_trait_satisfies(s, bind[i], b->name)) continue;
      char t[256];
      tl_sema_error(s, from && from[i] ? from[i] : call, "the trait bound `%s: %s` is not satisfied", tl_ty_name(bind[i], t, sizeof t),
                 b->name);
      tl_sema_trait_hint(s, bind[i], b->name, p->name, what);
      ok = false;
    }
  return ok;
}

/* `Self::f`: the impl's type by name */
static void rename_self(sema *s, tl_node *holder) {
  if (!holder->name || strncmp(holder->name, "Self::", 6) || !s->self_ty) return;
  char b[512];
  tl_ty_name(s->self_ty, b, sizeof b);
  char *out = tl_arena_alloc(s->arena, strlen(b) + strlen(holder->name));
  if (!out) return;
  sprintf(out, "%s%s", b, holder->name + 4);
  holder->name = out;
}

/* `Stack::new()`, `Stack::<i64>::new()`: the instance of Stack from the turbofish, the
 * expected type, or the arguments; the path becomes `Stack<i64>::new` */
static bool owner_call(sema *s, tl_node *n, gen_tmpl *g, const char *method, tl_ty *expect, tl_fninfo **f) {
  *f = NULL;
  tl_ty *bind[64] = {0};
  tl_node *from[64] = {0};
  if (g->n > 64) return true;
  const tl_type *tf = n->lhs->type;
  if (tf && tf->rank == 0) {
    if (!explicit_args(s, tf, g->name, g->n, bind)) return true;
  } else if (expect && expect->kind == TY_STRUCT && expect->st->generic_of == g->name) {
    memcpy(bind, expect->st->gargs, sizeof *bind * (size_t)g->n);
  } else {
    tl_fn *m = NULL;
    const tl_tparam *tps = NULL;
    for (gen_impl *i = g->impls; i && !m; i = i->next)
      for (tl_fn *x = i->it->methods; x && !m; x = x->next)
        if (!strcmp(x->name, method)) m = x, tps = i->it->tparams;
    if (!m) {
      tl_sema_error(s, n->lhs, "no function `%s` in `impl<..> %s<..>`", method, g->name);
      tl_sema_check_rest(s, n->args);
      return true;
    }
    if (!infer_from_args(s, m->params, n->args, tps, bind, from, NULL, NULL)) return true;
    char fix[300];
    snprintf(fix, sizeof fix, "write the type: `%s::<i64%s>::%s(..)`, or give the variable a type", g->name, g->n > 1 ? ", .." : "", method);
    if (!all_bound(s, n->lhs, g->tparams, bind, g->name, fix)) return true;
  }
  tl_struct_info *st = sema_gen_struct(s, g, bind, n->lhs->line, n->lhs->col);
  if (!st) return true;
  char *path = tl_arena_alloc(s->arena, strlen(st->name) + strlen(method) + 3);
  if (!path) return true;
  sprintf(path, "%s::%s", st->name, method);
  n->lhs->name = path;
  n->lhs->type = NULL;
  *f = tl_sema_find_fn(s, path);
  if (!*f) {
    tl_sema_error(s, n->lhs, "no function `%s`", path);
    tl_sema_check_rest(s, n->args);
  }
  return true;
}

static bool find_fn_quiet(sema *s, const char *name) {
  for (tl_fninfo *f = s->out->fns; f; f = f->next)
    if (!strcmp(f->name, name)) return true;
  return false;
}

bool tl_sema_generic_call(sema *s, tl_node *n, const char *name, tl_ty *expect, tl_fninfo **f) {
  *f = NULL;
  if (n->lhs->kind == TL_N_PATH) {
    rename_self(s, n->lhs);
    name = n->lhs->name;
    const char *sep = strstr(name, "::");
    if (!sep || strstr(sep + 2, "::")) return false;
    char owner[256];
    snprintf(owner, sizeof owner, "%.*s", (int)(sep - name), name);
    gen_tmpl *g = tl_sema_gen_find(s, owner, 'd');
    return g ? owner_call(s, n, g, sep + 2, expect, f) : false;
  }
  gen_tmpl *g = tl_sema_gen_find(s, name, 'f');
  if (!g) {
    if (n->lhs->type && find_fn_quiet(s, name)) /* else it is not found, said later */
      tl_sema_error(s, n->lhs, "`%s` is not a generic function: it takes no type arguments", name);
    n->lhs->type = NULL;
    return false;
  }
  if (g->broken) { /* its own errors were said; the call's written types are checked still */
    for (const tl_type *e = n->lhs->type ? n->lhs->type->elems : NULL; e; e = e->next) tl_sema_resolve_type(s, e);
    tl_sema_check_rest(s, n->args);
    return true;
  }
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", name);
    return true;
  }
  tl_ty *bind[64] = {0};
  tl_node *from[64] = {0};
  if (g->n > 64) return true;
  int want = 0, got = tl_ast_count(n->args);
  for (const tl_param *p = g->fn->params; p; p = p->next) want++;
  if (got != want) {
    tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", name, want, want == 1 ? "" : "s", got);
    tl_sema_check_rest(s, n->args);
    return true;
  }
  if (n->lhs->type) {
    if (!explicit_args(s, n->lhs->type, name, g->n, bind)) {
      tl_sema_check_rest(s, n->args);
      return true;
    }
  } else {
    if (!infer_from_args(s, g->fn->params, n->args, g->tparams, bind, from, g->fn->ret, expect)) return true;
    char fix[300];
    snprintf(fix, sizeof fix, "give it with a turbofish: `%s::<i64>(..)`", name);
    if (!all_bound(s, n->lhs, g->tparams, bind, name, fix)) return true;
  }
  if (!check_bounds(s, n, name, g->tparams, bind, from)) return true;
  *f = fn_instance(s, g->fn, NULL, g->tparams, bind, g->n, n);
  return true;
}

/* `Stack<i64>::push`: a method of a generic impl, made for that instance on first use */
tl_fninfo *tl_sema_generic_find_fn(sema *s, const char *name) {
  const char *sep = NULL;
  for (const char *p = strstr(name, "::"); p; p = strstr(p + 2, "::")) sep = p;
  if (!sep || !s->gen) return NULL;
  char owner[1024];
  snprintf(owner, sizeof owner, "%.*s", (int)(sep - name), name);
  tl_struct_info *st = tl_sema_find_struct(s, owner);
  if (!st || !st->generic_of || st->partial) return NULL;
  gen_tmpl *g = tl_sema_gen_find(s, st->generic_of, 'd');
  for (gen_impl *i = g ? g->impls : NULL; i; i = i->next)
    for (tl_fn *m = i->it->methods; m; m = m->next)
      if (!strcmp(m->name, sep + 2) && !m->broken && !m->tparams)
        return fn_instance(s, m, st, i->it->tparams, st->gargs, st->ngargs, NULL);
  return NULL;
}

/* ---- literals, values and patterns naming a generic struct or enum ---- */

static const tl_variant *find_variant(const tl_ast_item *it, const char *name) {
  for (const tl_variant *v = it->variants; v; v = v->next)
    if (!strcmp(v->name, name)) return v;
  return NULL;
}

static const tl_field *find_field(const tl_field *f, const char *name) {
  for (; f; f = f->next)
    if (!strcmp(f->name, name)) return f;
  return NULL;
}

/* binds from `{ a: x, b: y }` or positional `(x, y)` against the written fields */
static bool infer_fields(sema *s, tl_node *args, const tl_field *fields, bool named, const tl_tparam *tps, tl_ty **bind) {
  bool ok = true;
  tl_node *from[64] = {0};
  for (int round = 0; round < 2; round++) {
    const tl_field *f = fields;
    for (tl_node *a = args; a; a = a->next) {
      const tl_field *fd = named ? (a->kind == TL_N_FIELD_INIT ? find_field(fields, a->name) : NULL) : f;
      if (!named && f) f = f->next;
      if (!fd) continue; /* an unknown or extra field: the instance's check reports it */
      tl_node *x = a->kind == TL_N_FIELD_INIT ? a->lhs : a;
      if (late(s, x) != (round == 1)) continue;
      tl_ty *t = tl_sema_expr_hint(s, x, round ? bound_type(s, fd->type, tps, bind) : NULL);
      if (t->kind == TY_ERROR) ok = false;
      else if (!sema_gen_unify(s, fd->type, t, tps, bind, from, x)) ok = false;
    }
  }
  return ok;
}

static bool rename_to(sema *s, tl_node *holder, tl_struct_info *st, const char *rest) {
  if (!st) return false;
  char *out = tl_arena_alloc(s->arena, strlen(st->name) + strlen(rest) + 1);
  if (!out) return false;
  sprintf(out, "%s%s", st->name, rest);
  holder->name = out;
  holder->type = NULL;
  return true;
}

bool tl_sema_generic_rename(sema *s, tl_node *n, tl_ty *expect) {
  bool call = n->kind == TL_N_CALL;
  if (call && n->lhs->kind != TL_N_PATH) return true;
  if (n->kind != TL_N_PATH && n->kind != TL_N_STRUCT_LIT && !call) return true;
  tl_node *holder = call ? n->lhs : n;
  if (!holder->name) return true;
  if (n->kind == TL_N_STRUCT_LIT && !strcmp(holder->name, "Self") && s->self_ty && s->self_ty->kind == TY_STRUCT) {
    holder->name = s->self_ty->st->name;
    return true;
  }
  rename_self(s, holder);
  if (!s->gen) return true;
  const char *sep = strstr(holder->name, "::");
  char name[256];
  snprintf(name, sizeof name, "%.*s", sep ? (int)(sep - holder->name) : (int)strlen(holder->name), holder->name);
  gen_tmpl *g = tl_sema_gen_find(s, name, sep ? 'e' : 's');
  if (!g || (call && !sep)) return true;
  const tl_variant *v = sep ? find_variant(g->it, sep + 2) : NULL;
  if (sep && !v) {
    if (call && !sep[2]) return true;
    if (call) { /* maybe `Tree::new(..)`: an associated fn (tl_sema_generic_call) */
      for (gen_impl *i = g->impls; i; i = i->next)
        for (tl_fn *m = i->it->methods; m; m = m->next)
          if (!strcmp(m->name, sep + 2)) return true;
    }
    tl_sema_error(s, n, "no variant `%s` in enum `%s`", sep + 2, g->name);
    tl_suggest near;
    tl_suggest_init(&near, sep + 2);
    for (const tl_variant *w = g->it->variants; w; w = w->next) tl_suggest_add(&near, w->name);
    tl_suggest_hint(&near, s->diag, "");
    if (call || n->kind == TL_N_STRUCT_LIT) tl_sema_check_rest(s, n->args);
    return false;
  }
  tl_ty *bind[64] = {0};
  if (g->n > 64) return false;
  if (holder->type) {
    if (!explicit_args(s, holder->type, g->name, g->n, bind)) return false;
  } else if (expect && expect->kind == TY_STRUCT && expect->st->generic_of == g->name) {
    return rename_to(s, holder, expect->st, sep ? sep : "");
  } else {
    bool named = n->kind == TL_N_STRUCT_LIT;
    if ((call || named) && !infer_fields(s, n->args, v ? v->fields : g->it->fields, named, g->tparams, bind)) return false;
    char fix[300];
    snprintf(fix, sizeof fix, "write the type: `let x: %s<i64%s> = ..;`", g->name, g->n > 1 ? ", .." : "");
    if (!all_bound(s, n, g->tparams, bind, sep ? holder->name : g->name, fix)) {
      if (call || named) tl_sema_check_rest(s, n->args);
      return false;
    }
  }
  return rename_to(s, holder, sema_gen_struct(s, g, bind, n->line, n->col), sep ? sep : "");
}

void tl_sema_generic_pattern(sema *s, tl_node *p, tl_ty *t) {
  tl_node *holder = p->kind == TL_N_CALL ? p->lhs : p;
  if (!holder->name) return;
  rename_self(s, holder);
  if (t->kind != TY_STRUCT || !t->st->generic_of) return;
  const char *sep = strstr(holder->name, "::");
  size_t len = sep ? (size_t)(sep - holder->name) : strlen(holder->name);
  if (strlen(t->st->generic_of) == len && !strncmp(t->st->generic_of, holder->name, len)) rename_to(s, holder, t->st, sep ? sep : "");
}

/* ---- errors ---- */

static size_t error_end(const tl_diag *d, int i) { return i + 1 < d->nat ? d->at[i + 1].start : d->text.len; }

/* an earlier error that begins with error i's text (it may end with its instance's name) */
static bool said_before(const tl_diag *d, int i, int first) {
  size_t a = d->at[i].start, n = error_end(d, i) - a;
  for (int k = 0; k < first; k++)
    if (error_end(d, k) - d->at[k].start >= n && !memcmp(d->text.data + d->at[k].start, d->text.data + a, n)) return true;
  return false;
}

void tl_sema_generic_dedupe(sema *s, int first, const char *instance) {
  tl_diag *d = s->diag;
  if (first >= d->nat || !d->text.data) return;
  size_t base = d->at[first].start, len = d->text.len - base;
  char *tail = malloc(len + 1);
  if (!tail) return;
  memcpy(tail, d->text.data + base, len);
  int n = d->nat, kept = first;
  struct tl_diag_at *at = malloc(sizeof *at * (size_t)n);
  if (!at) {
    free(tail);
    return;
  }
  memcpy(at, d->at, sizeof *at * (size_t)n);
  bool *drop = calloc((size_t)n, 1);
  for (int i = first; drop && i < n; i++) drop[i] = said_before(d, i, first);
  d->text.len = base; /* the new errors again, each once and with its instance's name */
  d->text.data[base] = '\0';
  d->nat = first;
  for (int i = first; drop && i < n; i++) {
    if (drop[i]) continue;
    size_t a = at[i].start - base, e = (i + 1 < n ? at[i + 1].start : base + len) - base;
    d->at[kept] = at[i];
    d->at[kept++].start = d->text.len;
    tl_strbuf_printf(&d->text, "%.*s", (int)(e - a), tail + a);
    if (strlen(instance) <= 100) tl_strbuf_printf(&d->text, "  note: in `%s`\n", instance); /* a readable name only */
  }
  d->errors -= n - kept;
  d->nat = kept;
  free(drop);
  free(at);
  free(tail);
}

/* ---- generic methods ---- */

/* the generic method `name` of st's impls: a generic struct's `impl<T>`, or a plain
 * struct's impl (found in the program's items) */
static tl_fn *generic_method(sema *s, tl_struct_info *st, const char *name, const tl_tparam **impl_tps) {
  *impl_tps = NULL;
  if (st->generic_of) {
    gen_tmpl *g = tl_sema_gen_find(s, st->generic_of, 'd');
    for (gen_impl *i = g ? g->impls : NULL; i; i = i->next)
      for (tl_fn *m = i->it->methods; m; m = m->next)
        if (m->tparams && !strcmp(m->name, name)) return *impl_tps = i->it->tparams, m;
    return NULL;
  }
  for (gen_impl *i = s->gen ? s->gen->plain : NULL; i; i = i->next)
    if (!strcmp(i->it->name, st->name))
      for (tl_fn *m = i->it->methods; m; m = m->next)
        if (m->tparams && !strcmp(m->name, name)) return m;
  return NULL;
}

static void sema_generic_plain_impl(sema *s, tl_ast_item *it) {
  bool any = false;
  for (tl_fn *m = it->methods; m; m = m->next) any |= m->tparams != NULL;
  sema_gen *g = tl_sema_gen_of(s);
  gen_impl *gi = any && g ? tl_arena_alloc(s->arena, sizeof *gi) : NULL;
  if (!gi) return;
  gi->it = it;
  gi->next = g->plain;
  g->plain = gi;
}

bool tl_sema_generic_method(sema *s, tl_node *n, tl_struct_info *st, tl_fninfo **f) {
  *f = NULL;
  const tl_tparam *itps;
  tl_fn *m = s->gen ? generic_method(s, st, n->name, &itps) : NULL;
  if (!m) return false;
  if (m->broken) {
    tl_sema_check_rest(s, n->args);
    return true;
  }
  int nm = count_tparams(m->tparams), ni = st->ngargs, want = 0;
  tl_ty *bind[64] = {0};
  tl_node *from[64] = {0};
  if (nm + ni > 64) return true;
  const tl_param *ps = m->params && m->params->is_self ? m->params->next : m->params;
  for (const tl_param *p = ps; p; p = p->next) want++;
  if (tl_ast_count(n->args) != want) {
    tl_sema_error(s, n, "`%s` takes %d argument%s, not %d", n->name, want, want == 1 ? "" : "s", tl_ast_count(n->args));
    tl_sema_check_rest(s, n->args);
    return true;
  }
  /* the impl's parameters are bound by the receiver: the method's are inferred here */
  sema_tyenv *saved = s->env;
  if (ni) s->env = tl_sema_gen_env(s, itps, st->gargs, ni, NULL, NULL);
  bool ok = infer_from_args(s, ps, n->args, m->tparams, bind, from, NULL, NULL);
  s->env = saved;
  if (!ok) return true;
  char fix[300];
  snprintf(fix, sizeof fix, "the arguments must give every type parameter of `%s`", n->name);
  if (!all_bound(s, n, m->tparams, bind, n->name, fix) || !check_bounds(s, n, n->name, m->tparams, bind, from)) return true;
  /* one parameter list: the impl's, then the method's */
  tl_tparam *all = NULL, **tail = &all;
  tl_ty *args[64];
  int k = 0;
  for (const tl_tparam *p = itps; p && k < ni; p = p->next, k++) {
    tl_tparam *c = tl_arena_alloc(s->arena, sizeof *c);
    if (!c) return true;
    *c = *p;
    c->next = NULL;
    *tail = c;
    tail = &c->next;
    args[k] = st->gargs[k];
  }
  *tail = m->tparams;
  for (int i = 0; i < nm; i++) args[ni + i] = bind[i];
  *f = fn_instance(s, m, st, all, args, ni + nm, n);
  return true;
}
