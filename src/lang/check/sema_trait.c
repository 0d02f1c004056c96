/* sema_trait.c — traits in the checker (LANGUAGE.md §11): in: `trait Shape { fn area(&self)
 * -> f64; fn describe(&self) -> String { .. } }`, `impl Shape for Circle { .. }` (a
 * struct, an enum or a builtin type such as i64) and the bounds `T: Shape + Ord` of
 * generic fns; out: the impl's methods declared as the type's own (`Circle::area`,
 * `i64::area`), each default method it does not override declared for it from a fresh
 * copy of the trait's body, and the errors of traits. Dispatch is static only: a call
 * `x.area()` names one function, found by x's type (no `dyn`, LANGUAGE.md §12). Bounds
 * are checked at the definition (the methods called on a value of a type parameter are
 * its bounds') and at each use (the type arguments implement the bounds). */
#include "lang/check/sema_generic.h"

#include <stdio.h>
#include <string.h>

/* a float anywhere in t (a tuple's or a Vec's elements): no total order, NaN != NaN */
static bool has_float(const tl_ty *t) {
  if (tl_ty_is_float(t)) return true;
  if (tl_ty_is_vec(t)) return t->st->targs[0] && has_float(t->st->targs[0]);
  if (!tl_ty_is_tuple(t)) return false;
  for (int i = 0; i < t->st->nfields; i++)
    if (has_float(t->st->fields[i].ty)) return true;
  return false;
}

/* does `==` compare two values of type t (sema.c's binary operators)? */
static bool has_eq(const tl_ty *t) {
  if (tl_ty_is_numeric(t) || t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_STR) return true;
  if (tl_ty_is_tuple(t)) return tl_sema_tuple_eq_ok(t);
  if (tl_ty_is_vec(t)) return tl_sema_vec_eq_ok(t);
  return t->kind == TY_STRUCT && t->st->is_enum && t->st->nfields == 0; /* a field-less enum's tags */
}

/* Rust's traits that TL's builtin types have (no methods to call: the operators). The
 * comparison traits are where the operators are: PartialEq where `==` compares,
 * PartialOrd where `<` does; Eq and Ord as those, but not on floats (as in Rust: NaN) */
static bool builtin_satisfies(const tl_ty *t, const char *trait, bool *known) {
  *known = true;
  bool ord = tl_ty_is_numeric(t) || t->kind == TY_BOOL || t->kind == TY_CHAR || t->kind == TY_STR; /* `<` */
  if (!strcmp(trait, "PartialOrd")) return ord;
  if (!strcmp(trait, "Ord")) return ord && !has_float(t);
  if (!strcmp(trait, "PartialEq")) return has_eq(t);
  if (!strcmp(trait, "Eq")) return has_eq(t) && !has_float(t);
  if (!strcmp(trait, "Copy")) return tl_ty_is_numeric(t) || t->kind == TY_CHAR || t->kind == TY_BOOL;
  if (!strcmp(trait, "Clone") || !strcmp(trait, "Debug") || !strcmp(trait, "Display")) return true;
  *known = false;
  return false;
}

static trait_impl *find_impl(sema *s, gen_tmpl *tr, const tl_ty *t) {
  for (trait_impl *i = tl_sema_gen_of(s)->impls; i; i = i->next)
    if (i->trait == tr && tl_sema_ty_same(i->self, t)) return i;
  return NULL;
}

bool tl_sema_trait_satisfies(sema *s, tl_ty *t, const char *trait) {
  if (t->kind == TY_ERROR) return true;
  gen_tmpl *tr = tl_sema_gen_find(s, trait, 't');
  if (tr) return find_impl(s, tr, t) != NULL;
  bool known;
  bool ok = builtin_satisfies(t, trait, &known);
  return ok || !known; /* an unknown trait was reported at the bound */
}

void tl_sema_trait_hint(sema *s, const tl_ty *t, const char *trait, const char *tparam, const char *fn) {
  if (has_float(t) && (!strcmp(trait, "Ord") || !strcmp(trait, "Eq"))) {
    tl_diag_hint(s->diag, "required by the bound `%s: %s` of `%s`; floats are `Partial%s`, not `%s` (%s): write `%s: Partial%s`", tparam,
                 trait, fn, trait, trait, trait[0] == 'O' ? "a NaN is unordered" : "a NaN is not equal to itself", tparam, trait);
    return;
  }
  gen_tmpl *tr = tl_sema_gen_find(s, trait, 't');
  char list[512] = "", b[128];
  size_t len = 0;
  int n = 0;
  for (trait_impl *i = tr ? tl_sema_gen_of(s)->impls : NULL; i && len < sizeof list; i = i->next)
    if (i->trait == tr) len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", n++ ? ", " : "", tl_ty_name(i->self, b, sizeof b));
  if (n) tl_diag_hint(s->diag, "required by the bound `%s: %s` of `%s`; `%s` is implemented for %s", tparam, trait, fn, trait, list);
  else tl_diag_hint(s->diag, "required by the bound `%s: %s` of `%s`", tparam, trait, fn);
}

static bool known_trait(sema *s, const char *name) {
  bool known;
  tl_ty unit = {.kind = TY_UNIT};
  builtin_satisfies(&unit, name, &known);
  return known || tl_sema_gen_find(s, name, 't');
}

/* "cannot find trait": the closest builtin or declared trait, else how to declare it */
static void unknown_trait(sema *s, const char *name, int line, int col) {
  static const char *const builtin[] = {"PartialOrd", "Ord", "PartialEq", "Eq", "Copy", "Clone", "Debug", "Display"};
  tl_diag_error(s->diag, line, col, "cannot find trait `%s` in this scope", name);
  tl_suggest g;
  tl_suggest_init(&g, name);
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) tl_suggest_add(&g, builtin[i]);
  for (gen_tmpl *t = tl_sema_gen_of(s)->tmpls; t; t = t->next)
    if (t->kind == 't') tl_suggest_add(&g, t->name);
  if (g.best) tl_suggest_hint(&g, s->diag, "");
  else tl_diag_hint(s->diag, "declare it: `trait %s { .. }`", name);
}

static tl_fn *trait_method(gen_tmpl *tr, const char *name) {
  for (tl_fn *m = tr->it->methods; m; m = m->next)
    if (!strcmp(m->name, name)) return m;
  return NULL;
}

/* ---- a generic fn's bounds at its definition ---- */

typedef struct {
  sema *s;
  gen_tmpl *g;
} def_check;

/* the type parameter a value named `name` has (a parameter written `x: T`), or NULL */
static const tl_tparam *param_tparam(gen_tmpl *g, const char *name) {
  for (const tl_param *p = g->fn->params; p; p = p->next)
    if (p->type && !p->type->elems && !p->type->is_tuple && !strcmp(p->name, name))
      for (const tl_tparam *t = g->tparams; t; t = t->next)
        if (!strcmp(t->name, p->type->name)) return t;
  return NULL;
}

static bool check_method_on_tparam(tl_node *n, void *arg) {
  def_check *d = arg;
  if (n->kind != TL_N_METHOD || !n->lhs || n->lhs->kind != TL_N_IDENT) return false;
  const tl_tparam *tp = param_tparam(d->g, n->lhs->name);
  if (!tp) return false;
  for (const tl_type *b = tp->bounds; b; b = b->next) {
    gen_tmpl *tr = tl_sema_gen_find(d->s, b->name, 't');
    if (tr && trait_method(tr, n->name)) return false;
  }
  tl_sema_error(d->s, n, "no method named `%s` found for type parameter `%s`", n->name, tp->name);
  gen_tmpl *has = NULL;
  for (gen_tmpl *t = tl_sema_gen_of(d->s)->tmpls; t && !has; t = t->next)
    if (t->kind == 't' && trait_method(t, n->name)) has = t;
  if (has) tl_diag_hint(d->s->diag, "add a bound: `%s: %s`", tp->name, has->name);
  else tl_diag_hint(d->s->diag, "the methods of a type parameter are those of its bounds' traits");
  d->g->broken = true;
  return false;
}

void tl_sema_trait_check_generic(sema *s, gen_tmpl *g) {
  for (const tl_tparam *p = g->tparams; p; p = p->next)
    for (const tl_type *b = p->bounds; b; b = b->next)
      if (!known_trait(s, b->name)) {
        unknown_trait(s, b->name, b->line, b->col);
        g->broken = true;
      }
  if (g->broken || g->fn->broken || !g->fn->body) return;
  def_check d = {s, g};
  tl_ast_find(g->fn->body, check_method_on_tparam, &d);
}

/* ---- impl Trait for T ---- */

static int count_params(const tl_fn *f, bool *self) {
  int n = 0;
  *self = f->params && f->params->is_self;
  for (const tl_param *p = f->params; p; p = p->next) n++;
  return n - (*self ? 1 : 0);
}

/* the impl's method agrees with the trait's: receiver and number of parameters */
static bool same_shape(sema *s, tl_fn *m, tl_fn *tm, const char *trait) {
  bool ms, ts;
  int mn = count_params(m, &ms), tn = count_params(tm, &ts);
  if (ms != ts) {
    tl_diag_error(s->diag, m->line, m->col, ts ? "method `%s` has a `self` receiver in trait `%s`, but not in the impl"
                                               : "method `%s` has no `self` receiver in trait `%s`, but the impl has one",
                  m->name, trait);
    return false;
  }
  if (mn != tn) {
    tl_diag_error(s->diag, m->line, m->col, "method `%s` has %d parameter%s but the declaration in trait `%s` has %d", m->name, mn,
                  mn == 1 ? "" : "s", trait, tn);
    tl_diag_hint(s->diag, "take the parameters the trait's `%s` takes (line %d)", m->name, tm->line);
    return false;
  }
  return true;
}

/* `Self::Output` in an impl's method (or a trait's, checked for an impl): the type the
 * impl binds with `type Output = V;` */
tl_ty *tl_sema_assoc_type(sema *s, const tl_type *t) {
  const char *name = t->name + 6;
  for (const tl_type *a = s->assoc; a; a = a->next)
    if (!strcmp(a->name, name) && a->elems) return tl_sema_resolve_type(s, a->elems);
  tl_diag_error(s->diag, t->line, t->col, "associated type `%s` not found for `Self`", name);
  tl_diag_hint(s->diag, "an impl of a trait binds it: `type %s = i64;`", name);
  return TY_ERR;
}

/* the impl binds each associated type its trait declares, and no other */
static void check_assoc(sema *s, tl_ast_item *it, gen_tmpl *tr) {
  for (const tl_type *a = it->assoc; a; a = a->next) {
    const tl_type *d = tr->it->assoc;
    while (d && strcmp(d->name, a->name)) d = d->next;
    if (!d) tl_diag_error(s->diag, a->line, a->col, "type `%s` is not a member of trait `%s`", a->name, tr->name);
    else if (!a->elems) tl_diag_error(s->diag, a->line, a->col, "associated type `%s` needs its type here: `type %s = i64;`", a->name, a->name);
    for (const tl_type *b = it->assoc; b != a; b = b->next)
      if (!strcmp(b->name, a->name)) tl_diag_error(s->diag, a->line, a->col, "associated type `%s` is bound twice", a->name);
  }
  for (const tl_type *d = tr->it->assoc; d; d = d->next) {
    const tl_type *a = it->assoc;
    while (a && strcmp(a->name, d->name)) a = a->next;
    if (!a) {
      tl_diag_error(s->diag, it->line, it->col, "not all trait items implemented, missing: `%s`", d->name);
      tl_diag_hint(s->diag, "`%s` declares `type %s;`: the impl binds it, `type %s = i64;`", tr->name, d->name, d->name);
    }
  }
}

/* a written type with `Self` the impl's type, or NULL when it does not resolve (its
 * declaration says why) */
static tl_ty *quiet_type(sema *s, const tl_type *t, tl_ty *self, const tl_type *assoc) {
  if (!t) return TY_UNIT_T;
  tl_diag *d = s->diag;
  int errors = d->errors, nat = d->nat;
  size_t len = d->text.len;
  tl_ty *saved = s->self_ty;
  const tl_type *saved_assoc = s->assoc;
  s->self_ty = self;
  s->assoc = assoc;
  tl_ty *r = tl_sema_resolve_type(s, t);
  s->self_ty = saved;
  s->assoc = saved_assoc;
  if (d->errors == errors) return r;
  d->errors = errors;
  d->nat = nat;
  d->text.len = len;
  if (d->text.data) d->text.data[len] = '\0';
  return NULL;
}

/* the impl's method has the trait's types, `Self` being the impl's type */
static bool same_types(sema *s, tl_fn *m, tl_fn *tm, const char *trait, tl_ty *self) {
  const tl_param *p = m->params, *q = tm->params;
  const tl_type *mt = m->ret, *tt = tm->ret;
  for (int i = -1; i == -1 || (p && q); i++) {
    if (i >= 0) {
      mt = p->type, tt = q->type;
      p = p->next, q = q->next;
      if (!mt || !tt) continue; /* self */
    }
    tl_ty *a = quiet_type(s, mt, self, m->assoc), *b = quiet_type(s, tt, self, m->assoc); /* the impl's `Self::Output` */
    if (!a || !b || tl_sema_ty_same(a, b)) continue;
    char x[128], y[128];
    tl_diag_error(s->diag, m->line, m->col, "method `%s` has an incompatible type for trait `%s`: expected %s %s, found %s", m->name,
                  trait, i < 0 ? "result" : "parameter", tl_ty_name(b, x, sizeof x), tl_ty_name(a, y, sizeof y));
    tl_diag_hint(s->diag, "write the trait's signature (line %d), `Self` for the type implementing it", tm->line);
    return false;
  }
  return true;
}

static void declare_for(sema *s, tl_fn *m, tl_struct_info *st, sema_tyenv *env) {
  sema_tyenv *saved = s->env;
  s->env = env;
  tl_fninfo *f = tl_sema_declare_fn(s, m, st);
  s->env = saved;
  if (!f) return;
  f->env = env;
  if (strpbrk(f->name, "<>(), ")) f->cname = tl_sema_gen_cname(s, f->name); /* `(i64, i64)::describe` */
}

/* the impl's methods (those reported wrong are known by name only) and the defaults it
 * does not override, declared for st (or env's owner); a generic impl's are copies made
 * for each instance, with env binding its type parameters */
static void declare_impl(sema *s, tl_ast_item *it, gen_tmpl *tr, tl_struct_info *st, sema_tyenv *env, bool generic) {
  for (tl_fn *m = it->methods; m; m = m->next)
    if (trait_method(tr, m->name)) declare_for(s, generic ? tl_sema_gen_clone_fn(s, m, env) : m, st, env);
  for (tl_fn *tm = tr->it->methods; tm; tm = tm->next) {
    bool given = false;
    for (tl_fn *m = it->methods; m; m = m->next) given |= !strcmp(m->name, tm->name);
    if (given) continue;
    tl_fn *c = tl_sema_gen_clone_fn(s, tm, env);
    if (!c) return;
    c->assoc = it->assoc; /* a default's `Self::Output` is this impl's */
    if (!tm->body) c->partial = c->broken = true; /* reported: known by name, so its calls are not errors too */
    declare_for(s, c, st, env); /* a default: checked for this type */
  }
}

/* the impl's methods are the trait's, with its receiver and parameter count (and types,
 * self known); what is missing */
static void check_impl(sema *s, tl_ast_item *it, gen_tmpl *tr, tl_ty *self) {
  check_assoc(s, it, tr);
  for (tl_fn *m = it->methods; m; m = m->next) {
    tl_fn *tm = trait_method(tr, m->name);
    if (!tm) {
      tl_diag_error(s->diag, m->line, m->col, "method `%s` is not a member of trait `%s`", m->name, tr->name);
      tl_diag_hint(s->diag, "move it to an `impl %s { .. }` of its own, or declare it in the trait", it->name);
      continue;
    }
    if (!m->partial && !(same_shape(s, m, tm, tr->name) && (!self || same_types(s, m, tm, tr->name, self))))
      m->partial = m->broken = true; /* reported: known by name, so its calls are not errors too */
  }
  char missing[512] = "";
  size_t len = 0;
  for (tl_fn *tm = tr->it->methods; tm; tm = tm->next) {
    bool given = false;
    for (tl_fn *m = it->methods; m; m = m->next) given |= !strcmp(m->name, tm->name);
    if (!given && !tm->body && len < sizeof missing)
      len += (size_t)snprintf(missing + len, sizeof missing - len, "%s`%s`", len ? ", " : "", tm->name);
  }
  if (len) {
    tl_diag_error(s->diag, it->line, it->col, "not all trait items implemented, missing: %s", missing);
    tl_diag_hint(s->diag, "`%s` declares them without a body: the impl must give them", tr->name);
  }
}

/* one impl per trait and type; false after a conflict */
static bool record_impl(sema *s, gen_tmpl *tr, tl_ty *self, int line, int col) {
  trait_impl *prev = find_impl(s, tr, self);
  if (prev) {
    char b[128];
    tl_diag_error(s->diag, line, col, "conflicting implementations of trait `%s` for type `%s`", tr->name, tl_ty_name(self, b, sizeof b));
    tl_diag_hint(s->diag, "the first is at line %d: a type implements a trait once", prev->line);
    return false;
  }
  trait_impl *ti = tl_arena_alloc(s->arena, sizeof *ti);
  if (!ti) return false;
  *ti = (trait_impl){.trait = tr, .self = self, .line = line, .next = tl_sema_gen_of(s)->impls};
  tl_sema_gen_of(s)->impls = ti;
  return true;
}

/* `impl<T: Shape> Shape for Boxed<T>` for the instance st, when its type arguments
 * meet the impl's bounds (else the impl does not apply to it) */
static void apply_generic(sema *s, tl_ast_item *it, gen_tmpl *tr, tl_struct_info *st) {
  if (st->partial) return;
  int i = 0;
  for (const tl_tparam *p = it->tparams; p; p = p->next, i++)
    for (const tl_type *b = p->bounds; b; b = b->next)
      if (i >= st->ngargs || !tl_sema_trait_satisfies(s, st->gargs[i], b->name)) return;
  tl_ty *self = tl_sema_struct_ty(s, st);
  if (!record_impl(s, tr, self, it->line, it->col)) return;
  sema_tyenv *env = tl_sema_gen_env(s, it->tparams, st->gargs, st->ngargs, self, NULL);
  sema_tyenv *saved = s->env;
  s->env = NULL; /* the instance is not made from the function being checked */
  env->depth = saved ? saved->depth + 1 : 0;
  declare_impl(s, it, tr, st, env, true);
  s->env = saved;
}

void tl_sema_trait_instance(sema *s, gen_tmpl *g, tl_struct_info *st) {
  for (gen_impl *i = g->trait_impls; i; i = i->next) {
    gen_tmpl *tr = tl_sema_gen_find(s, i->it->trait, 't');
    if (tr) apply_generic(s, i->it, tr, st);
  }
}

/* `impl<T> Shape for Boxed<T>`: checked once, declared for each instance of Boxed,
 * those made already and those to come */
static void generic_trait_impl(sema *s, tl_ast_item *it, gen_tmpl *tr) {
  gen_tmpl *g = tl_sema_gen_find(s, it->name, 'd');
  if (!g || !tl_sema_gen_impl_params(s, it, g)) {
    if (!g) tl_diag_error(s->diag, it->line, it->col, "`impl` of unknown generic type `%s`", it->name);
    return;
  }
  check_impl(s, it, tr, NULL);
  gen_impl *gi = tl_arena_alloc(s->arena, sizeof *gi);
  if (!gi) return;
  gi->it = it;
  gen_impl **tail = &g->trait_impls;
  while (*tail) tail = &(*tail)->next;
  *tail = gi;
  for (tl_struct_info *st = s->out->structs; st; st = st->next)
    if (st->generic_of == g->name) apply_generic(s, it, tr, st);
}

/* Rust's operator and formatting traits, which a program implements without declaring
 * them: `impl Add for V { fn add(self, o: V) -> V }` gives V the method, and the
 * operator calls it (sema.c); `to_string` or `fmt` of a Display impl prints `{}` */
static bool std_trait(const char *name) {
  static const char *const names[] = {"Add", "Sub", "Mul", "Div", "Rem", "Neg", "Not", "PartialEq", "Eq", "PartialOrd", "Ord",
                                      "Display", "Debug", "Clone", "Copy", "Default", "Index", "Hash"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i])) return true;
  return false;
}

void tl_sema_trait_impl(sema *s, tl_ast_item *it) {
  gen_tmpl *tr = tl_sema_gen_find(s, it->trait, 't');
  if (!tr && std_trait(it->trait) && !it->tparams) { /* the methods become the type's own */
    tl_ty *self = tl_sema_resolve_type(s, it->self_type);
    if (self->kind == TY_ERROR) return;
    if (self->kind != TY_STRUCT || self->st->generic || self->st->is_tuple) {
      char b[128];
      tl_diag_error(s->diag, it->self_type->line, it->self_type->col, "`impl %s` is for a struct or an enum of the program, not %s",
                    it->trait, tl_ty_name(self, b, sizeof b));
      return;
    }
    for (tl_fn *m = it->methods; m; m = m->next) declare_for(s, m, self->st, NULL);
    if (!strcmp(it->trait, "Display") && !self->st->is_enum) { /* the seed's form: `fn to_string(&self) -> String` */
      char full[300];
      snprintf(full, sizeof full, "%s::to_string", self->st->name);
      tl_fninfo *f = tl_sema_find_fn(s, full);
      if (f && f->self && !f->partial && f->nparams == 0 && f->ret->kind == TY_STR && f->params[0]->kind == VAR_PARAM)
        self->st->display = f;
      else if (!f) {
        tl_diag_error(s->diag, it->line, it->col, "`impl Display` here needs `fn to_string(&self) -> String`");
        tl_diag_hint(s->diag, "`{}` prints what it returns (Rust's `fmt` with `write!` is not there yet)");
      }
    }
    return;
  }
  if (!tr) {
    unknown_trait(s, it->trait, it->line, it->col);
    return;
  }
  if (it->tparams) {
    generic_trait_impl(s, it, tr);
    return;
  }
  tl_ty *self = tl_sema_resolve_type(s, it->self_type);
  if (self->kind == TY_ERROR) return;
  if (self->kind == TY_TENSOR || self->kind == TY_UNIT || self->kind == TY_RANGE) {
    char b[128];
    tl_diag_error(s->diag, it->self_type->line, it->self_type->col, "a trait cannot be implemented for %s", tl_ty_name(self, b, sizeof b));
    return;
  }
  if (!record_impl(s, tr, self, it->line, it->col)) return;
  tl_struct_info *st = self->kind == TY_STRUCT ? self->st : NULL;
  sema_tyenv *env = NULL;
  if (!st) {
    char b[128];
    tl_ty_name(self, b, sizeof b);
    char *owner = tl_arena_alloc(s->arena, strlen(b) + 1);
    if (!owner) return;
    strcpy(owner, b);
    env = tl_sema_gen_env(s, NULL, NULL, 0, self, owner);
  }
  check_impl(s, it, tr, self);
  declare_impl(s, it, tr, st, env, false);
}

tl_fninfo *tl_sema_trait_method(sema *s, tl_ty *t, const char *name) {
  if (t->kind == TY_STRUCT || t->kind == TY_ERROR || !s->gen) return NULL;
  char b[128], full[300];
  snprintf(full, sizeof full, "%s::%s", tl_ty_name(t, b, sizeof b), name);
  tl_fninfo *f = tl_sema_find_fn(s, full);
  return f && (f->self || f->partial) ? f : NULL;
}
