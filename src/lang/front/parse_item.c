/* parse_item.c — the item grammar and the type grammar (LANGUAGE.md §2-4, §11): in:
 * the parser at an item's first token (tl_parse_guarded_item) or a type's (tl_parse_type);
 * out: a tl_ast_item (fn, struct, enum, impl, trait, or a Datalog item through
 * tl_parse_logic_item) or a tl_type, in the arena. An error unwinds as in parse.c; an
 * item's recovery point skips to the next item. */
#include "lang/front/parse_impl.h"

#include <stdio.h>
#include <string.h>

/* ---- types ---- */

static bool is_dtype(const char *s) {
  static const char *names[] = {"bool", "i32", "i64", "f32", "f64", "i8", "i16", "u8", "u16", "u32", "u64", "f16", "bf16"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(s, names[i])) return true;
  return false;
}

/* `Option<T>`, `Result<T, E>`: the arguments as elems (the checker counts them) */
tl_type *tl_parse_generic_args(parser *p, tl_type *ty) {
  next(p);
  tl_parse_enter(p);
  tl_type **tail = &ty->elems;
  do {
    *tail = tl_parse_type(p);
    tail = &(*tail)->next;
  } while (consume(p, TL_TOK_COMMA) && !at(p, TL_TOK_GT));
  tl_parse_expect(p, TL_TOK_GT, "'>' after the type arguments");
  p->depth--;
  return ty;
}

static bool word_is(parser *p, const tl_token *t, const char *w) {
  return t->kind == TL_TOK_IDENT && t->len == strlen(w) && !memcmp(p->diag->src + t->offset, w, t->len);
}

/* `fn(i64, f32) -> bool`, `fn()` (its result `()`), after the `fn` */
static tl_type *fn_type(parser *p, tl_type *ty) {
  tl_parse_enter(p);
  ty->name = "fn";
  tl_parse_expect(p, TL_TOK_LPAREN, "'(' after `fn` in a function type");
  tl_type **tail = &ty->elems;
  while (!at(p, TL_TOK_RPAREN)) {
    *tail = tl_parse_type(p);
    tail = &(*tail)->next;
    if (at(p, TL_TOK_RPAREN)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or ')' in the function type");
  }
  next(p);
  if (consume(p, TL_TOK_ARROW)) ty->ret = tl_parse_type(p);
  p->depth--;
  return ty;
}

/* prefix then name, in the parse's arena: `dyn Shape`, `Self::Output` as one type name */
static char *joined(parser *p, const char *prefix, const char *name) {
  char *full = tl_parse_alloc(p, strlen(prefix) + strlen(name) + 1);
  strcpy(full, prefix);
  strcat(full, name);
  return full;
}

// type = "fn" "(" types ")" ("->" type)? | ident ("<" dtype ("," int)? ">")? | ident "<" type ("," type)* ">" | tuple_type
//   -- Tensor takes a dtype and a rank; Option, Result, Vec, HashMap and generic structs and enums types
// tuple_type = "(" ")" | "(" type "," ")" | "(" type ("," type)+ ","? ")"
tl_type *tl_parse_type(parser *p) {
  const tl_token *t = peek(p);
  tl_type *ty = tl_parse_alloc(p, sizeof *ty);
  ty->line = t->line;
  ty->col = t->col;
  ty->rank = -1;
  if (consume(p, TL_TOK_LPAREN)) { /* `(T)` alone is T, as in Rust; `(T,)` a tuple */
    tl_parse_enter(p);
    ty->name = "()";
    ty->is_tuple = true;
    tl_type **tail = &ty->elems;
    bool comma = false;
    while (!at(p, TL_TOK_RPAREN)) {
      *tail = tl_parse_type(p);
      tail = &(*tail)->next;
      if (at(p, TL_TOK_RPAREN)) break;
      tl_parse_expect(p, TL_TOK_COMMA, "',' or ')' in the tuple type");
      comma = true;
    }
    next(p);
    p->depth--;
    return ty->elems && !ty->elems->next && !comma ? ty->elems : ty;
  }
  if (consume(p, TL_TOK_FN)) return fn_type(p, ty);
  if (t->kind == TL_TOK_IMPL && peek_at(p, 2)->kind == TL_TOK_LPAREN &&
      (word_is(p, peek_at(p, 1), "Fn") || word_is(p, peek_at(p, 1), "FnMut") || word_is(p, peek_at(p, 1), "FnOnce")))
    t = (next(p), peek(p)); /* `impl Fn(i64) -> i64`: the same */
  if (t->kind == TL_TOK_IDENT && peek_at(p, 1)->kind == TL_TOK_LPAREN &&
      (word_is(p, t, "Fn") || word_is(p, t, "FnMut") || word_is(p, t, "FnOnce"))) {
    next(p); /* Rust's closure traits (the seed's `f: Fn(i64) -> i64`) are the function type */
    return fn_type(p, ty);
  }
  if (consume(p, TL_TOK_LBRACKET)) { /* Rust's array `[T; N]` and slice `[T]`: a Vec<T> (rank: N, or -1) */
    tl_parse_enter(p);
    ty->name = "Vec";
    ty->elems = tl_parse_type(p);
    if (consume(p, TL_TOK_SEMI)) {
      const tl_token *len = tl_parse_expect(p, TL_TOK_INT, "the array's length (an integer)");
      ty->rank = len->v.i;
      if (len->big) tl_parse_fail_at(p, len, "integer literal %s is too large for i64", len->str);
      if (ty->rank < 0) tl_parse_fail_at(p, peek(p), "an array's length is not negative");
    }
    tl_parse_expect(p, TL_TOK_RBRACKET, "']' after the array's element type and length");
    p->depth--;
    return ty;
  }
  ty->name = tl_parse_ident(p, "a type");
  if (!strcmp(ty->name, "dyn") && at(p, TL_TOK_IDENT)) { /* `dyn Shape`: a trait object (sema_dyn.c) */
    ty->name = joined(p, "dyn ", tl_parse_ident(p, "a trait name after 'dyn'"));
    return ty;
  }
  if (!strcmp(ty->name, "Self") && at(p, TL_TOK_COLONCOLON)) { /* `Self::Output`: an associated type */
    next(p);
    ty->name = joined(p, "Self::", tl_parse_ident(p, "an associated type's name after 'Self::'"));
    return ty;
  }
  if (!at(p, TL_TOK_LT)) return ty;
  if (strcmp(ty->name, "Tensor")) return tl_parse_generic_args(p, ty); /* the checker counts them */
  next(p);
  const tl_token *d = peek(p);
  ty->dtype = tl_parse_ident(p, "a dtype");
  if (!is_dtype(ty->dtype))
    tl_parse_fail_at(p, d, "unknown dtype '%s': expected bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 or f64",
                     ty->dtype);
  if (consume(p, TL_TOK_COMMA)) ty->rank = tl_parse_expect(p, TL_TOK_INT, "a rank (an integer)")->v.i;
  if (p->tok[p->pos - 1].big) /* the rank's token, when one was read */
    tl_parse_fail_at(p, &p->tok[p->pos - 1], "integer literal %s is too large for i64", p->tok[p->pos - 1].str);
  tl_parse_expect(p, TL_TOK_GT, "'>' after the tensor's dtype and rank");
  return ty;
}


/* ---- items ---- */

// param = "&" "mut"? "self" | "self" | "mut"? ident ":" ("&" "mut")? type
static tl_param *param(parser *p) {
  const tl_token *t = peek(p);
  tl_param *pa = tl_parse_alloc(p, sizeof *pa);
  pa->line = t->line;
  pa->col = t->col;
  if (consume(p, TL_TOK_AMP)) { /* `&self` reads as plain `self` does: a borrow */
    pa->is_mut = consume(p, TL_TOK_MUT);
    tl_parse_expect(p, TL_TOK_SELF, "'self' after '&' (write `x: &mut T` for other parameters)");
    pa->by_ref = pa->is_self = true;
  } else if (consume(p, TL_TOK_SELF)) {
    pa->is_self = true;
  }
  if (pa->is_self) {
    pa->name = "self";
    return pa;
  }
  pa->is_mut = consume(p, TL_TOK_MUT);
  if (pa->is_mut && consume(p, TL_TOK_SELF)) { /* `mut self`: the method's own copy */
    pa->is_self = true;
    pa->name = "self";
    return pa;
  }
  pa->name = tl_parse_ident(p, "a parameter name");
  tl_parse_expect(p, TL_TOK_COLON, "':' and the parameter's type");
  if (consume(p, TL_TOK_AMP)) /* `&mut T`: the caller's variable; `&T` is a borrow, as a plain `T` is */
    pa->by_ref = consume(p, TL_TOK_MUT);
  pa->type = tl_parse_type(p);
  return pa;
}

/* a lexical error among tokens [from, to) */
static bool lex_error_in(parser *p, int from, int to) {
  for (int i = from; i < to && i < p->n; i++)
    if (p->tok[i].lex_error) return true;
  return false;
}

// tparams = "<" ident (":" ident ("+" ident)*)? ("," ...)* ","? ">"
static tl_tparam *tparams(parser *p) {
  if (!consume(p, TL_TOK_LT)) return NULL;
  tl_tparam *head = NULL, **tail = &head;
  while (!at(p, TL_TOK_GT)) {
    const tl_token *t = peek(p);
    tl_tparam *tp = tl_parse_alloc(p, sizeof *tp);
    tp->line = t->line;
    tp->col = t->col;
    tp->name = tl_parse_ident(p, "a type parameter name");
    if (consume(p, TL_TOK_COLON)) {
      tl_type **bt = &tp->bounds;
      do {
        const tl_token *b = peek(p);
        tl_type *ty = tl_parse_alloc(p, sizeof *ty);
        ty->line = b->line;
        ty->col = b->col;
        ty->rank = -1;
        ty->name = tl_parse_ident(p, "a trait name (a bound)");
        *bt = ty;
        bt = &ty->next;
      } while (consume(p, TL_TOK_PLUS));
    }
    *tail = tp;
    tail = &tp->next;
    if (at(p, TL_TOK_GT)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or '>' in the type parameters");
  }
  next(p);
  return head;
}

// fn = "fn" ident tparams? "(" (param ("," param)* ","?)? ")" ("->" type)? (block | ";" in a trait)
static tl_fn *fn(parser *p) {
  int start = p->pos, fails = p->fails;
  const tl_token *t = tl_parse_expect(p, TL_TOK_FN, "'fn' or '}' in the impl");
  tl_fn *f = tl_parse_alloc(p, sizeof *f);
  f->line = t->line;
  f->col = t->col;
  f->partial = f->broken = true; /* until it is whole */
  p->partial = f;
  f->name = tl_parse_ident(p, "a function name after 'fn'");
  f->tparams = tparams(p);
  tl_parse_expect(p, TL_TOK_LPAREN, "'(' and the parameters");
  tl_param **tail = &f->params; /* linked as they come: a partial fn keeps them */
  while (!at(p, TL_TOK_RPAREN)) {
    *tail = param(p);
    tail = &(*tail)->next;
    if (at(p, TL_TOK_RPAREN)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or ')' in the parameters");
  }
  next(p);
  if (consume(p, TL_TOK_ARROW)) f->ret = tl_parse_type(p);
  if (!(p->in_trait && consume(p, TL_TOK_SEMI))) f->body = tl_parse_block(p);
  f->partial = false;
  f->broken = p->fails > fails || lex_error_in(p, start, p->pos); /* a statement recovered inside */
  return f;
}

// struct = "struct" ident "{" (ident ":" type ("," ident ":" type)* ","?)? "}"
static void struct_item(parser *p, tl_ast_item *it) {
  next(p);
  it->name = tl_parse_ident(p, "a struct name after 'struct'");
  it->tparams = tparams(p);
  tl_parse_expect(p, TL_TOK_LBRACE, "'{' and the fields");
  tl_field **tail = &it->fields; /* linked when whole: a broken struct keeps those */
  while (!at(p, TL_TOK_RBRACE)) {
    const tl_token *t = peek(p);
    tl_field *f = tl_parse_alloc(p, sizeof *f);
    f->line = t->line;
    f->col = t->col;
    f->name = tl_parse_ident(p, "a field name");
    tl_parse_expect(p, TL_TOK_COLON, "':' and the field's type");
    f->type = tl_parse_type(p);
    *tail = f;
    tail = &f->next;
    if (at(p, TL_TOK_RBRACE)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or '}' in the fields");
  }
  next(p);
}

// enum = "enum" ident "{" (variant ("," variant)* ","?)? "}"
// variant = ident ("(" type ("," type)* ","? ")" | "{" (ident ":" type ("," ...)* ","?)? "}")?
static void enum_item(parser *p, tl_ast_item *it) {
  next(p);
  it->name = tl_parse_ident(p, "an enum name after 'enum'");
  it->tparams = tparams(p);
  tl_parse_expect(p, TL_TOK_LBRACE, "'{' and the variants");
  tl_variant **tail = &it->variants; /* linked as they come: a broken enum keeps them */
  while (!at(p, TL_TOK_RBRACE)) {
    const tl_token *t = peek(p);
    tl_variant *v = tl_parse_alloc(p, sizeof *v);
    v->line = t->line;
    v->col = t->col;
    v->name = tl_parse_ident(p, "a variant name");
    tl_field **ft = &v->fields;
    bool paren = at(p, TL_TOK_LPAREN);
    if (consume(p, TL_TOK_LPAREN) || (v->named = consume(p, TL_TOK_LBRACE))) {
      tl_tok_kind close = paren ? TL_TOK_RPAREN : TL_TOK_RBRACE;
      for (int i = 0; !at(p, close); i++) {
        const tl_token *ft_tok = peek(p);
        tl_field *f = tl_parse_alloc(p, sizeof *f);
        f->line = ft_tok->line;
        f->col = ft_tok->col;
        if (paren) {
          char *name = tl_parse_alloc(p, 12);
          snprintf(name, 12, "%d", i);
          f->name = name;
        } else {
          f->name = tl_parse_ident(p, "a field name");
          tl_parse_expect(p, TL_TOK_COLON, "':' and the field's type");
        }
        f->type = tl_parse_type(p);
        *ft = f;
        ft = &f->next;
        if (at(p, close)) break;
        tl_parse_expect(p, TL_TOK_COMMA, paren ? "',' or ')' in the variant's fields" : "',' or '}' in the variant's fields");
      }
      next(p);
    }
    *tail = v;
    tail = &v->next;
    if (at(p, TL_TOK_RBRACE)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or '}' in the variants");
  }
  next(p);
}

/* skips to the next `fn`/`struct`/`impl` outside braces (in an impl: also to its
 * closing '}'); past the item's first token at least, so recovery always makes progress */
static void sync_item(parser *p, bool in_impl, int start) {
  if (p->pos == start) next(p);
  int depth = 0;
  bool to_semi = p->item && p->item->kind == TL_ITEM_CONST; /* a constant ends at its ';' */
  for (;;) {
    tl_tok_kind k = peek(p)->kind;
    if (k == TL_TOK_EOF) return;
    if (to_semi && depth == 0 && k == TL_TOK_SEMI) {
      next(p);
      return;
    }
    if (depth == 0 && (k == TL_TOK_FN || (!in_impl && (k == TL_TOK_STRUCT || k == TL_TOK_IMPL || k == TL_TOK_ENUM || k == TL_TOK_TRAIT)))) return;
    if (depth == 0 && in_impl && k == TL_TOK_RBRACE) return;
    if (k == TL_TOK_LBRACE) depth++;
    if (k == TL_TOK_RBRACE && depth > 0) depth--;
    next(p);
  }
}

/* a function with a recovery point (impl methods); after an error, what is known of
 * it (partial), or NULL */
static tl_fn *guarded_fn(parser *p) {
  jmp_buf here, *outer = p->recover;
  int depth = p->depth, start = p->pos;
  p->partial = NULL;
  if (setjmp(here)) {
    p->recover = outer;
    p->depth = depth;
    p->no_struct = false;
    p->head = NULL;
    sync_item(p, true, start);
    return p->partial && p->partial->name ? p->partial : NULL;
  }
  p->recover = &here;
  tl_fn *f = fn(p);
  p->recover = outer;
  return f;
}

// impl = "impl" tparams? type ("for" type)? "{" fn* "}"
// trait = "trait" ident "{" fn* "}"   -- a method without a body ends in ';'
static void impl_item(parser *p, tl_ast_item *it) {
  bool trait = next(p)->kind == TL_TOK_TRAIT;
  if (trait) it->name = tl_parse_ident(p, "a trait name after 'trait'");
  else {
    it->tparams = tparams(p);
    it->self_type = tl_parse_type(p);
    if (consume(p, TL_TOK_FOR)) {
      it->trait = it->self_type->name;
      it->self_type = tl_parse_type(p);
    }
    it->name = it->self_type->name;
  }
  p->in_trait = trait;
  tl_parse_expect(p, TL_TOK_LBRACE, "'{' and the methods");
  tl_fn **tail = &it->methods; /* linked as they come: a broken impl keeps them */
  tl_type **assoc_tail = &it->assoc;
  while (!at(p, TL_TOK_RBRACE) && !at(p, TL_TOK_EOF)) {
    if (word_is(p, peek(p), "type")) { /* an associated type, `type Output = V;` (`type Output;` in a trait) */
      const tl_token *t = next(p);
      tl_type *a = tl_parse_alloc(p, sizeof *a);
      a->line = t->line, a->col = t->col, a->rank = -1;
      a->name = tl_parse_ident(p, "the associated type's name");
      if (consume(p, TL_TOK_ASSIGN)) a->elems = tl_parse_type(p);
      tl_parse_expect(p, TL_TOK_SEMI, "';' after the associated type");
      *assoc_tail = a, assoc_tail = &a->next;
      continue;
    }
    tl_fn *f = guarded_fn(p);
    if (f) *tail = f, tail = &f->next;
  }
  for (tl_fn *f = it->methods; f; f = f->next) f->assoc = it->assoc; /* `Self::Output` in their types */
  p->in_trait = false;
  tl_parse_expect(p, TL_TOK_RBRACE, trait ? "'}' to close the trait" : "'}' to close the impl");
}

// const = ("const" | "static" "mut"? | "tensor") ident ":" type "=" expr ";"
static void const_item(parser *p, tl_ast_item *it) {
  const tl_token *kw = next(p);
  it->kind = TL_ITEM_CONST;
  it->is_static = kw->len == 6 && p->diag->src[kw->offset] == 's'; /* "static", not "tensor" */
  it->is_mut = it->is_static && consume(p, TL_TOK_MUT);
  it->name = tl_parse_ident(p, it->is_static ? "a name after 'static'" : "a name after 'const'");
  tl_parse_expect(p, TL_TOK_COLON, "':' and the type (a constant's type is written: `const N: i64 = 4;`)");
  it->type = tl_parse_type(p);
  tl_parse_expect(p, TL_TOK_ASSIGN, "'=' and the value");
  it->value = tl_parse_expr(p);
  tl_parse_expect(p, TL_TOK_SEMI, "';' after the value");
}


// item = fn | struct | impl | enum | trait | const | a fact, rule or declaration
static tl_ast_item *item(parser *p) {
  const tl_token *t = peek(p);
  tl_ast_item *it = tl_parse_alloc(p, sizeof *it);
  it->line = t->line;
  it->col = t->col;
  p->item = it;
  switch (t->kind) {
  case TL_TOK_FN:
    it->kind = TL_ITEM_FN;
    it->fn = fn(p);
    it->name = it->fn->name;
    return it;
  case TL_TOK_STRUCT: it->kind = TL_ITEM_STRUCT; struct_item(p, it); return it;
  case TL_TOK_ENUM: it->kind = TL_ITEM_ENUM; enum_item(p, it); return it;
  case TL_TOK_IMPL: it->kind = TL_ITEM_IMPL; impl_item(p, it); return it;
  case TL_TOK_TRAIT: it->kind = TL_ITEM_TRAIT; impl_item(p, it); return it;
  case TL_TOK_RELATION: case TL_TOK_MOD: case TL_TOK_USE: case TL_TOK_DOT: return tl_parse_logic_item(p, it);
  case TL_TOK_IDENT:
    if (peek_at(p, 1)->kind == TL_TOK_FN && word_is(p, t, "async")) { /* reported; the fn is checked as a plain one */
      tl_diag_error(p->diag, t->line, t->col, "`async fn` is not supported: TL has no async functions or futures");
      tl_diag_hint(p->diag, "remove `async` (and `.await`): TL runs one thread, so the call just runs");
      next(p);
      it->kind = TL_ITEM_FN;
      it->fn = fn(p);
      it->name = it->fn->name;
      return it;
    }
    if (peek_at(p, 1)->kind == TL_TOK_FN && word_is(p, t, "extern")) { /* reported, then skipped to its ';' */
      tl_diag_error(p->diag, t->line, t->col, "`extern fn` is not supported: TL cannot call foreign (C) functions");
      tl_diag_hint(p->diag, "define the function in TL, or use a built-in (docs/language.md)");
      for (int depth = 0; !at(p, TL_TOK_EOF); next(p)) {
        if (at(p, TL_TOK_LPAREN) || at(p, TL_TOK_LBRACE)) depth++;
        if ((at(p, TL_TOK_RPAREN) || at(p, TL_TOK_RBRACE)) && depth > 0) depth--;
        if (at(p, TL_TOK_SEMI) && !depth) {
          next(p);
          break;
        }
      }
      return NULL;
    }
    if (tl_parse_const_ahead(p)) {
      const_item(p, it);
      return it;
    }
    if (peek_at(p, 1)->kind == TL_TOK_LPAREN) return tl_parse_logic_item(p, it);
    tl_parse_unexpected(p, "an item (fn, struct, impl, a fact or a rule)");
  default: tl_parse_unexpected(p, "an item (fn, struct, impl, a fact or a rule)");
  }
}

/* one item with a recovery point; NULL after an error, when what is known of the
 * item (a name at least) goes to *broken */
tl_ast_item *tl_parse_guarded_item(parser *p, tl_ast_item **broken) {
  jmp_buf here;
  int start = p->pos;
  p->item = NULL;
  p->partial = NULL;
  if (setjmp(here)) {
    p->depth = 0;
    p->no_pipe_depth = 0;
    p->in_trait = false;
    p->no_struct = false;
    p->head = NULL;
    sync_item(p, false, start);
    tl_ast_item *it = p->item;
    if (it && it->kind == TL_ITEM_FN && !it->fn && p->partial) it->fn = p->partial, it->name = p->partial->name;
    if (it && it->name) *broken = it;
    return NULL;
  }
  p->recover = &here;
  tl_ast_item *it = item(p);
  p->recover = NULL;
  return it;
}
