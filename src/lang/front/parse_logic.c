/* parse_logic.c — Datalog syntax (LANGUAGE.md §8), recursive descent like parse.c:
 *   fact     = atom "."                      rule = atom ":-" literal ("," literal)* "."
 *   relation = "relation" ident "(" (type ("," type)*)? ")" (";" | ".")   type = entity | i64
 *   mod      = "mod" ident ";"               use  = "use" ident "::" "*" ";"
 *   literal  = ("not" | "!") atom | atom | term cmp term | var "=" term | var "=" aggregate
 *              (cmp = < <= > >= == !=; var a name, `$x` or an integer to check)
 *   aggregate = ("count" | ("sum" | "min" | "max") term) ":" "{" literal ("," literal)* "}"
 *   directive = ("." "input" | "." "output") ident ("(" ident "=" (string | ident) ("," ..)* ")")?
 *   atom     = ident "(" (term ("," term)*)? ")"
 *   term     = sum;  sum = product (("+" | "-") product)*;  product = unary (("*" | "/" | "%") unary)*
 *   unary    = "-" unary | int | ident | string | "$" ident | "(" term ")"   (`_`: the wildcard)
 * What a name means (an entity, a variable, a value in scope) is the checker's
 * business; a name in quotes, `"alice"`, is always the entity (an IDENT node whose op
 * is TL_TOK_STRING), so a rule can name one that a variable's name would shadow. An error longjmps to the entry point, which returns false with it. */
#include "lang/front/parse_logic.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 200 /* as parse.c: deep input is an error, not a stack overflow */

static const tl_token *peek(tl_lparse *lp) { return &lp->tok[lp->pos]; }
static const tl_token *peek_at(const tl_lparse *lp, int k) {
  return &lp->tok[lp->pos + k < lp->n ? lp->pos + k : lp->n - 1];
}
static bool at(tl_lparse *lp, tl_tok_kind k) { return peek(lp)->kind == k; }
static const tl_token *next(tl_lparse *lp) {
  const tl_token *t = peek(lp);
  if (t->kind != TL_TOK_EOF) lp->pos++;
  return t;
}

static _Noreturn void fail_hint(tl_lparse *lp, int pos, const char *hint, const char *fmt, ...) TL_PRINTF(4, 5);
static _Noreturn void fail_hint(tl_lparse *lp, int pos, const char *hint, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lp->err, sizeof lp->err, fmt, ap);
  va_end(ap);
  snprintf(lp->hint, sizeof lp->hint, "%s", hint ? hint : "");
  lp->err_pos = pos;
  longjmp(*lp->fail, 1);
}

static const char *describe(tl_lparse *lp, const tl_token *t, char *buf, size_t n) {
  switch (t->kind) {
  case TL_TOK_EOF: return "end of file";
  case TL_TOK_IDENT: snprintf(buf, n, "identifier '%.*s'", (int)t->len, lp->src + t->offset); return buf;
  case TL_TOK_INT: return "an integer";
  case TL_TOK_FLOAT: return "a float";
  case TL_TOK_STRING: return "a string";
  case TL_TOK_CHAR: return "a character";
  default: snprintf(buf, n, "'%s'", tl_tok_name(t->kind)); return buf;
  }
}

static _Noreturn void unexpected(tl_lparse *lp, const char *what, const char *hint) {
  char buf[128];
  fail_hint(lp, lp->pos, hint, "expected %s, found %s", what, describe(lp, peek(lp), buf, sizeof buf));
}

static const tl_token *expect(tl_lparse *lp, tl_tok_kind k, const char *what) {
  if (!at(lp, k)) unexpected(lp, what, NULL);
  return next(lp);
}

static void *alloc(tl_lparse *lp, size_t n) {
  void *m = tl_arena_alloc(lp->arena, n);
  if (!m) lp->oom = true, fail_hint(lp, lp->pos, NULL, "out of memory parsing the file");
  return m;
}

static char *text_of(tl_lparse *lp, const tl_token *t) {
  char *s = alloc(lp, t->len + 1);
  memcpy(s, lp->src + t->offset, t->len);
  return s;
}

static tl_node *node(tl_lparse *lp, tl_node_kind kind, const tl_token *t) {
  tl_node *n = alloc(lp, sizeof *n);
  n->kind = kind;
  n->line = t->line;
  n->col = t->col;
  return n;
}

static bool is_word(tl_lparse *lp, const tl_token *t, const char *w) {
  return t->kind == TL_TOK_IDENT && t->len == strlen(w) && !memcmp(lp->src + t->offset, w, t->len);
}

/* ---- terms ---- */

static tl_node *term(tl_lparse *lp);

static tl_node *lvar(tl_lparse *lp);

/* `"alice"`: the entity alice, whatever the rule's variables are called */
static tl_node *quoted_entity(tl_lparse *lp) {
  const tl_token *t = peek(lp);
  /* any text (Soufflé's symbols: `"Alice Smith"`); an entity prints as its text */
  if (!t->str || memchr(t->str, 0, t->len))
    fail_hint(lp, lp->pos, NULL, "a string in a fact, rule or query names an entity, and holds no NUL character");
  next(lp);
  tl_node *n = node(lp, TL_N_IDENT, t);
  char *s = alloc(lp, t->len + 1);
  memcpy(s, t->str, t->len);
  s[t->len] = 0;
  n->name = s;
  n->op = TL_TOK_STRING;
  return n;
}

/* `1.5` (the seed's weighted facts): the entity named by its shortest decimal form, so
 * 1.5 and 1.50 are one entity; a value to match and print, not to compute with */
void tl_lparse_float_name(double v, char b[40]) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(b, 40, "%.*g", prec, v);
    if (strtod(b, NULL) == v) break;
  }
  if (!strpbrk(b, ".eni")) strcat(b, ".0"); /* 2.0 stays a float's name, not the integer 2's */
}

static tl_node *float_entity(tl_lparse *lp, const tl_token *t, bool minus) {
  char b[40];
  tl_lparse_float_name(minus ? -t->v.f : t->v.f, b);
  tl_node *n = node(lp, TL_N_IDENT, t);
  char *s = alloc(lp, strlen(b) + 1);
  strcpy(s, b);
  n->name = s;
  n->op = TL_TOK_STRING;
  return n;
}

static tl_node *unary(tl_lparse *lp) {
  const tl_token *t = peek(lp);
  tl_node *n;
  if (++lp->depth > MAX_DEPTH) fail_hint(lp, lp->pos, NULL, "nesting is too deep (more than %d levels)", MAX_DEPTH);
  int num = t->kind == TL_TOK_MINUS ? 1 : 0; /* the number, after a `-` */
  const tl_token *nt = peek_at(lp, num);
  if (nt->kind == TL_TOK_INT && nt->big)
    fail_hint(lp, lp->pos + num, NULL, "integer literal %s is too large for i64", nt->str);
  if ((nt->kind == TL_TOK_INT || nt->kind == TL_TOK_FLOAT) && nt->str) /* `5u16` is the language's (lex.c) */
    fail_hint(lp, lp->pos + num, NULL, "a number in a fact, rule or query has no type suffix (`%s`)", nt->str);
  switch (t->kind) {
  case TL_TOK_MINUS:
    next(lp);
    if (at(lp, TL_TOK_FLOAT)) {
      n = float_entity(lp, next(lp), true);
      break;
    }
    if (at(lp, TL_TOK_INT)) { /* -3 is a constant, as in a fact */
      n = node(lp, TL_N_INT, t);
      n->ival = (int64_t)(0 - (uint64_t)next(lp)->v.i);
      break;
    }
    n = node(lp, TL_N_UNARY, t);
    n->op = TL_TOK_MINUS;
    n->lhs = unary(lp);
    break;
  case TL_TOK_INT: n = node(lp, TL_N_INT, next(lp)); n->ival = t->v.i; break;
  case TL_TOK_IDENT: n = node(lp, TL_N_IDENT, next(lp)); n->name = text_of(lp, t); break;
  case TL_TOK_STRING: n = quoted_entity(lp); break;
  case TL_TOK_FLOAT: n = float_entity(lp, next(lp), false); break;
  case TL_TOK_TRUE: case TL_TOK_FALSE: n = node(lp, TL_N_INT, next(lp)); n->ival = t->kind == TL_TOK_TRUE; break;
  case TL_TOK_DOLLAR: n = lvar(lp); break;
  case TL_TOK_LPAREN:
    next(lp);
    n = term(lp);
    expect(lp, TL_TOK_RPAREN, "')'");
    break;
  default:
    unexpected(lp, "a term (a name, a number, `$x` or `_`)", NULL);
  }
  lp->depth--;
  return n;
}

static tl_node *binary(tl_lparse *lp, tl_node *l, const tl_token *op, tl_node *r) {
  tl_node *n = node(lp, TL_N_BINARY, op);
  n->op = op->kind;
  n->lhs = l;
  n->rhs = r;
  return n;
}

static tl_node *product(tl_lparse *lp) {
  tl_node *n = unary(lp);
  while (at(lp, TL_TOK_STAR) || at(lp, TL_TOK_SLASH) || at(lp, TL_TOK_PERCENT)) {
    const tl_token *op = next(lp);
    n = binary(lp, n, op, unary(lp));
  }
  return n;
}

static tl_node *term(tl_lparse *lp) {
  tl_node *n = product(lp);
  while (at(lp, TL_TOK_PLUS) || at(lp, TL_TOK_MINUS)) {
    const tl_token *op = next(lp);
    n = binary(lp, n, op, product(lp));
  }
  return n;
}

/* ---- atoms and literals ---- */

static bool is_cmp(tl_tok_kind k) {
  return k == TL_TOK_LT || k == TL_TOK_LE || k == TL_TOK_GT || k == TL_TOK_GE || k == TL_TOK_EQ || k == TL_TOK_NE;
}

/* ident "(" terms ")" as a LOGIC node of the given kind */
static tl_node *atom(tl_lparse *lp, int kind, const char *what) {
  const tl_token *t = peek(lp);
  /* `mod` is a keyword, and the name of the remainder relation of rule bodies */
  if (t->kind != TL_TOK_IDENT && !(t->kind == TL_TOK_MOD && kind == TL_LOGIC_ATOM)) unexpected(lp, what, NULL);
  next(lp);
  tl_node *n = node(lp, TL_N_LOGIC, t);
  n->ival = kind;
  n->name = text_of(lp, t);
  char buf[160];
  snprintf(buf, sizeof buf, "'(' after `%s`", n->name);
  expect(lp, TL_TOK_LPAREN, buf);
  tl_node head = {0}, *cur = &head;
  while (!at(lp, TL_TOK_RPAREN)) {
    cur = cur->next = term(lp);
    if (at(lp, TL_TOK_RPAREN)) break;
    expect(lp, TL_TOK_COMMA, "',' or ')' in the arguments");
  }
  next(lp);
  n->args = head.next;
  return n;
}


static tl_node *literal(tl_lparse *lp);

static bool is_agg_word(tl_lparse *lp, const tl_token *t) {
  return is_word(lp, t, "count") || is_word(lp, t, "sum") || is_word(lp, t, "min") || is_word(lp, t, "max");
}

/* `count : { .. }`, `sum y : { .. }` (Soufflé's aggregates) after `n =`: a LOGIC node
 * whose op is TL_TOK_COLON, str the aggregate's name, lhs the result, rhs the value
 * (NULL for count), body the literals in braces (logic_front.c lowers it) */
static tl_node *aggregate(tl_lparse *lp, tl_node *result) {
  const tl_token *w = next(lp);
  tl_node *n = node(lp, TL_N_LOGIC, w);
  n->ival = TL_LOGIC_ATOM;
  n->op = TL_TOK_COLON;
  n->str = text_of(lp, w);
  n->name = n->str;
  n->lhs = result;
  n->line = result->line, n->col = result->col;
  if (!is_word(lp, w, "count")) {
    if (at(lp, TL_TOK_COLON))
      fail_hint(lp, lp->pos, "write `s = sum y : { w(x, y) }`", "`%s` needs the value it aggregates before `:`", n->str);
    n->rhs = term(lp);
  }
  if (!at(lp, TL_TOK_COLON))
    fail_hint(lp, lp->pos, "write `n = count : { edge(x, _) }`", "expected ':' and the aggregate's body in braces after `%s`", n->str);
  next(lp);
  expect(lp, TL_TOK_LBRACE, "'{' starting the aggregate's body");
  tl_node head = {0}, *cur = &head;
  for (;;) {
    if (at(lp, TL_TOK_RBRACE)) fail_hint(lp, lp->pos, NULL, "an aggregate's body holds at least one atom");
    cur = cur->next = literal(lp);
    if (cur->kind == TL_N_LOGIC && cur->op == TL_TOK_COLON)
      fail_hint(lp, lp->pos, NULL, "an aggregate inside an aggregate is not supported: give the inner one a rule of its own");
    if (at(lp, TL_TOK_RBRACE)) break;
    expect(lp, TL_TOK_COMMA, "',' or '}' in the aggregate's body");
  }
  next(lp);
  n->body = head.next;
  return n;
}

/* `r = x % 5` binds r to the value (also checks it, when r is bound elsewhere): the
 * arithmetic relation add(x % 5, 0, r); `n = count : { .. }` an aggregate */
static tl_node *binding(tl_lparse *lp) {
  tl_node *v = unary(lp); /* a name, `$x`, or an integer to check */
  const tl_token *eq = expect(lp, TL_TOK_ASSIGN, "'='");
  if (is_agg_word(lp, peek(lp))) {
    const tl_token *after = peek_at(lp, 1);
    bool agg = after->kind == TL_TOK_COLON || after->kind == TL_TOK_LBRACE ||
               (!is_word(lp, peek(lp), "count") && (after->kind == TL_TOK_IDENT || after->kind == TL_TOK_DOLLAR ||
                                                     after->kind == TL_TOK_INT || after->kind == TL_TOK_LPAREN));
    if (agg) return aggregate(lp, v);
  }
  tl_node *val = term(lp);
  if (is_cmp(peek(lp)->kind) || at(lp, TL_TOK_ASSIGN)) fail_hint(lp, lp->pos, NULL, "a binding `r = x %% 5` is not a comparison: write `r == ..`");
  tl_node *n = node(lp, TL_N_LOGIC, eq);
  n->ival = TL_LOGIC_ATOM;
  n->name = "add";
  n->line = v->line, n->col = v->col;
  tl_node *zero = node(lp, TL_N_INT, eq);
  zero->ival = 0;
  n->args = val;
  val->next = zero;
  zero->next = v;
  v->next = NULL;
  return n;
}

static tl_node *literal(tl_lparse *lp) {
  const tl_token *t = peek(lp);
  bool neg = t->kind == TL_TOK_NOT || (is_word(lp, t, "not") && peek_at(lp, 1)->kind == TL_TOK_IDENT);
  if (neg) {
    next(lp);
    tl_node *a = atom(lp, TL_LOGIC_ATOM, "an atom `p(..)` after `not`");
    a->op = TL_TOK_NOT;
    a->line = t->line; /* the literal starts at `not` */
    a->col = t->col;
    return a;
  }
  if ((t->kind == TL_TOK_IDENT || t->kind == TL_TOK_MOD) && peek_at(lp, 1)->kind == TL_TOK_LPAREN)
    return atom(lp, TL_LOGIC_ATOM, "an atom");
  if ((t->kind == TL_TOK_IDENT || t->kind == TL_TOK_DOLLAR || t->kind == TL_TOK_INT) &&
      peek_at(lp, t->kind == TL_TOK_DOLLAR ? 2 : 1)->kind == TL_TOK_ASSIGN)
    return binding(lp);
  tl_node *l = term(lp);
  if (!is_cmp(peek(lp)->kind))
    unexpected(lp, "an atom `p(..)` or a comparison", "a rule's body holds atoms, `not p(..)` and comparisons like `x > 3`");
  const tl_token *op = next(lp);
  tl_node *n = binary(lp, l, op, term(lp));
  if (is_cmp(peek(lp)->kind)) fail_hint(lp, lp->pos, NULL, "comparison operators cannot be chained");
  n->line = l->line; /* a literal is pointed at from its start */
  n->col = l->col;
  return n;
}

/* ---- entry points ---- */

#define GUARD(lp)                  \
  jmp_buf here;                    \
  (lp)->fail = &here;              \
  (lp)->depth = 0;                 \
  if (setjmp(here)) return false

/* `$x`: under the caller's recovery point (an entry point's GUARD) */
static tl_node *lvar(tl_lparse *lp) {
  const tl_token *d = next(lp);
  const tl_token *t = peek(lp);
  if (t->kind != TL_TOK_IDENT || t->offset != d->offset + 1)
    fail_hint(lp, lp->pos - 1, NULL, "`$` starts a query variable: write `$x`");
  next(lp);
  tl_node *n = node(lp, TL_N_LVAR, d);
  n->name = text_of(lp, t);
  return n;
}

bool tl_lparse_lvar(tl_lparse *lp, tl_node **out) {
  GUARD(lp);
  *out = lvar(lp);
  return true;
}

/* the `)` closing the `(` at i, or -1 (a `;` or the end comes first) */
static int close_of(const tl_lparse *lp, int i) {
  for (int depth = 0; i < lp->n; i++) {
    tl_tok_kind k = lp->tok[i].kind;
    if (k == TL_TOK_LPAREN || k == TL_TOK_LBRACKET || k == TL_TOK_LBRACE) depth++;
    else if (k == TL_TOK_RPAREN || k == TL_TOK_RBRACKET || k == TL_TOK_RBRACE) {
      if (--depth == 0) return k == TL_TOK_RPAREN ? i : -1;
    } else if (k == TL_TOK_SEMI || k == TL_TOK_EOF) return -1;
  }
  return -1;
}

/* is the token after the `.` at dot a name written right after it (a method's)? A
 * fact's `.` is followed by a space, a line end or the end, as Prolog's end token is */
static bool name_glued(const tl_lparse *lp, int dot) {
  const tl_token *d = &lp->tok[dot], *after = &lp->tok[dot + 1];
  return after->kind == TL_TOK_IDENT && after->line == d->line && after->offset == d->offset + 1;
}

bool tl_lparse_fact_ahead(const tl_lparse *lp) {
  /* `p(a).q(b).` is facts written without a space, not a call and a method: every
   * link `name(..)` and the last `.` a fact's end (tl_lparse_glued_end says so) */
  for (int i = lp->pos; i + 1 < lp->n;) {
    if (lp->tok[i].kind != TL_TOK_IDENT || lp->tok[i + 1].kind != TL_TOK_LPAREN) return false;
    int close = close_of(lp, i + 1);
    if (close < 0 || close + 2 >= lp->n || lp->tok[close + 1].kind != TL_TOK_DOT) return false;
    if (!name_glued(lp, close + 1)) return true;
    i = close + 2;
  }
  return false;
}

bool tl_lparse_glued_end(tl_lparse *lp) {
  int dot = lp->pos - 1;
  if (dot < 0 || lp->tok[dot].kind != TL_TOK_DOT || !name_glued(lp, dot)) return false;
  snprintf(lp->err, sizeof lp->err, "a space or a line end must follow the `.` that ends a fact or a rule");
  snprintf(lp->hint, sizeof lp->hint, "write `p(a). q(b).`: a name right after a `.` reads as a method call");
  lp->err_pos = dot;
  return true;
}

static void relation_item(tl_lparse *lp, tl_ast_item *it) {
  next(lp); /* relation */
  it->kind = TL_ITEM_RELATION;
  const tl_token *t = expect(lp, TL_TOK_IDENT, "a relation name after `relation`");
  it->atom = node(lp, TL_N_LOGIC, t);
  it->atom->name = it->name = text_of(lp, t);
  expect(lp, TL_TOK_LPAREN, "'(' and the column types");
  tl_node head = {0}, *cur = &head;
  while (!at(lp, TL_TOK_RPAREN)) {
    const tl_token *c = peek(lp);
    if (!is_word(lp, c, "entity") && !is_word(lp, c, "i64"))
      fail_hint(lp, lp->pos, "write `relation parent(entity, entity);` or `relation age(entity, i64);`",
                "a relation's columns are `entity` or `i64`");
    cur = cur->next = node(lp, TL_N_IDENT, next(lp));
    cur->name = text_of(lp, c);
    if (at(lp, TL_TOK_RPAREN)) break;
    expect(lp, TL_TOK_COMMA, "',' or ')' in the column types");
  }
  next(lp);
  it->atom->args = head.next;
  if (!at(lp, TL_TOK_SEMI) && !at(lp, TL_TOK_DOT)) unexpected(lp, "';' after the relation declaration", NULL);
  next(lp);
}

/* `.input edge`, `.output path(IO=stdout)`, `.input edge(filename="e.csv", delimiter=",")`
 * (Soufflé's directives): options are name = string or name */
static void io_item(tl_lparse *lp, tl_ast_item *it) {
  const tl_token *dot = next(lp), *w = peek(lp);
  if ((!is_word(lp, w, "input") && !is_word(lp, w, "output")) || dot->offset + 1 != w->offset)
    fail_hint(lp, lp->pos, "Soufflé's directives `.input edge` and `.output path` are supported",
              "expected `.input` or `.output`");
  next(lp);
  it->kind = TL_ITEM_IO;
  it->atom = node(lp, TL_N_LOGIC, dot);
  it->atom->str = text_of(lp, w);
  const tl_token *r = expect(lp, TL_TOK_IDENT, "a relation name after the directive");
  it->atom->name = it->name = text_of(lp, r);
  tl_node head = {0}, *cur = &head;
  if (at(lp, TL_TOK_LPAREN) && peek(lp)->line == r->line) {
    next(lp);
    while (!at(lp, TL_TOK_RPAREN)) {
      const tl_token *k = expect(lp, TL_TOK_IDENT, "an option name (IO, filename, delimiter)");
      cur = cur->next = node(lp, TL_N_IDENT, k);
      cur->name = text_of(lp, k);
      expect(lp, TL_TOK_ASSIGN, "'=' after the option's name");
      const tl_token *v = peek(lp);
      if (v->kind == TL_TOK_STRING && v->str) {
        char *s = alloc(lp, v->len + 1);
        memcpy(s, v->str, v->len);
        cur->str = s, cur->len = v->len;
      } else if (v->kind == TL_TOK_IDENT || v->kind == TL_TOK_INT || v->kind == TL_TOK_TRUE || v->kind == TL_TOK_FALSE) {
        cur->str = text_of(lp, v), cur->len = v->len;
      } else unexpected(lp, "the option's value: a name or a string", NULL);
      next(lp);
      if (at(lp, TL_TOK_RPAREN)) break;
      expect(lp, TL_TOK_COMMA, "',' or ')' in the options");
    }
    next(lp);
  }
  it->atom->args = head.next;
  if (at(lp, TL_TOK_SEMI) || (at(lp, TL_TOK_DOT) && peek(lp)->line == r->line)) next(lp); /* optional end */
}

bool tl_lparse_item(tl_lparse *lp, tl_ast_item *it) {
  GUARD(lp);
  const tl_token *t = peek(lp);
  if (t->kind == TL_TOK_DOT) {
    io_item(lp, it);
    return true;
  }
  if (t->kind == TL_TOK_RELATION) {
    relation_item(lp, it);
    return true;
  }
  if (t->kind == TL_TOK_MOD || t->kind == TL_TOK_USE) {
    next(lp);
    it->kind = t->kind == TL_TOK_MOD ? TL_ITEM_MOD : TL_ITEM_USE;
    it->name = text_of(lp, expect(lp, TL_TOK_IDENT, t->kind == TL_TOK_MOD ? "a module name after `mod`" : "a module name after `use`"));
    if (t->kind == TL_TOK_USE) {
      if (!at(lp, TL_TOK_COLONCOLON) || peek_at(lp, 1)->kind != TL_TOK_STAR)
        fail_hint(lp, lp->pos, NULL, "expected `::*` after the module name: only `use %s::*;` is supported", it->name);
      next(lp), next(lp);
    } else if (at(lp, TL_TOK_LBRACE)) {
      fail_hint(lp, lp->pos, NULL, "a module is a file: write `mod %s;` and put its items in %s.tl", it->name, it->name);
    }
    expect(lp, TL_TOK_SEMI, "';'");
    return true;
  }
  if (t->kind != TL_TOK_IDENT || peek_at(lp, 1)->kind != TL_TOK_LPAREN)
    unexpected(lp, "an item (fn, struct, impl, a fact or a rule)", NULL);
  it->atom = atom(lp, TL_LOGIC_ATOM, "a fact or a rule");
  it->name = it->atom->name;
  if (at(lp, TL_TOK_DOT)) {
    next(lp);
    it->kind = TL_ITEM_FACT;
    return true;
  }
  if (!at(lp, TL_TOK_IMPLIED_BY)) unexpected(lp, "'.' to end the fact or ':-' to start a rule's body", NULL);
  next(lp);
  it->kind = TL_ITEM_RULE;
  tl_node head = {0}, *cur = &head;
  for (;;) {
    cur = cur->next = literal(lp);
    if (at(lp, TL_TOK_DOT)) break;
    if (at(lp, TL_TOK_SEMI)) fail_hint(lp, lp->pos, NULL, "a rule ends with '.', not ';'");
    expect(lp, TL_TOK_COMMA, "',' or '.' after the literal");
  }
  next(lp);
  it->body = head.next;
  return true;
}

void tl_lparse_skip_item(tl_lparse *lp, int start) {
  if (lp->tok[start].kind == TL_TOK_DOT) { /* a directive is one line */
    while (peek(lp)->kind != TL_TOK_EOF && peek(lp)->line == lp->tok[start].line) next(lp);
    return;
  }
  bool dot_only = lp->tok[start].kind == TL_TOK_IDENT; /* a rule written with `;` goes on to its `.` */
  int depth = 0;
  for (bool first = true;; first = false) {
    tl_tok_kind k = peek(lp)->kind;
    if (k == TL_TOK_EOF) return;
    if (!first && depth == 0 && (k == TL_TOK_FN || k == TL_TOK_STRUCT || k == TL_TOK_IMPL)) return;
    next(lp);
    if (k == TL_TOK_LPAREN) depth++;
    else if (k == TL_TOK_RPAREN && depth > 0) depth--;
    else if (depth == 0 && (k == TL_TOK_DOT || (k == TL_TOK_SEMI && !dot_only))) return;
  }
}

/* ---- dump ---- */

void tl_logic_dump_node(tl_strbuf *b, const tl_node *n) {
  switch (n->kind) {
  case TL_N_INT: tl_strbuf_printf(b, "%lld", (long long)n->ival); return;
  case TL_N_IDENT: tl_strbuf_printf(b, n->op == TL_TOK_STRING ? "\"%s\"" : "%s", n->name); return;
  case TL_N_LVAR: tl_strbuf_printf(b, "$%s", n->name); return;
  case TL_N_UNARY: tl_strbuf_puts(b, "(- "); tl_logic_dump_node(b, n->lhs); break;
  case TL_N_BINARY:
    tl_strbuf_printf(b, "(%s ", tl_tok_name(n->op));
    tl_logic_dump_node(b, n->lhs);
    tl_strbuf_puts(b, " ");
    tl_logic_dump_node(b, n->rhs);
    break;
  case TL_N_LOGIC: {
    static const char *const kinds[] = {"", "? ", "", "fact ", ""};
    const char *k = n->ival >= 0 && n->ival <= TL_LOGIC_ENTITY_NAME ? kinds[n->ival] : "";
    tl_strbuf_printf(b, "(%s%s%s", n->op == TL_TOK_NOT ? "not " : "", k, n->name);
    for (const tl_node *a = n->args; a; a = a->next) tl_strbuf_puts(b, " "), tl_logic_dump_node(b, a);
    break;
  }
  default: tl_strbuf_puts(b, "(?"); break;
  }
  tl_strbuf_puts(b, ")");
}

void tl_logic_dump_item(tl_strbuf *b, const tl_ast_item *it) {
  switch (it->kind) {
  case TL_ITEM_FACT: tl_strbuf_puts(b, "(fact "); tl_logic_dump_node(b, it->atom); break;
  case TL_ITEM_RULE:
    tl_strbuf_puts(b, "(rule ");
    tl_logic_dump_node(b, it->atom);
    for (const tl_node *l = it->body; l; l = l->next) tl_strbuf_puts(b, " "), tl_logic_dump_node(b, l);
    break;
  case TL_ITEM_RELATION:
    tl_strbuf_printf(b, "(relation %s", it->name);
    for (const tl_node *a = it->atom->args; a; a = a->next) tl_strbuf_printf(b, " %s", a->name);
    break;
  case TL_ITEM_MOD: tl_strbuf_printf(b, "(mod %s", it->name); break;
  case TL_ITEM_USE: tl_strbuf_printf(b, "(use %s", it->name); break;
  default: tl_strbuf_puts(b, "(?"); break;
  }
  tl_strbuf_puts(b, ")");
}
