/* sema_option.c — Option<T> and Result<T, E> in the checker (LANGUAGE.md §11): in: the
 * types `Option<i64>`, `Result<Tensor, String>`, the values `Some(x)`, `None`, `Ok(x)`,
 * `Err(e)`, their methods and postfix `?`; out: their types, each value node made a
 * VARIANT. Option and Result are enums made for each payload type (monomorphized): an
 * enum struct (st->generic 'O' or 'R') with Rust's variants in Rust's order, None and
 * Some(T), Ok(T) and Err(E), so values, `match`, copies, copy-on-write and drops are the
 * enums' (sema_enum.c, gen_match.c). One struct stands for every payload type with the
 * same C layout (tensors' dtype and rank erased, as tuples do). */
#include "lang/check/sema_impl.h"

#include <stdio.h>
#include <string.h>

enum { C_NONE, C_SOME, C_OK, C_ERR };

/* the methods in the order of sema_impl.h's OPT_*: 'O' Option's, 'R' Result's, 'B' both */
static const struct {
  const char *name;
  char of;
} methods[] = {
    {"is_some", 'O'}, {"is_none", 'O'}, {"is_ok", 'R'}, {"is_err", 'R'}, {"unwrap", 'B'}, {"expect", 'B'},
    {"unwrap_or", 'B'}, {"ok_or", 'O'}, {"ok", 'R'}, {"err", 'R'}, {"map", 'B'}, {"and_then", 'B'}, {"map_err", 'R'},
    {"unwrap_or_else", 'B'}, {"unwrap_err", 'R'}, {"expect_err", 'R'},
};


int tl_sema_option_ctor(const char *name) {
  static const char *const names[] = {"None", "Some", "Ok", "Err"};
  for (int i = 0; name && i < 4; i++)
    if (!strcmp(name, names[i])) return i;
  return -1;
}

void tl_sema_option_spelling(sema *s, tl_node *n) {
  tl_node *p = n->kind == TL_N_CALL ? n->lhs : n;
  if (p->kind != TL_N_PATH || !p->name || p->type) return;
  const char *v = !strncmp(p->name, "Option::", 8) ? p->name + 8 : !strncmp(p->name, "Result::", 8) ? p->name + 8 : NULL;
  int c = tl_sema_option_ctor(v);
  if (c < 0 || (p->name[0] == 'O') != (c == C_NONE || c == C_SOME)) return;
  tl_struct_info *en = NULL;
  if (tl_sema_find_variant(s, p->name, &en) || en) return; /* the program's own enum Option */
  p->name = v;
  p->kind = TL_N_IDENT;
  if (n != p && c == C_NONE && !n->args) { /* the seed's `Option::None()`: `None` */
    n->kind = TL_N_IDENT;
    n->name = v;
    n->lhs = NULL;
  }
}

/* the payload as the shared struct holds it: tensors without dtype or rank, tuples as
 * their struct's own type */
static tl_ty *erase(sema *s, tl_ty *t) {
  if (t->kind == TY_TENSOR && (t->dtype >= 0 || t->rank >= 0 || t->ent_cols)) return tl_sema_tensor(s, -1, -1);
  if (tl_ty_is_tuple(t) && t->elems) return tl_sema_struct_ty(s, t->st);
  if (t->kind == TY_FN) return tl_sema_fn_erase(s, t);
  return t;
}

/* the enum of these payloads (e NULL: Option<t>), made on first use */
static tl_struct_info *intern(sema *s, tl_ty *t, tl_ty *e) {
  char kind = e ? 'R' : 'O';
  int count = 0;
  for (tl_struct_info *st = s->out->structs; st; st = st->next) {
    if (!st->generic) continue;
    count++;
    if (st->generic == kind && tl_sema_ty_same_erased(st->fields[0].ty, t) && (!e || tl_sema_ty_same_erased(st->fields[1].ty, e))) return st;
  }
  tl_struct_info *st = tl_arena_alloc(s->arena, sizeof *st);
  tl_field_info *f = tl_arena_alloc(s->arena, sizeof *f * 2);
  tl_variant_info *v = tl_arena_alloc(s->arena, sizeof *v * 2);
  char *cname = tl_arena_alloc(s->arena, 24), *name = tl_arena_alloc(s->arena, 300);
  if (!st || !f || !v || !cname || !name) return NULL;
  char a[128], b[128];
  snprintf(cname, 24, "tlo_%d", count); /* never a user's `tls_` or a tuple's `tlt_` */
  f[0] = (tl_field_info){.name = e ? "v0_0" : "v1_0", .ty = erase(s, t)};
  if (e) f[1] = (tl_field_info){.name = "v1_0", .ty = erase(s, e)};
  if (e) snprintf(name, 300, "Result<%s, %s>", tl_ty_name(f[0].ty, a, sizeof a), tl_ty_name(f[1].ty, b, sizeof b));
  else snprintf(name, 300, "Option<%s>", tl_ty_name(f[0].ty, a, sizeof a));
  v[0] = (tl_variant_info){.name = e ? "Ok" : "None", .tag = 0, .first = 0, .nfields = e ? 1 : 0, .en = st};
  v[1] = (tl_variant_info){.name = e ? "Err" : "Some", .tag = 1, .first = e ? 1 : 0, .nfields = 1, .en = st};
  *st = (tl_struct_info){.name = name, .cname = cname, .is_enum = true, .generic = kind, .nvariants = 2,
                         .variants = v, .nfields = e ? 2 : 1, .fields = f};
  tl_struct_info **tail = &s->out->structs; /* after the structs its payloads may name */
  while (*tail) tail = &(*tail)->next;
  *tail = st;
  return st;
}

/* a payload may be any value but a range; () too (`Result<(), String>`) */
static bool payload_ok(sema *s, int line, int col, tl_ty *t) {
  if (t->kind == TY_ERROR) return false;
  if (t->kind != TY_RANGE) return true;
  tl_diag_error(s->diag, line, col, "a range is not a value: it cannot be a payload");
  return false;
}

static tl_ty *type_of(sema *s, tl_ty *t, tl_ty *e) {
  tl_struct_info *st = intern(s, t, e);
  return st ? tl_sema_struct_ty(s, st) : TY_ERR;
}

tl_ty *tl_sema_option_type(sema *s, tl_ty *t) { return type_of(s, t, NULL); }
tl_ty *tl_sema_option_result_type(sema *s, tl_ty *t, tl_ty *e) { return type_of(s, t, e); }

tl_ty *tl_sema_option_resolve(sema *s, const tl_type *t) {
  bool result = !strcmp(t->name, "Result");
  if (!tl_sema_type_arity(s, t, result ? 2 : 1, result ? "write `Result<T, E>`: `Result<i64, String>`" : "write `Option<T>`: `Option<i64>`"))
    return TY_ERR;
  tl_ty *a = tl_sema_resolve_type(s, t->elems), *b = result ? tl_sema_resolve_type(s, t->elems->next) : NULL;
  bool ok = payload_ok(s, t->elems->line, t->elems->col, a);
  if (result) ok &= payload_ok(s, t->elems->next->line, t->elems->next->col, b);
  return ok ? type_of(s, a, b) : TY_ERR;
}

/* ---- values ---- */

bool tl_sema_option_needs_context(const tl_node *n) {
  if (!n) return false;
  if (n->kind == TL_N_BLOCK) return tl_sema_option_needs_context(n->value);
  const char *name = n->kind == TL_N_CALL && n->lhs->kind == TL_N_IDENT ? n->lhs->name
                     : n->kind == TL_N_IDENT || n->kind == TL_N_VARIANT ? n->name : NULL;
  int c = tl_sema_option_ctor(name); /* "E::A" is none of them */
  return c == C_NONE ? n->kind != TL_N_CALL : c == C_OK || c == C_ERR;
}

static const char *written(int c) {
  static const char *const w[] = {"None", "Some(..)", "Ok(..)", "Err(..)"};
  return w[c];
}

/* no type says what the value is: Rust's "type annotations needed", with a hint */
static tl_ty *cannot_infer(sema *s, tl_node *n, int c, tl_ty *expect) {
  char b[128];
  if (expect && expect->kind != TY_ERROR) {
    tl_sema_error(s, n, "mismatched types: expected %s, found `%s`", tl_ty_name(expect, b, sizeof b), written(c));
    tl_diag_hint(s->diag, c == C_NONE || c == C_SOME ? "`%s` is an Option" : "`%s` is a Result", written(c));
    return TY_ERR;
  }
  if (expect) return TY_ERR;
  tl_sema_error(s, n, "cannot infer the type of `%s`", written(c));
  tl_diag_hint(s->diag, c == C_NONE ? "write the type: `let x: Option<i64> = None;`"
                                    : "write the type: `let r: Result<i64, String> = %s;`",
               written(c));
  return TY_ERR;
}

/* the one argument of `Some(x)`, `Ok(x)`, `Err(e)`, checked against want (NULL: none) */
static tl_ty *payload(sema *s, tl_node *n, int c, tl_ty *want, bool hint) {
  int got = tl_ast_count(n->args);
  if (got != 1) {
    tl_sema_error(s, n, "`%s` takes 1 argument, but %d %s given", c == C_SOME ? "Some" : c == C_OK ? "Ok" : "Err", got,
               got == 1 ? "was" : "were");
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  tl_ty *t = hint ? tl_sema_expr_hint(s, n->args, want) : tl_sema_expr(s, n->args, want);
  if (want && !tl_sema_ty_fits(want, t)) {
    tl_sema_mismatch(s, n->args, c == C_ERR ? "error value" : "payload", want, t);
    return TY_ERR;
  }
  return payload_ok(s, n->args->line, n->args->col, t) ? t : TY_ERR;
}

tl_ty *tl_sema_option_value(sema *s, tl_node *n, tl_ty *expect, bool hint) {
  bool call = n->kind == TL_N_CALL || (n->kind == TL_N_VARIANT && n->op == TL_TOK_LPAREN);
  const char *name = n->kind == TL_N_CALL ? (n->lhs->kind == TL_N_IDENT ? n->lhs->name : NULL) : n->name;
  int c = tl_sema_option_ctor(name);
  if (c < 0 || call != (c != C_NONE)) return NULL; /* `Some` alone, `None(..)`: not ours */
  if (n->kind == TL_N_CALL) n->line = n->lhs->line, n->col = n->lhs->col; /* errors point at `Some`, not `(` */
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body computes numbers: `%s` cannot be used in it", written(c));
    return TY_ERR;
  }
  bool opt = c == C_NONE || c == C_SOME;
  bool fits = expect && (opt ? tl_ty_is_option(expect) : tl_ty_is_result(expect));
  tl_ty *t = TY_ERR;
  if (c == C_NONE) t = fits ? expect : cannot_infer(s, n, c, hint ? NULL : expect);
  else if (c == C_SOME) {
    tl_ty *p = payload(s, n, c, fits ? expect->st->fields[0].ty : NULL, hint);
    t = p->kind == TY_ERROR ? TY_ERR : fits && tl_sema_ty_fits(expect->st->fields[0].ty, p) ? expect : type_of(s, p, NULL);
  } else {
    tl_ty *p = payload(s, n, c, fits ? expect->st->fields[c == C_OK ? 0 : 1].ty : NULL, hint);
    t = p->kind == TY_ERROR ? TY_ERR : fits ? expect : cannot_infer(s, n, c, hint ? NULL : expect);
  }
  if (n->kind != TL_N_VARIANT) { /* a pass over the function again finds it made already */
    n->op = call ? TL_TOK_LPAREN : TL_TOK_EOF;
    n->name = name;
    n->kind = TL_N_VARIANT;
  }
  n->ref = t->kind == TY_ERROR ? NULL : &t->st->variants[c == C_SOME || c == C_ERR ? 1 : 0];
  return t;
}

/* ---- patterns ---- */

tl_variant_info *tl_sema_option_variant(sema *s, tl_node *p, const char *name, tl_ty *t) {
  int c = tl_sema_option_ctor(name);
  bool opt = c == C_NONE || c == C_SOME;
  if (t->kind == TY_ERROR) return NULL;
  if (opt ? !tl_ty_is_option(t) : !tl_ty_is_result(t)) {
    char b[128];
    tl_sema_error(s, p, "mismatched types in the pattern: expected %s, found `%s`", tl_ty_name(t, b, sizeof b), written(c));
    return NULL;
  }
  return &t->st->variants[c == C_SOME || c == C_ERR ? 1 : 0];
}

/* ---- methods ---- */

static int find_method(const char *name, char kind) {
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (!strcmp(methods[i].name, name) && (methods[i].of == 'B' || methods[i].of == kind)) return (int)i;
  return -1;
}

/* an argument checked against want (NULL: any value) */
static tl_ty *arg(sema *s, tl_node *a, tl_ty *want, const char *what) {
  tl_ty *t = tl_sema_expr(s, a, want);
  if (want && !tl_sema_ty_fits(want, t)) {
    tl_sema_mismatch(s, a, what, want, t);
    return TY_ERR;
  }
  return t;
}

/* a closure without a written result type whose value is `Ok(..)` or `Err(..)` (also
 * `Result::Ok(..)`): TL infers those from context only, and and_then's is the Result */
static bool is_result_ctor(const tl_node *v, int depth) {
  while (v && v->kind == TL_N_BLOCK) v = v->value;
  if (v && v->kind == TL_N_IF && depth < 64) /* either branch */
    return is_result_ctor(v->then, depth + 1) || (v->els && is_result_ctor(v->els, depth + 1));
  if (!v || v->kind != TL_N_CALL) return false;
  const char *name = v->lhs->kind == TL_N_IDENT || v->lhs->kind == TL_N_PATH ? v->lhs->name : NULL;
  if (name && !strncmp(name, "Result::", 8)) name += 8;
  return name && (!strcmp(name, "Ok") || !strcmp(name, "Err"));
}

static bool gives_result_ctor(const tl_node *c) { return c->kind == TL_N_CLOSURE && !c->type && c->body && is_result_ctor(c->body, 0); }

/* `a.or(b)` (Rust's Option::or) on a variable `a` is `if a.is_some() { a } else { b }` */
static tl_ty *or_spelling(sema *s, tl_node *n) {
  if (!tl_sema_arity(s, n, "or", 1)) return TY_ERR;
  tl_node *cond = tl_arena_alloc(s->arena, sizeof *cond), *a = tl_arena_alloc(s->arena, sizeof *a),
          *then = tl_arena_alloc(s->arena, sizeof *then), *els = tl_arena_alloc(s->arena, sizeof *els);
  if (!cond || !a || !then || !els) return TY_ERR;
  *a = *n->lhs;
  a->next = NULL;
  *cond = (tl_node){.kind = TL_N_METHOD, .line = n->line, .col = n->col, .name = "is_some", .lhs = n->lhs};
  *then = (tl_node){.kind = TL_N_BLOCK, .line = n->line, .col = n->col, .value = a};
  *els = (tl_node){.kind = TL_N_BLOCK, .line = n->line, .col = n->col, .value = n->args};
  *n = (tl_node){.kind = TL_N_IF, .line = n->line, .col = n->col, .cond = cond, .then = then, .els = els, .next = n->next};
  return tl_sema_expr(s, n, NULL);
}

tl_ty *tl_sema_option_method(sema *s, tl_node *n, tl_ty *t) {
  if (!tl_ty_is_option(t) && !tl_ty_is_result(t)) return NULL;
  if (!strcmp(n->name, "or") && t->st->generic == 'O' && n->lhs->kind == TL_N_IDENT) return or_spelling(s, n);
  int m = find_method(n->name, t->st->generic);
  if (m < 0) {
    tl_sema_error(s, n, "no method `%s` on `%s`", n->name, t->st->name);
    tl_suggest g;
    tl_suggest_init(&g, n->name);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
      if (methods[i].of == 'B' || methods[i].of == t->st->generic) tl_suggest_add(&g, methods[i].name);
    tl_suggest_hint(&g, s->diag, "");
    tl_diag_hint(s->diag, t->st->generic == 'O' ? "an Option has is_some, is_none, unwrap, expect, unwrap_or, unwrap_or_else, ok_or, map and and_then"
                                                : "a Result has is_ok, is_err, unwrap, expect, unwrap_or, unwrap_or_else, unwrap_err, expect_err, ok, err, map, and_then and map_err");
    tl_sema_check_rest(s, n->args);
    return TY_ERR;
  }
  if (s->compr_depth) tl_sema_error(s, n, "a comprehension body calls only scalar math, not `%s`", n->name);
  n->ival = B_OPTION;
  n->len = (size_t)m;
  tl_ty *value = t->st->fields[0].ty, *err = t->st->generic == 'R' ? t->st->fields[1].ty : NULL;
  const char *name = methods[m].name;
  if (!strncmp(name, "is_", 3)) return tl_sema_arity(s, n, name, 0) ? TY_BOOL_T : TY_ERR;
  if (!strcmp(name, "unwrap")) return tl_sema_arity(s, n, name, 0) ? value : TY_ERR;
  if (!strcmp(name, "expect"))
    return tl_sema_arity(s, n, name, 1) && arg(s, n->args, TY_STR_T, "`expect` message")->kind != TY_ERROR ? value : TY_ERR;
  if (!strcmp(name, "unwrap_or"))
    return tl_sema_arity(s, n, name, 1) && arg(s, n->args, value, "`unwrap_or` default")->kind != TY_ERROR ? value : TY_ERR;
  if (!strcmp(name, "unwrap_or_else")) { /* Option's closure takes nothing, Result's the error */
    if (!tl_sema_arity(s, n, name, 1)) return TY_ERR;
    return tl_sema_closure_expect(s, n->args, &err, err ? 1 : 0, value)->kind == TY_ERROR ? TY_ERR : value;
  }
  if (!strcmp(name, "unwrap_err")) return tl_sema_arity(s, n, name, 0) ? err : TY_ERR;
  if (!strcmp(name, "expect_err"))
    return tl_sema_arity(s, n, name, 1) && arg(s, n->args, TY_STR_T, "`expect_err` message")->kind != TY_ERROR ? err : TY_ERR;
  if (!strcmp(name, "ok_or")) {
    if (!tl_sema_arity(s, n, name, 1)) return TY_ERR;
    tl_ty *e = arg(s, n->args, NULL, "");
    return payload_ok(s, n->args->line, n->args->col, e) ? type_of(s, value, e) : TY_ERR;
  }
  if (!strcmp(name, "map")) { /* map(|v| ..): the closure's result in the same kind, an Err kept */
    if (!tl_sema_arity(s, n, name, 1)) return TY_ERR;
    tl_ty *f = tl_sema_closure_expect(s, n->args, &value, 1, NULL);
    if (f->kind == TY_ERROR) return TY_ERR;
    return payload_ok(s, n->args->line, n->args->col, f->fn_ret) ? type_of(s, f->fn_ret, err) : TY_ERR;
  }
  if (!strcmp(name, "and_then")) { /* and_then(|v| ..): the closure gives the whole result, of the same kind */
    if (!tl_sema_arity(s, n, name, 1)) return TY_ERR;
    /* `|v| Ok(v * 3)`: Ok's payload type is taken to be v's, the error type the receiver's */
    tl_ty *guess = err && gives_result_ctor(n->args) ? type_of(s, value, err) : NULL;
    tl_ty *f = tl_sema_closure_expect(s, n->args, &value, 1, guess);
    if (f->kind == TY_ERROR) return TY_ERR;
    tl_ty *r = f->fn_ret;
    bool fits = err ? tl_ty_is_result(r) && tl_sema_ty_fits(err, r->st->fields[1].ty) : tl_ty_is_option(r);
    if (!fits) {
      char b[128], w[128];
      if (err)
        tl_sema_error(s, n->args, "`and_then` needs a closure that returns a Result with error type %s, not %s",
                      tl_ty_name(err, w, sizeof w), tl_ty_name(r, b, sizeof b));
      else tl_sema_error(s, n->args, "`and_then` needs a closure that returns an Option, not %s", tl_ty_name(r, b, sizeof b));
      return TY_ERR;
    }
    return r;
  }
  if (!strcmp(name, "map_err")) { /* map_err(|e| ..): the error through the closure, an Ok kept */
    if (!tl_sema_arity(s, n, name, 1)) return TY_ERR;
    tl_ty *f = tl_sema_closure_expect(s, n->args, &err, 1, NULL);
    if (f->kind == TY_ERROR) return TY_ERR;
    return payload_ok(s, n->args->line, n->args->col, f->fn_ret) ? type_of(s, value, f->fn_ret) : TY_ERR;
  }
  /* ok(), err(): the Option of one side */
  return tl_sema_arity(s, n, name, 0) ? type_of(s, !strcmp(name, "ok") ? value : err, NULL) : TY_ERR;
}

/* ---- `x?` ---- */

tl_ty *tl_sema_option_try(sema *s, tl_node *n) {
  char a[128], b[128];
  tl_ty *t = tl_sema_expr(s, n->lhs, NULL);
  if (t->kind == TY_ERROR) return TY_ERR;
  if (s->compr_depth) {
    tl_sema_error(s, n, "a comprehension body computes numbers: `?` cannot be used in it");
    return TY_ERR;
  }
  if (!tl_ty_is_option(t) && !tl_ty_is_result(t)) {
    tl_sema_error(s, n, "the `?` operator can only be applied to values of type `Option` or `Result`, not %s", tl_ty_name(t, a, sizeof a));
    return TY_ERR;
  }
  tl_ty *ret = s->fn->ret;
  bool opt = tl_ty_is_option(t);
  if (tl_sema_ty_has_error(ret)) return t->st->fields[0].ty; /* the result type's error was said */
  if (!tl_ty_is_option(ret) && !tl_ty_is_result(ret)) {
    tl_sema_error(s, n, "the `?` operator can only be used in a function that returns `Option` or `Result`");
    tl_diag_hint(s->diag, "this function returns %s; take the value apart with `match` or `if let`", tl_ty_name(ret, a, sizeof a));
    return TY_ERR;
  }
  if (opt != tl_ty_is_option(ret)) {
    tl_sema_error(s, n, "the `?` operator on %s can only be used in a function that returns %s", opt ? "an `Option`" : "a `Result`",
               opt ? "`Option`" : "`Result`");
    tl_diag_hint(s->diag, opt ? "make it a Result first: `x.ok_or(error)?`" : "make it an Option first: `x.ok()?`");
    return TY_ERR;
  }
  if (!opt && !tl_sema_ty_fits(ret->st->fields[1].ty, t->st->fields[1].ty)) {
    tl_sema_error(s, n, "`?` couldn't convert the error to %s", tl_ty_name(ret->st->fields[1].ty, a, sizeof a));
    tl_diag_hint(s->diag, "the error here is %s and the function returns %s", tl_ty_name(t->st->fields[1].ty, b, sizeof b), ret->st->name);
    return TY_ERR;
  }
  return t->st->fields[0].ty;
}
