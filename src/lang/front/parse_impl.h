/* parse_impl.h — what the parser's files share (parse.c: tokens, errors, expressions,
 * statements, the program; parse_item.c: items and the types written in them): the
 * parser state, the token primitives, and the productions one file calls in the other. */
#ifndef TL_LANG_PARSE_IMPL_H
#define TL_LANG_PARSE_IMPL_H

#include "lang/front/parse.h"

#include <setjmp.h>

typedef struct {
  const tl_token *tok;
  int pos, n;
  tl_diag *diag;
  tl_arena *arena;
  jmp_buf *recover; /* the innermost recovery point */
  bool no_struct;   /* in an if/while/for head: `x {` opens the body, not a struct literal */
  const char *head; /* ... which head, for the hint: "an `if` condition" */
  int depth;
  int no_pipe_depth; /* an array's elements: `|` at this depth starts a comprehension's clauses */
  int fails;         /* syntax errors so far, reported or not (an echo of a lexical error is not) */
  tl_ast_item *item; /* the item being parsed and */
  tl_fn *partial;    /* the function: what is known of them when they fail */
  bool in_trait;     /* a method may end in `;` (a trait's required method) */
} parser;

/* ---- tokens ---- */

static inline const tl_token *peek(parser *p) { return &p->tok[p->pos]; }
static inline const tl_token *peek_at(parser *p, int k) { return &p->tok[p->pos + k < p->n ? p->pos + k : p->n - 1]; }
static inline bool at(parser *p, tl_tok_kind k) { return peek(p)->kind == k; }

static inline const tl_token *next(parser *p) {
  const tl_token *t = peek(p);
  if (t->kind != TL_TOK_EOF) p->pos++; /* EOF stays: every loop sees it and stops */
  return t;
}

static inline bool consume(parser *p, tl_tok_kind k) {
  if (!at(p, k)) return false;
  next(p);
  return true;
}

/* ---- errors and the arena (parse.c) ---- */

/* an error at t, then to the innermost recovery point */
_Noreturn void tl_parse_fail_at(parser *p, const tl_token *t, const char *fmt, ...) TL_PRINTF(3, 4);
/* "expected WHAT, found ..."; a reserved word says so instead */
_Noreturn void tl_parse_unexpected(parser *p, const char *what);
/* the next token, of kind k; `what` names it and where it belongs: "';' after the expression" */
const tl_token *tl_parse_expect(parser *p, tl_tok_kind k, const char *what);
void *tl_parse_alloc(parser *p, size_t n); /* in the arena; out of memory is a parse error */
const char *tl_parse_ident(parser *p, const char *what);
void tl_parse_enter(parser *p); /* one level deeper (p->depth--: out of it); too deep is an error */

/* ---- productions ---- */

tl_node *tl_parse_block(parser *p);                            /* parse.c */
tl_node *tl_parse_expr(parser *p);                             /* parse.c */
/* parse.c: a `const` or `static` item starts here (the words are names elsewhere, so
 * only when a name or `mut` follows) */
bool tl_parse_const_ahead(parser *p);
tl_ast_item *tl_parse_logic_item(parser *p, tl_ast_item *it);  /* parse.c: Datalog items */
tl_type *tl_parse_type(parser *p);                             /* parse_item.c */
tl_type *tl_parse_generic_args(parser *p, tl_type *ty);        /* parse_item.c: `<T, U>` into ty->elems */
/* parse_item.c: one item with a recovery point; NULL after an error, when what is
 * known of the item (a name at least) goes to *broken */
tl_ast_item *tl_parse_guarded_item(parser *p, tl_ast_item **broken);

#endif
