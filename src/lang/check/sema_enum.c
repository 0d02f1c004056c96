/* sema_enum.c — enums in the checker (LANGUAGE.md §11): in: `enum` items and the values
 * `E::A`, `E::B(1, 2.0)`, `E::C { x: 1.0 }`; out: their types, each value node made a
 * VARIANT. An enum is a struct object (TY_STRUCT whose st->is_enum) holding a tag and
 * the fields of every variant, so copies, copy-on-write and drops are the structs'
 * (§6); a variant's fields are its own slice of st->fields. A field may hold the enum
 * itself (a recursive enum): it is a handle, so the C type is finite. */
#include "lang/check/sema_impl.h"

#include <stdio.h>
#include <string.h>

tl_ty *tl_sema_struct_ty(sema *s, tl_struct_info *st) {
  tl_ty *t = tl_arena_alloc(s->arena, sizeof *t);
  if (!t) return TY_ERR;
  t->kind = TY_STRUCT;
  t->st = st;
  t->dtype = t->rank = -1;
  return t;
}

void tl_sema_enum_declare(sema *s, tl_ast_item *it, bool partial) {
  if (tl_sema_find_struct(s, it->name)) {
    if (!partial) tl_diag_error(s->diag, it->line, it->col, "the name `%s` is defined twice", it->name);
    return;
  }
  tl_struct_info *st = tl_arena_alloc(s->arena, sizeof *st);
  char *cname = tl_arena_alloc(s->arena, strlen(it->name) + 5);
  if (!st || !cname) return;
  sprintf(cname, "tls_%s", it->name);
  st->name = it->name;
  st->cname = cname;
  st->is_enum = true;
  st->partial = partial;
  st->line = it->line;
  st->col = it->col;
  st->next = s->out->structs;
  s->out->structs = st;
}

/* the variants and their fields, once every type name is known */
void tl_sema_enum_fields(sema *s, tl_ast_item *it) {
  tl_struct_info *st = tl_sema_find_struct(s, it->name);
  if (!st || !st->is_enum || st->variants) return;
  tl_sema_enum_fill(s, st, it);
}

/* st's variants from the item's (a generic enum's instance: with s->env set) */
void tl_sema_enum_fill(sema *s, tl_struct_info *st, tl_ast_item *it) {
  int nv = 0, nf = 0;
  for (tl_variant *v = it->variants; v; v = v->next, nv++)
    for (tl_field *f = v->fields; f; f = f->next) nf++;
  st->variants = tl_arena_alloc(s->arena, sizeof *st->variants * (size_t)(nv + 1));
  st->fields = tl_arena_alloc(s->arena, sizeof *st->fields * (size_t)(nf + 1));
  if (!st->variants || !st->fields) return;
  for (tl_variant *v = it->variants; v; v = v->next) {
    bool twice = false;
    for (int i = 0; i < st->nvariants; i++) twice |= !strcmp(st->variants[i].name, v->name);
    if (twice) { /* reported once and left out */
      tl_diag_error(s->diag, v->line, v->col, "variant `%s` is declared twice", v->name);
      continue;
    }
    tl_variant_info *vi = &st->variants[st->nvariants];
    *vi = (tl_variant_info){.name = v->name, .tag = st->nvariants, .first = st->nfields, .named = v->named,
                            .line = v->line, .col = v->col, .en = st};
    st->nvariants++;
    for (tl_field *f = v->fields; f; f = f->next) {
      if (vi->nfields == 64) { /* the code generator's bound, as a struct literal's */
        tl_diag_error(s->diag, f->line, f->col, "a variant has at most 64 fields");
        break;
      }
      bool dup = false;
      for (int i = vi->first; i < st->nfields; i++) dup |= !strcmp(st->fields[i].name + strcspn(st->fields[i].name, "_") + 1, f->name);
      if (dup) {
        tl_diag_error(s->diag, f->line, f->col, "field `%s` is declared twice", f->name);
        continue;
      }
      char *name = tl_arena_alloc(s->arena, strlen(f->name) + 16);
      if (!name) return;
      sprintf(name, "v%d_%s", vi->tag, f->name);
      tl_field_info *fi = &st->fields[st->nfields++];
      *fi = (tl_field_info){.name = name, .ty = tl_sema_resolve_type(s, f->type), .line = f->line, .col = f->col};
      if (fi->ty->kind == TY_UNIT) tl_diag_error(s->diag, f->line, f->col, "a variant's field cannot have type ()");
      vi->nfields++;
    }
  }
  if (!st->nvariants && !st->partial)
    tl_diag_error(s->diag, it->line, it->col, "enum `%s` has no variants: no value could have its type", st->name);
}

/* a variant field's name as written: "x", "0" */
static const char *field_name(const tl_field_info *f) { return f->name + strcspn(f->name, "_") + 1; }

tl_variant_info *tl_sema_find_variant(sema *s, const char *path, tl_struct_info **en) {
  const char *sep = strstr(path, "::");
  *en = NULL;
  if (!sep || strstr(sep + 2, "::")) return NULL;
  char name[256];
  snprintf(name, sizeof name, "%.*s", (int)(sep - path), path);
  tl_struct_info *st = tl_sema_find_struct(s, name);
  if (!st || !st->is_enum) return NULL;
  *en = st;
  for (int i = 0; i < st->nvariants; i++)
    if (!strcmp(st->variants[i].name, sep + 2)) return &st->variants[i];
  return NULL;
}

/* the written shape of a value or pattern: "E::A", "E::B(..)", "E::C { .. }" */
static const char *shape(const tl_variant_info *v) { return !v->nfields && !v->named ? "" : v->named ? " { .. }" : "(..)"; }

/* `E::B(a, b)`: the arguments in order against the fields */
static void positional(sema *s, tl_node *n, tl_variant_info *v, tl_struct_info *en) {
  int got = tl_ast_count(n->args);
  if (got != v->nfields) {
    tl_sema_error(s, n, "`%s::%s` has %d field%s, but %d %s given", en->name, v->name, v->nfields, v->nfields == 1 ? "" : "s",
               got, got == 1 ? "was" : "were");
    tl_sema_check_rest(s, n->args);
    return;
  }
  int i = v->first;
  for (tl_node *a = n->args; a; a = a->next, i++) {
    if (a->kind == TL_N_FIELD_INIT) {
      tl_sema_error(s, a, "a variant's fields are given in order, without names");
      tl_sema_expr(s, a->lhs, NULL);
      continue;
    }
    tl_ty *t = tl_sema_expr(s, a, en->fields[i].ty);
    if (!tl_sema_ty_fits(en->fields[i].ty, t)) tl_sema_mismatch(s, a, "variant field", en->fields[i].ty, t);
  }
}

/* `E::C { x: 1.0 }`: each field once, by name (FIELD_INIT ival: its index in st->fields) */
static void named(sema *s, tl_node *n, tl_variant_info *v, tl_struct_info *en) {
  bool seen[64] = {0};
  for (tl_node *f = n->args; f; f = f->next) {
    int i = v->first;
    while (i < v->first + v->nfields && strcmp(field_name(&en->fields[i]), f->name)) i++;
    if (i == v->first + v->nfields) {
      tl_sema_error(s, f, "variant `%s::%s` has no field `%s`", en->name, v->name, f->name);
      tl_sema_expr(s, f->lhs, NULL);
      continue;
    }
    if (i - v->first < 64 && seen[i - v->first]) tl_sema_error(s, f, "field `%s` is given twice", f->name);
    if (i - v->first < 64) seen[i - v->first] = true;
    f->ival = i;
    tl_ty *t = tl_sema_expr(s, f->lhs, en->fields[i].ty);
    if (!tl_sema_ty_fits(en->fields[i].ty, t)) tl_sema_mismatch(s, f->lhs, "field value", en->fields[i].ty, t);
    f->ty = en->fields[i].ty;
  }
  for (int i = 0; i < v->nfields && i < 64; i++)
    if (!seen[i]) tl_sema_error(s, n, "missing field `%s` in `%s::%s { .. }`", field_name(&en->fields[v->first + i]), en->name, v->name);
}

tl_ty *tl_sema_enum_value(sema *s, tl_node *n) {
  bool call = n->kind == TL_N_CALL || (n->kind == TL_N_VARIANT && n->op == TL_TOK_LPAREN);
  bool lit = n->kind == TL_N_STRUCT_LIT || (n->kind == TL_N_VARIANT && n->op == TL_TOK_LBRACE);
  const char *path = n->kind == TL_N_CALL ? n->lhs->name : n->name;
  tl_struct_info *en;
  tl_variant_info *v = tl_sema_find_variant(s, path, &en);
  if (!en) return NULL;
  if (!v) {
    tl_sema_error(s, n, "no variant `%s` in enum `%s`", strstr(path, "::") + 2, en->name);
    tl_suggest g;
    tl_suggest_init(&g, strstr(path, "::") + 2);
    tl_sema_suggest_variants(en, &g);
    tl_suggest_hint(&g, s->diag, "");
    if (call || lit) tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  bool want_call = !v->named && v->nfields, want_lit = v->named;
  if (call != want_call || lit != want_lit) {
    tl_sema_error(s, n, "`%s::%s` is written `%s::%s%s`", en->name, v->name, en->name, v->name, shape(v));
    if (call || lit) tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  if (n->kind != TL_N_VARIANT) { /* a pass over the function again finds it made already */
    n->op = call ? TL_TOK_LPAREN : lit ? TL_TOK_LBRACE : TL_TOK_EOF;
    if (call) n->name = path;
    n->kind = TL_N_VARIANT;
  }
  n->ref = v;
  if (call) positional(s, n, v, en);
  else if (lit) named(s, n, v, en);
  return tl_sema_struct_ty(s, en);
}
