/* sema_dyn.c — `dyn Trait` and `Box<T>` in the checker (LANGUAGE.md §11): in: the type
 * `dyn Shape` (`Box<dyn Shape>`, `Vec<Box<dyn Shape>>`), a value of a type that
 * implements Shape where a `dyn Shape` is expected (or `x as dyn Shape`), a method call
 * on a `dyn Shape`; out: an enum made for the trait, named "dyn Shape", with one
 * variant per struct or enum of the program that has a non-generic `impl Shape for T`
 * (the whole program is checked at once, so the set is closed); the value wrapped in
 * its type's variant; the call made a `match` over the variants, each arm calling its
 * type's own method. So a `dyn` value is an enum value to every later stage: copies,
 * drops and dispatch are the enums' (a tag and a switch, no vtable). `Box<T>` is T and
 * `Box::new(x)` is x (values are handles already), unless the program has its own Box. */
#include "lang/check/sema_impl.h"
#include "lang/check/sema_generic.h"

#include <stdio.h>
#include <string.h>

#define DYN_BINDING "self$dyn" /* the arms' binding: no program can name it */

bool tl_sema_dyn_is(const tl_ty *t) { return t && t->kind == TY_STRUCT && t->st->is_enum && !strncmp(t->st->name, "dyn ", 4); }

static bool user_box(sema *s) { return tl_sema_find_struct(s, "Box") || tl_sema_gen_find(s, "Box", 'd'); }

/* the types with `impl trait for T` written, T a struct or enum of the program */
static int impls_of(sema *s, const char *trait, tl_struct_info **out, int max) {
  int k = 0;
  for (const tl_ast_item *it = s->items; it; it = it->next) {
    if (it->kind != TL_ITEM_IMPL || !it->trait || strcmp(it->trait, trait) || it->tparams || !it->self_type ||
        it->self_type->elems)
      continue;
    tl_struct_info *st = tl_sema_find_struct(s, it->self_type->name);
    if (!st || st->generic) continue;
    bool seen = false;
    for (int i = 0; i < k; i++) seen |= out[i] == st;
    if (!seen && k < max) out[k++] = st;
  }
  return k;
}

/* the enum of `dyn trait`, made on first use */
static tl_ty *dyn_enum(sema *s, const tl_type *at, const char *trait) {
  char name[256];
  snprintf(name, sizeof name, "dyn %s", trait);
  tl_struct_info *st = tl_sema_find_struct(s, name);
  if (st) return tl_sema_struct_ty(s, st);
  if (!tl_sema_gen_find(s, trait, 't')) {
    tl_diag_error(s->diag, at->line, at->col, "cannot find trait `%s` in this scope", trait);
    tl_diag_hint(s->diag, "`dyn` names a trait of the program: `trait %s { .. }`", trait);
    return TY_ERR;
  }
  tl_struct_info *types[64];
  int k = impls_of(s, trait, types, 64);
  if (!k) {
    tl_diag_error(s->diag, at->line, at->col, "no struct or enum implements `%s`: no value could have type `dyn %s`", trait, trait);
    tl_diag_hint(s->diag, "implement it first: `impl %s for MyType { .. }`", trait);
    return TY_ERR;
  }
  st = tl_arena_alloc(s->arena, sizeof *st);
  char *sname = tl_arena_alloc(s->arena, strlen(name) + 1), *cname = tl_arena_alloc(s->arena, strlen(trait) + 9);
  if (!st || !sname || !cname) return TY_ERR;
  strcpy(sname, name);
  sprintf(cname, "tls_dyn_%s", trait);
  st->name = sname;
  st->cname = cname;
  st->is_enum = true;
  st->line = at->line, st->col = at->col;
  st->variants = tl_arena_alloc(s->arena, sizeof *st->variants * (size_t)k);
  st->fields = tl_arena_alloc(s->arena, sizeof *st->fields * (size_t)k);
  if (!st->variants || !st->fields) return TY_ERR;
  for (int i = 0; i < k; i++) {
    char *fname = tl_arena_alloc(s->arena, 16);
    if (!fname) return TY_ERR;
    sprintf(fname, "v%d_0", i);
    st->fields[i] = (tl_field_info){.name = fname, .ty = tl_sema_struct_ty(s, types[i]), .line = at->line, .col = at->col};
    st->variants[i] = (tl_variant_info){.name = types[i]->name, .tag = i, .first = i, .nfields = 1, .line = at->line,
                                        .col = at->col, .en = st};
  }
  st->nvariants = st->nfields = k;
  st->next = s->out->structs;
  s->out->structs = st;
  return tl_sema_struct_ty(s, st);
}

tl_ty *tl_sema_dyn_resolve(sema *s, const tl_type *t) {
  if (!strncmp(t->name, "dyn ", 4)) return dyn_enum(s, t, t->name + 4);
  if (!strcmp(t->name, "Box") && !user_box(s)) {
    if (!tl_sema_type_arity(s, t, 1, "`Box<T>` holds one value: `Box<dyn Shape>`")) return TY_ERR;
    return tl_sema_resolve_type(s, t->elems); /* a Box is its value: values are handles */
  }
  return NULL;
}

/* `Box::new(x)` is x: the node becomes its argument (in place, so a later pass over the
 * function sees x) */
bool tl_sema_dyn_box_new(sema *s, tl_node *n) {
  if (n->kind != TL_N_CALL || n->lhs->kind != TL_N_PATH || strcmp(n->lhs->name, "Box::new") || user_box(s) ||
      tl_sema_find_fn(s, "Box::new"))
    return false;
  if (!tl_sema_arity(s, n, "Box::new", 1)) return false;
  tl_node *next = n->next, *arg = n->args;
  *n = *arg;
  n->next = next;
  return true;
}

/* have (a struct or enum implementing the trait) where want (a dyn enum) is expected:
 * n becomes the variant holding it; the types unchanged when it does not implement it */
tl_ty *tl_sema_dyn_wrap(sema *s, tl_node *n, tl_ty *want, tl_ty *have) {
  if (!tl_sema_dyn_is(want) || have->kind != TY_STRUCT || have->st == want->st) return have;
  tl_struct_info *en = want->st;
  for (int i = 0; i < en->nvariants; i++) {
    if (en->fields[i].ty->st != have->st) continue;
    tl_node *inner = tl_arena_alloc(s->arena, sizeof *inner);
    char *path = tl_arena_alloc(s->arena, strlen(en->name) + strlen(en->variants[i].name) + 3);
    if (!inner || !path) return have;
    sprintf(path, "%s::%s", en->name, en->variants[i].name);
    *inner = *n;
    inner->next = NULL;
    inner->ty = have; /* set by tl_sema_expr after this */
    *n = (tl_node){.kind = TL_N_VARIANT, .line = n->line, .col = n->col, .next = n->next, .op = TL_TOK_LPAREN,
                   .name = path, .args = inner, .ref = &en->variants[i], .ty = want};
    return want;
  }
  return have;
}

/* `x as dyn Shape`: x wrapped as a `dyn Shape` is expected of it; the cast is then x */
tl_ty *tl_sema_dyn_cast(sema *s, tl_node *n, tl_ty *to) {
  tl_ty *t = tl_sema_expr(s, n->lhs, to);
  if (t->kind != TY_ERROR && !tl_sema_ty_fits(to, t)) {
    char a[128], b[128];
    tl_sema_error(s, n, "cannot cast %s as %s: it does not implement `%s`", tl_ty_name(t, a, sizeof a), tl_ty_name(to, b, sizeof b),
                  to->st->name + 4);
    return TY_ERR;
  }
  tl_node *next = n->next;
  *n = *n->lhs;
  n->next = next;
  return t;
}

/* `d.area(args)` on a `dyn Shape`: `match d { dyn Shape::Circle(x) => x.area(args), .. }`,
 * checked as such; NULL when it cannot be (reported) */
tl_ty *tl_sema_dyn_method(sema *s, tl_node *n, tl_ty *t, tl_ty *expect) {
  tl_struct_info *en = t->st;
  const char *trait = en->name + 4;
  gen_tmpl *tr = tl_sema_gen_find(s, trait, 't');
  tl_fn *tm = NULL;
  for (tl_fn *m = tr ? tr->it->methods : NULL; m && !tm; m = m->next)
    if (!strcmp(m->name, n->name)) tm = m;
  if (!tm || !tm->params || !tm->params->is_self) {
    tl_sema_error(s, n, "no method `%s` in trait `%s`%s", n->name, trait, tm ? " that takes `self`" : "");
    tl_diag_hint(s->diag, "a `dyn %s` value has the trait's methods only", trait);
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  if (tm->params->by_ref && tm->params->is_mut) {
    tl_sema_error(s, n, "`%s` takes `&mut self`: calling it through `dyn %s` is not supported yet", n->name, trait);
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  tl_node *recv = n->lhs, *args = n->args, head = {0}, *tail = &head;
  for (int i = 0; i < en->nvariants; i++) {
    tl_node *pat = tl_arena_alloc(s->arena, sizeof *pat), *path = tl_arena_alloc(s->arena, sizeof *path);
    tl_node *bind = tl_arena_alloc(s->arena, sizeof *bind), *call = tl_arena_alloc(s->arena, sizeof *call);
    tl_node *self = tl_arena_alloc(s->arena, sizeof *self), *arm = tl_arena_alloc(s->arena, sizeof *arm);
    char *vpath = tl_arena_alloc(s->arena, strlen(en->name) + strlen(en->variants[i].name) + 3);
    if (!pat || !path || !bind || !call || !self || !arm || !vpath) return TY_ERR;
    sprintf(vpath, "%s::%s", en->name, en->variants[i].name);
    int l = n->line, c = n->col;
    *path = (tl_node){.kind = TL_N_PATH, .line = l, .col = c, .name = vpath};
    *bind = (tl_node){.kind = TL_N_IDENT, .line = l, .col = c, .name = DYN_BINDING};
    *pat = (tl_node){.kind = TL_N_CALL, .line = l, .col = c, .lhs = path, .args = bind};
    *self = (tl_node){.kind = TL_N_IDENT, .line = l, .col = c, .name = DYN_BINDING};
    *call = (tl_node){.kind = TL_N_METHOD, .line = l, .col = c, .name = n->name, .lhs = self,
                      .args = i ? tl_sema_gen_clone_list(s, args) : args, .type = n->type};
    *arm = (tl_node){.kind = TL_N_ARM, .line = l, .col = c, .lhs = pat, .rhs = call};
    tail = tail->next = arm;
  }
  tl_node *next = n->next;
  *n = (tl_node){.kind = TL_N_MATCH, .line = n->line, .col = n->col, .next = next, .lhs = recv, .args = head.next};
  return tl_sema_match(s, n, expect, false);
}
