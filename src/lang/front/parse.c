/* parse.c — the TL parser: recursive descent, one function per grammar production,
 * precedence climbing for binary operators. An error is reported once and unwinds
 * (longjmp) to the innermost recovery point — the statement or the item being
 * parsed — which skips to where parsing can go on; all nodes are in the arena, so
 * unwinding leaks nothing. In: the tokens (tl_parse); out: the program. This file:
 * errors, expressions, statements, patterns, the program; parse_item.c: items and
 * types; parse_impl.h: what the two share. */
#include "lang/front/parse_impl.h"
#include "lang/front/parse_logic.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 200 /* nesting of expressions and blocks: a deep file is an error, not a stack overflow */

/* ---- errors ---- */

/* an error at t; not reported when t is, or follows, a token with a lexical error:
 * `"abc` eats the `"` the parser would want next, and saying so again is noise */
static bool report(parser *p, const tl_token *t, const char *fmt, va_list ap) {
  p->fails++;
  if (t->lex_error || (t > p->tok && t[-1].lex_error)) return false;
  tl_diag_verror(p->diag, t->line, t->col, fmt, ap);
  return true;
}

_Noreturn void tl_parse_fail_at(parser *p, const tl_token *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(p, t, fmt, ap);
  va_end(ap);
  longjmp(*p->recover, 1);
}

/* an error with a hint under it, after which parsing goes on (it knows what was meant) */
static void error_hint(parser *p, const tl_token *t, const char *hint, const char *fmt, ...) TL_PRINTF(4, 5);
static void error_hint(parser *p, const tl_token *t, const char *hint, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bool said = report(p, t, fmt, ap);
  va_end(ap);
  if (said) tl_diag_hint(p->diag, "%s", hint);
}

/* "'}'", "identifier 'x'", "end of file" */
static const char *describe(parser *p, const tl_token *t, char *buf, size_t n) {
  switch (t->kind) {
  case TL_TOK_EOF: return "end of file";
  case TL_TOK_IDENT: snprintf(buf, n, "identifier '%.*s'", (int)t->len, p->diag->src + t->offset); return buf;
  case TL_TOK_INT: return "an integer";
  case TL_TOK_FLOAT: return "a float";
  case TL_TOK_STRING: return "a string";
  case TL_TOK_CHAR: return "a character";
  default: snprintf(buf, n, "'%s'", tl_tok_name(t->kind)); return buf;
  }
}

/* "expected WHAT, found ..."; a reserved word says so instead */
_Noreturn void tl_parse_unexpected(parser *p, const char *what) {
  const tl_token *t = peek(p);
  if (tl_tok_is_reserved(t->kind)) tl_parse_fail_at(p, t, "`%s` is reserved", tl_tok_name(t->kind));
  char buf[128];
  tl_parse_fail_at(p, t, "expected %s, found %s", what, describe(p, t, buf, sizeof buf));
}

/* `what` names the token and where it belongs: "';' after the expression" */
const tl_token *tl_parse_expect(parser *p, tl_tok_kind k, const char *what) {
  if (!at(p, k)) tl_parse_unexpected(p, what);
  return next(p);
}

/* ---- arena ---- */

void *tl_parse_alloc(parser *p, size_t n) {
  void *m = tl_arena_alloc(p->arena, n);
  if (!m) p->diag->oom = true, tl_parse_fail_at(p, peek(p), "out of memory parsing the file");
  return m;
}

static char *text_of(parser *p, const tl_token *t) {
  char *s = tl_parse_alloc(p, t->len + 1);
  memcpy(s, p->diag->src + t->offset, t->len);
  return s;
}

static tl_node *new_node(parser *p, tl_node_kind kind, const tl_token *t) {
  tl_node *n = tl_parse_alloc(p, sizeof *n);
  n->kind = kind;
  n->line = t->line;
  n->col = t->col;
  return n;
}

const char *tl_parse_ident(parser *p, const char *what) { return text_of(p, tl_parse_expect(p, TL_TOK_IDENT, what)); }

void tl_parse_enter(parser *p) {
  if (++p->depth > MAX_DEPTH) tl_parse_fail_at(p, peek(p), "nesting is too deep (more than %d levels)", MAX_DEPTH);
}

/* ---- Datalog (parse_logic.c) ---- */

static tl_lparse logic_at(parser *p) {
  return (tl_lparse){.tok = p->tok, .n = p->n, .pos = p->pos, .src = p->diag->src, .arena = p->arena};
}

static bool say(parser *p, const tl_token *t, const char *fmt, ...) TL_PRINTF(3, 4);
static bool say(parser *p, const tl_token *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  bool said = report(p, t, fmt, ap);
  va_end(ap);
  return said;
}

/* the logic parser's error, reported as the parser's own (so an echo of a lexical
 * error is not); unwind: then to the recovery point, as tl_parse_fail_at */
static void logic_report(parser *p, tl_lparse *lp, bool unwind) {
  if (lp->oom) p->diag->oom = true;
  if (say(p, &p->tok[lp->err_pos], "%s", lp->err) && lp->hint[0]) tl_diag_hint(p->diag, "%s", lp->hint);
  if (unwind) longjmp(*p->recover, 1);
}

/* `p(a).q(b).`: the first fact's `.` needs a space after it; reported, and parsing
 * goes on with the next fact */
static void glued_end(parser *p) {
  tl_lparse lp = logic_at(p);
  if (tl_lparse_glued_end(&lp)) logic_report(p, &lp, false);
}

/* `?p(..)`, `$x`, a fact statement: tl_lparse_query and the like, at p's position */
static tl_node *logic_node(parser *p, bool (*parse)(tl_lparse *, tl_node **)) {
  tl_lparse lp = logic_at(p);
  tl_node *n = NULL;
  bool ok = parse(&lp, &n);
  p->pos = lp.pos;
  if (!ok) logic_report(p, &lp, true);
  return n;
}

/* a fact, rule, `relation`, `mod` or `use` item; after an error, reported, the rest
 * of it is skipped and NULL returned (the items after it still parse) */
tl_ast_item *tl_parse_logic_item(parser *p, tl_ast_item *it) {
  tl_lparse lp = logic_at(p);
  int start = p->pos;
  bool ok = tl_lparse_item(&lp, it);
  p->pos = lp.pos;
  if (ok) return glued_end(p), it;
  logic_report(p, &lp, false);
  lp.pos = p->pos;
  tl_lparse_skip_item(&lp, start);
  p->pos = lp.pos;
  return NULL;
}

/* ---- expressions ---- */

static tl_node *expr(parser *p);
static tl_node *pattern(parser *p);
static tl_node *pattern_one(parser *p);
static tl_node *match_expr(parser *p);

/* an expression with the struct-literal restriction on or off, restored after */
static tl_node *expr_with(parser *p, bool no_struct) {
  bool saved = p->no_struct;
  p->no_struct = no_struct;
  tl_node *n = expr(p);
  p->no_struct = saved;
  return n;
}

/* the head of an if/while/for or a comprehension clause: no struct literal */
static tl_node *head_expr(parser *p, const char *what) {
  const char *saved = p->head;
  p->head = what;
  tl_node *n = expr_with(p, true);
  p->head = saved;
  return n;
}

// args = (arg ("," arg)* ","?)? CLOSE    arg = expr | ident ":" expr (in calls: a named
//        argument, FIELD_INIT: `Tensor::randn([2], requires_grad: true)`)
static tl_node *args(parser *p, tl_tok_kind close, const char *what);

// query = "?" ident "(" args ")"      fact_stmt = ident "(" args ")" "."
//   -- a query's or a fact statement's arguments are expressions (`$x` is a primary):
//      what each means is the checker's business
static tl_node *logic_call(parser *p, int kind) {
  const tl_token *t = peek(p);
  if (kind == TL_LOGIC_QUERY) next(p);
  const tl_token *name = tl_parse_expect(p, TL_TOK_IDENT, kind == TL_LOGIC_QUERY ? "a relation after `?`: `?p(a, $x)`" : "a fact");
  tl_node *n = new_node(p, TL_N_LOGIC, t);
  n->ival = kind;
  n->name = text_of(p, name);
  tl_parse_expect(p, TL_TOK_LPAREN, "'(' and the arguments");
  n->args = args(p, TL_TOK_RPAREN, "',' or ')' in the arguments");
  if (kind == TL_LOGIC_FACT) {
    tl_parse_expect(p, TL_TOK_DOT, "'.' to end the fact");
    glued_end(p);
  }
  return n;
}

static tl_node *args(parser *p, tl_tok_kind close, const char *what) {
  tl_node head = {0}, *cur = &head;
  while (!at(p, close)) {
    if (close == TL_TOK_RPAREN && at(p, TL_TOK_IDENT) && peek_at(p, 1)->kind == TL_TOK_COLON) {
      const tl_token *t = next(p);
      cur = cur->next = new_node(p, TL_N_FIELD_INIT, t);
      cur->name = text_of(p, t);
      next(p);
      cur->lhs = expr_with(p, false);
    } else cur = cur->next = expr_with(p, false);
    if (at(p, close)) break;
    tl_parse_expect(p, TL_TOK_COMMA, what);
  }
  next(p);
  return head.next;
}

/* a comprehension clause that is neither `name <- ...` nor a filter: `<-` after
 * something other than a name, before the clause ends (at its own nesting) */
static bool larrow_ahead(parser *p) {
  int depth = 0;
  for (int i = p->pos; i < p->n; i++) {
    tl_tok_kind k = p->tok[i].kind;
    if (k == TL_TOK_LPAREN || k == TL_TOK_LBRACKET) depth++;
    else if ((k == TL_TOK_RPAREN || k == TL_TOK_RBRACKET) && depth > 0) depth--;
    else if (depth == 0 && (k == TL_TOK_COMMA || k == TL_TOK_RBRACKET || k == TL_TOK_LBRACE || k == TL_TOK_RBRACE ||
                            k == TL_TOK_SEMI || k == TL_TOK_EOF))
      return false;
    else if (depth == 0 && k == TL_TOK_LARROW) return true;
  }
  return false;
}

// clause = ident "<-" expr_no_struct | expr_no_struct    -- a generator (a range a..b) or a filter
static tl_node *clause(parser *p) {
  const tl_token *t = peek(p);
  if (t->kind == TL_TOK_IDENT && peek_at(p, 1)->kind == TL_TOK_LARROW) {
    tl_node *g = new_node(p, TL_N_GEN, t);
    g->name = text_of(p, next(p));
    next(p);
    const tl_token *r = peek(p);
    g->lhs = head_expr(p, "a comprehension clause");
    if (g->lhs->kind != TL_N_RANGE || !g->lhs->lhs || !g->lhs->rhs) tl_parse_fail_at(p, r, "a generator needs a range `a..b`");
    return g;
  }
  if (larrow_ahead(p)) tl_parse_fail_at(p, t, "a generator's variable must be a name: `i <- 0..n`");
  return head_expr(p, "a comprehension clause");
}

// compr = "[" (ident ("," ident)* ","?)? "|" (clause ("," clause)* ","?)? block? "]"
//         -- at least a clause or the block; called at the "|" with the axes parsed
static tl_node *comprehension(parser *p, tl_node *n, const tl_token *bad_axis) {
  if (bad_axis) tl_parse_fail_at(p, bad_axis, "a comprehension's output axes must be names");
  n->kind = TL_N_COMPR;
  next(p); /* | */
  tl_node head = {0}, *cur = &head;
  while (!at(p, TL_TOK_RBRACKET) && !at(p, TL_TOK_LBRACE)) {
    cur = cur->next = clause(p);
    if (at(p, TL_TOK_RBRACKET) || at(p, TL_TOK_LBRACE)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',', '{' or ']' after the comprehension's clause");
  }
  n->stmts = head.next;
  if (at(p, TL_TOK_LBRACE)) n->body = tl_parse_block(p);
  if (!n->stmts && !n->body && at(p, TL_TOK_RBRACKET)) tl_parse_fail_at(p, peek(p), "a comprehension needs clauses or a body");
  tl_parse_expect(p, TL_TOK_RBRACKET, "']' to close the comprehension");
  return n;
}

// array = "[" (expr ("," expr)* ","?)? "]" | compr
static tl_node *array(parser *p) {
  tl_node *n = new_node(p, TL_N_ARRAY, next(p));
  tl_node head = {0}, *cur = &head;
  const tl_token *bad_axis = NULL; /* the first element that is not a name */
  int saved = p->no_pipe_depth;
  p->no_pipe_depth = p->depth + 1; /* the element's own expr, not one nested in it */
  while (!at(p, TL_TOK_RBRACKET) && !at(p, TL_TOK_PIPE)) {
    const tl_token *t = peek(p);
    cur = cur->next = expr_with(p, false);
    if (cur->kind != TL_N_IDENT && !bad_axis) bad_axis = t;
    if (at(p, TL_TOK_RBRACKET) || at(p, TL_TOK_PIPE)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or ']' in the array");
  }
  p->no_pipe_depth = saved;
  n->args = head.next;
  if (at(p, TL_TOK_PIPE)) return comprehension(p, n, bad_axis);
  next(p);
  return n;
}

/* `vec![a, b, c]` (ival 0) and `vec![x; n]` (ival 1): an ARRAY named "vec!" */
static tl_node *vec_macro(parser *p) {
  tl_node *n = new_node(p, TL_N_ARRAY, next(p)); /* at `vec` */
  next(p);
  next(p);
  n->name = "vec!";
  tl_parse_enter(p);
  tl_node head = {0}, *cur = &head;
  while (!at(p, TL_TOK_RBRACKET)) {
    cur = cur->next = expr(p);
    if (n->args == NULL && head.next == cur && consume(p, TL_TOK_SEMI)) {
      cur = cur->next = expr(p);
      n->ival = 1;
      break;
    }
    if (at(p, TL_TOK_RBRACKET)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or ']' in `vec![..]`");
  }
  n->args = head.next;
  tl_parse_expect(p, TL_TOK_RBRACKET, "']' after the elements of `vec![..]`");
  p->depth--;
  return n;
}

/* at a `{`: does what follows look like fields, `}` or `name:` / `name,` / `name }`? */
static bool fields_ahead(parser *p) {
  tl_tok_kind a = peek_at(p, 1)->kind, b = peek_at(p, 2)->kind;
  return a == TL_TOK_RBRACE ||
         (a == TL_TOK_IDENT && (b == TL_TOK_COLON || b == TL_TOK_COMMA || b == TL_TOK_RBRACE));
}

/* `P {` opens a struct literal only outside if/while/for heads, and only when what
 * follows looks like fields */
static bool struct_lit_ahead(parser *p) {
  if (p->no_struct || peek_at(p, 1)->kind != TL_TOK_LBRACE) return false;
  p->pos++;
  bool yes = fields_ahead(p);
  p->pos--;
  return yes;
}

// struct_lit = ident "{" (field_init ("," field_init)* ","?)? "}"
// field_init = ident (":" expr)?
static tl_node *struct_lit_fields(parser *p, tl_node *n);
static tl_node *struct_lit(parser *p) {
  tl_node *n = new_node(p, TL_N_STRUCT_LIT, peek(p));
  n->name = tl_parse_ident(p, "a struct name");
  return struct_lit_fields(p, n);
}

/* a struct literal's `{ fields }`, its name (`P`, or a variant's path `E::C`) read */
static tl_node *struct_lit_fields(parser *p, tl_node *n) {
  n->kind = TL_N_STRUCT_LIT;
  tl_parse_expect(p, TL_TOK_LBRACE, "'{'");
  tl_node head = {0}, *cur = &head;
  while (!at(p, TL_TOK_RBRACE)) {
    const tl_token *t = peek(p);
    cur = cur->next = new_node(p, TL_N_FIELD_INIT, t);
    cur->name = tl_parse_ident(p, "a field name");
    if (consume(p, TL_TOK_COLON)) {
      cur->lhs = expr_with(p, false);
    } else { /* shorthand: `y` is `y: y` */
      cur->lhs = new_node(p, TL_N_IDENT, t);
      cur->lhs->name = cur->name;
    }
    if (at(p, TL_TOK_RBRACE)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or '}' in the struct literal");
  }
  next(p);
  n->args = head.next;
  return n;
}

static tl_node *if_expr(parser *p);

/* `if let P = e { a } else { b }` is `match e { P => a, _ => b }`; without `else`, the
 * second arm has no value (rhs NULL). t: the `if`. */
static tl_node *if_let(parser *p, const tl_token *t) {
  tl_node *n = new_node(p, TL_N_MATCH, t);
  n->ival = 1;
  next(p); /* let */
  tl_node *arm = new_node(p, TL_N_ARM, peek(p)), *other = new_node(p, TL_N_ARM, t);
  arm->lhs = pattern(p);
  tl_parse_expect(p, TL_TOK_ASSIGN, "'=' after the pattern of `if let`");
  n->lhs = head_expr(p, "an `if let` head");
  arm->rhs = tl_parse_block(p);
  other->lhs = new_node(p, TL_N_IDENT, t);
  other->lhs->name = "_";
  if (consume(p, TL_TOK_ELSE)) other->rhs = at(p, TL_TOK_IF) ? if_expr(p) : tl_parse_block(p);
  arm->next = other;
  n->args = arm;
  return n;
}

// if = "if" expr_no_struct block ("else" (if | block))? | "if" "let" pattern "=" expr_no_struct block ("else" (if | block))?
static tl_node *if_expr(parser *p) {
  tl_parse_enter(p);
  if (peek_at(p, 1)->kind == TL_TOK_LET) {
    tl_node *m = if_let(p, next(p));
    p->depth--;
    return m;
  }
  tl_node *n = new_node(p, TL_N_IF, next(p));
  n->cond = head_expr(p, "an `if` condition");
  n->then = tl_parse_block(p);
  if (consume(p, TL_TOK_ELSE)) n->els = at(p, TL_TOK_IF) ? if_expr(p) : tl_parse_block(p);
  p->depth--;
  return n;
}

/* a turbofish `::<i64, f32>` after path segment seg: its types as n->type's elems */
static void turbofish(parser *p, tl_node *n, int seg) {
  const tl_token *t = peek(p);
  if (n->type) tl_parse_fail_at(p, t, "a path takes one list of type arguments");
  tl_type *ty = tl_parse_alloc(p, sizeof *ty);
  ty->line = t->line;
  ty->col = t->col;
  ty->name = "::<>";
  ty->rank = seg;
  tl_parse_generic_args(p, ty);
  n->type = ty;
}

// path = ident ("::" ident)+   -- any segment may be followed by a turbofish "::" "<" type,* ">"
static tl_node *path_or_ident(parser *p) {
  const tl_token *t = next(p);
  if (!at(p, TL_TOK_COLONCOLON)) {
    tl_node *n = new_node(p, TL_N_IDENT, t);
    n->name = text_of(p, t);
    return n;
  }
  tl_node *n = new_node(p, TL_N_PATH, t);
  char b[512]; /* the segments joined by `::`, as written but for spaces and turbofish */
  size_t len = (size_t)snprintf(b, sizeof b, "%s", text_of(p, t));
  int seg = 0;
  while (consume(p, TL_TOK_COLONCOLON)) {
    if (at(p, TL_TOK_LT)) {
      turbofish(p, n, seg);
      if (at(p, TL_TOK_COLONCOLON)) continue;
      break;
    }
    const tl_token *name = tl_parse_expect(p, TL_TOK_IDENT, "a name after '::'");
    if (len < sizeof b) len += (size_t)snprintf(b + len, sizeof b - len, "::%s", text_of(p, name));
    if (len >= sizeof b) tl_parse_fail_at(p, name, "this path is too long");
    seg++;
  }
  char *s = tl_parse_alloc(p, len + 1);
  memcpy(s, b, len + 1);
  if (!seg) n->kind = TL_N_IDENT; /* `f::<i64>` */
  n->name = s;
  return n;
}

/* a closure parameter written as a tuple pattern, `|(i, x)| ..`: a parameter `$pN` and
 * `let (i, x) = $pN;` first in the body, as `for (k, v) in m` is desugared */
static tl_node *closure_pattern(parser *p, tl_node *a, int i, tl_node **lets) {
  tl_node *pat = pattern_one(p); /* no `p | q`: `|` ends the parameters */
  char *name = tl_parse_alloc(p, 16);
  snprintf(name, 16, "$p%d", i);
  a->name = name;
  tl_node *let = new_node(p, TL_N_LET, peek(p));
  let->line = pat->line;
  let->col = pat->col;
  let->lhs = pat;
  let->rhs = new_node(p, TL_N_IDENT, peek(p));
  let->rhs->name = name;
  let->rhs->line = pat->line;
  let->rhs->col = pat->col;
  let->next = *lets;
  *lets = let;
  return a;
}

// closure = ("||" | "|" ((ident | pattern) (":" type)?),* "|") ("->" type block | expr)
static tl_node *closure(parser *p) {
  const tl_token *t = peek(p);
  tl_node *n = new_node(p, TL_N_CLOSURE, t);
  tl_node *pats = NULL;
  tl_parse_enter(p);
  if (!consume(p, TL_TOK_OROR)) {
    next(p);
    tl_node **tail = &n->args, *lets = NULL;
    for (int i = 0; !at(p, TL_TOK_PIPE); i++) {
      tl_node *a = new_node(p, TL_N_IDENT, peek(p));
      if (at(p, TL_TOK_LPAREN)) closure_pattern(p, a, i, &lets);
      else a->name = tl_parse_ident(p, "a closure parameter");
      if (consume(p, TL_TOK_COLON)) a->type = tl_parse_type(p);
      *tail = a;
      tail = &a->next;
      if (at(p, TL_TOK_PIPE)) break;
      tl_parse_expect(p, TL_TOK_COMMA, "',' or '|' in the closure's parameters");
    }
    next(p);
    pats = lets;
  }
  if (consume(p, TL_TOK_ARROW)) {
    n->type = tl_parse_type(p);
    if (!at(p, TL_TOK_LBRACE)) tl_parse_unexpected(p, "a block: a closure with a written result type has a `{ }` body");
  }
  if (at(p, TL_TOK_LBRACE)) n->body = tl_parse_block(p);
  else { /* `|x| x * k`: the body is a block holding the value */
    n->body = new_node(p, TL_N_BLOCK, peek(p));
    n->body->value = expr_with(p, false);
  }
  while (pats && n->body) { /* the patterns' lets, in parameter order, before the body */
    tl_node *l = pats;
    pats = pats->next;
    l->next = n->body->stmts;
    n->body->stmts = l;
  }
  p->depth--;
  return n;
}

// paren = "(" ")" | "(" expr ")" | "(" expr "," (expr ("," expr)* ","?)? ")"
//   -- `(e)` is e; a comma makes a tuple (`(a,)` has one element); `()` is unit
static tl_node *paren(parser *p) {
  tl_node *n = new_node(p, TL_N_TUPLE, next(p));
  tl_node head = {0}, *cur = &head;
  bool comma = false;
  while (!at(p, TL_TOK_RPAREN)) {
    cur = cur->next = expr_with(p, false);
    if (at(p, TL_TOK_RPAREN)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or ')'");
    comma = true;
  }
  next(p);
  if (head.next && !head.next->next && !comma) return head.next;
  n->args = head.next;
  return n;
}

// primary = int | float | string | char | "true" | "false" | "self" | path | ident
//         | struct_lit | "(" expr ")" | array | if | block
static tl_node *primary(parser *p) {
  const tl_token *t = peek(p);
  tl_node *n;
  bool literal = t->kind == TL_TOK_INT || t->kind == TL_TOK_FLOAT || t->kind == TL_TOK_CHAR || t->kind == TL_TOK_STRING;
  if (literal && t->lex_error) return new_node(p, TL_N_ERROR, next(p)); /* its value is unknown: not checked */
  switch (t->kind) {
  case TL_TOK_INT:
    /* 9223372036854775808 not after a unary minus (the lexer let it through), but u64's */
    if (t->v.i == INT64_MIN && !t->big && !(t->str && !strcmp(t->str, "u64")))
      tl_parse_fail_at(p, t, "integer literal 9223372036854775808 is too large for i64");
    n = new_node(p, TL_N_INT, next(p));
    n->ival = t->v.i;
    n->name = t->big ? NULL : t->str; /* a type suffix, `5u16` */
    n->str = t->big ? t->str : NULL;  /* above i64::MAX (a u64's): its spelling, ival its bits */
    n->len = t->big;
    return n;
  case TL_TOK_FLOAT: n = new_node(p, TL_N_FLOAT, next(p)); n->fval = t->v.f; n->name = t->str; return n;
  case TL_TOK_CHAR: n = new_node(p, TL_N_CHAR, next(p)); n->ival = t->v.i; return n;
  case TL_TOK_STRING:
    n = new_node(p, TL_N_STR, next(p));
    n->str = t->str;
    n->len = t->len;
    return n;
  case TL_TOK_TRUE:
  case TL_TOK_FALSE: n = new_node(p, TL_N_BOOL, next(p)); n->ival = t->kind == TL_TOK_TRUE; return n;
  case TL_TOK_SELF: return new_node(p, TL_N_SELF, next(p));
  case TL_TOK_IDENT:
    /* `if p == P { x: 1 } {`: no block starts with `x:`, so this is a struct literal
     * where Rust's rule does not allow one; said, then parsed as one, so the rest of
     * the statement reads as meant */
    if (p->no_struct && peek_at(p, 1)->kind == TL_TOK_LBRACE && peek_at(p, 2)->kind == TL_TOK_IDENT &&
        peek_at(p, 3)->kind == TL_TOK_COLON) {
      char hint[160];
      snprintf(hint, sizeof hint, "wrap it in parentheses: `(%.*s { .. })`", (int)t->len, p->diag->src + t->offset);
      error_hint(p, t, hint, "a struct literal cannot be written directly in %s", p->head ? p->head : "this head");
      bool saved = p->no_struct;
      p->no_struct = false;
      n = struct_lit(p);
      p->no_struct = saved;
      return n;
    }
    if (struct_lit_ahead(p)) return struct_lit(p);
    if (peek_at(p, 1)->kind == TL_TOK_NOT && peek_at(p, 2)->kind == TL_TOK_LBRACKET && t->len == 3 &&
        !memcmp(p->diag->src + t->offset, "vec", 3))
      return vec_macro(p);
    n = path_or_ident(p);
    /* `E::C { x: 1.0 }`: a struct variant, `P::<i64> { x: 1 }`, with the struct literal's rule */
    if ((n->kind == TL_N_PATH || n->type) && !p->no_struct && at(p, TL_TOK_LBRACE) && fields_ahead(p)) return struct_lit_fields(p, n);
    return n;
  case TL_TOK_LPAREN: return paren(p);
  case TL_TOK_LOOP: /* `let v = loop { .. break x; };` */
    n = new_node(p, TL_N_LOOP, next(p));
    n->body = tl_parse_block(p);
    return n;
  case TL_TOK_LABEL:
    if (peek_at(p, 1)->kind == TL_TOK_COLON && peek_at(p, 2)->kind == TL_TOK_LOOP) { /* 'a: loop { .. } */
      next(p);
      next(p);
      n = new_node(p, TL_N_LOOP, next(p));
      n->str = text_of(p, t);
      n->body = tl_parse_block(p);
      return n;
    }
    tl_parse_fail_at(p, t, "a label names a loop: `'outer: loop { .. }`");
  case TL_TOK_PIPE: case TL_TOK_OROR: return closure(p);
  case TL_TOK_LBRACKET: return array(p);
  case TL_TOK_IF: return if_expr(p);
  case TL_TOK_MATCH: return match_expr(p);
  case TL_TOK_LBRACE: return tl_parse_block(p);
  case TL_TOK_QUESTION: return logic_call(p, TL_LOGIC_QUERY);
  case TL_TOK_DOLLAR: return logic_node(p, tl_lparse_lvar);
  default: tl_parse_unexpected(p, "an expression");
  }
}

/* `t.0`, and `t.0.1`, which the lexer reads as `t` `.` `0.1` (a float): each digit
 * run a field. m is the FIELD node made at the `.`; returns the outer one. */
static tl_node *tuple_field(parser *p, tl_node *base, tl_node *m) {
  const tl_token *t = next(p);
  const char *text = p->diag->src + t->offset, *dot = memchr(text, '.', t->len);
  size_t first = dot ? (size_t)(dot - text) : t->len;
  for (size_t i = 0; i < t->len; i++)
    if (!(text[i] >= '0' && text[i] <= '9') && text + i != dot)
      tl_parse_fail_at(p, t, "expected a tuple field (`.0`, `.1`...), found %s", t->kind == TL_TOK_FLOAT ? "a float" : "an integer");
  char *a = tl_parse_alloc(p, first + 1);
  memcpy(a, text, first);
  m->name = a;
  m->lhs = base;
  if (!dot) return m;
  tl_node *outer = new_node(p, TL_N_FIELD, t);
  outer->col += (int)first + 1;
  size_t rest = t->len - first - 1;
  char *b = tl_parse_alloc(p, rest + 1);
  memcpy(b, dot + 1, rest);
  outer->name = b;
  outer->lhs = m;
  return outer;
}

// postfix = primary ("(" args ")" | "." ident ("(" args ")")? | "[" args "]" | "?")*
//   -- each link of a chain counts as a level of nesting: every pass walks a chain
//      recursively, and only a binary operator chain is walked in a loop
static tl_node *postfix(parser *p) {
  tl_node *n = primary(p);
  int depth = p->depth;
  for (;;) {
    const tl_token *t = peek(p);
    tl_node *m;
    if (t->kind == TL_TOK_LPAREN || t->kind == TL_TOK_LBRACKET || t->kind == TL_TOK_DOT) tl_parse_enter(p);
    if (consume(p, TL_TOK_LPAREN)) {
      m = new_node(p, TL_N_CALL, t);
      m->args = args(p, TL_TOK_RPAREN, "',' or ')' in the arguments");
    } else if (consume(p, TL_TOK_LBRACKET)) {
      m = new_node(p, TL_N_INDEX, t);
      m->args = args(p, TL_TOK_RBRACKET, "',' or ']' in the index");
    } else if (consume(p, TL_TOK_DOT)) {
      m = new_node(p, TL_N_FIELD, t);
      if (at(p, TL_TOK_INT) || at(p, TL_TOK_FLOAT)) {
        n = tuple_field(p, n, m);
        continue;
      }
      m->name = tl_parse_ident(p, "a field or method name after '.'");
      if (at(p, TL_TOK_COLONCOLON) && peek_at(p, 1)->kind == TL_TOK_LT) { /* turbofish: `.parse::<i64>()` */
        next(p);
        tl_type *holder = tl_parse_alloc(p, sizeof *holder);
        holder->rank = -1;
        tl_parse_generic_args(p, holder);
        m->type = holder->elems;
        if (!at(p, TL_TOK_LPAREN)) tl_parse_unexpected(p, "'(' after the method's type arguments");
      }
      if (consume(p, TL_TOK_LPAREN)) {
        m->kind = TL_N_METHOD;
        m->args = args(p, TL_TOK_RPAREN, "',' or ')' in the arguments");
      }
    } else if (t->kind == TL_TOK_QUESTION && !(peek_at(p, 1)->kind == TL_TOK_IDENT && peek_at(p, 2)->kind == TL_TOK_LPAREN)) {
      /* postfix `x?`; `?p(a)` after an expression is a query statement that follows it */
      next(p);
      m = new_node(p, TL_N_TRY, t);
    } else {
      p->depth = depth;
      return n;
    }
    m->lhs = n;
    n = m;
  }
}

// unary = ("-" | "!" | "&" "mut") unary | ("&" | "*") unary | postfix
static tl_node *unary(parser *p) {
  const tl_token *t = peek(p);
  if ((t->kind == TL_TOK_AMP && peek_at(p, 1)->kind != TL_TOK_MUT) || t->kind == TL_TOK_STAR) {
    /* Rust's `&x` and `*x` are x itself: every read of a value already borrows it, and a
     * `&mut` parameter already names the caller's variable (`*p = v` writes it) */
    tl_parse_enter(p);
    next(p);
    tl_node *n = unary(p);
    p->depth--;
    return n;
  }
  if (t->kind != TL_TOK_MINUS && t->kind != TL_TOK_NOT && t->kind != TL_TOK_AMP) return postfix(p);
  const tl_token *num = peek_at(p, 1);
  if (t->kind == TL_TOK_MINUS && num->kind == TL_TOK_INT && num->v.i == INT64_MIN && !num->big &&
      (!num->str || !strcmp(num->str, "i64"))) {
    next(p); /* `-9223372036854775808`: i64::MIN itself, not the negation of a literal too large */
    tl_node *n = new_node(p, TL_N_INT, t);
    n->name = peek(p)->str;
    n->ival = next(p)->v.i;
    return n;
  }
  tl_parse_enter(p);
  next(p);
  if (t->kind == TL_TOK_AMP) next(p); /* `&mut` */
  tl_node *n = new_node(p, TL_N_UNARY, t);
  n->op = t->kind;
  n->lhs = unary(p);
  p->depth--;
  return n;
}

// cast = unary ("as" type)*
static tl_node *cast(parser *p) {
  tl_node *n = unary(p);
  int depth = p->depth;
  while (at(p, TL_TOK_AS)) {
    tl_parse_enter(p); /* a chain of casts nests as postfix links do */
    tl_node *c = new_node(p, TL_N_CAST, next(p));
    c->lhs = n;
    c->type = tl_parse_type(p);
    n = c;
  }
  p->depth = depth;
  return n;
}

/* binding power of a binary operator token, 0 if none; higher binds tighter (Rust's
 * order: || && comparisons | ^ & shifts + - * / %) */
static int binary_prec(tl_tok_kind k) {
  switch (k) {
  case TL_TOK_OROR: return 1;
  case TL_TOK_ANDAND: return 2;
  case TL_TOK_EQ: case TL_TOK_NE: case TL_TOK_LT: case TL_TOK_LE: case TL_TOK_GT: case TL_TOK_GE: return 3;
  case TL_TOK_PIPE: return 4;
  case TL_TOK_CARET: return 5;
  case TL_TOK_AMP: return 6;
  case TL_TOK_SHL: case TL_TOK_SHR: return 7;
  case TL_TOK_PLUS: case TL_TOK_MINUS: return 8;
  case TL_TOK_STAR: case TL_TOK_SLASH: case TL_TOK_PERCENT: return 9;
  default: return 0;
  }
}

/* the binary operator at the next token: `<<` and `>>` are two adjacent `<` or `>`
 * (*two set); `|` directly in an array's element is the comprehension's bar */
static tl_tok_kind binary_op(parser *p, bool *two) {
  const tl_token *t = peek(p), *u = peek_at(p, 1);
  bool adjacent = u->offset == t->offset + 1;
  *two = (t->kind == TL_TOK_LT || t->kind == TL_TOK_GT) && u->kind == t->kind && adjacent;
  if (*two) return t->kind == TL_TOK_LT ? TL_TOK_SHL : TL_TOK_SHR;
  if (adjacent && ((t->kind == TL_TOK_LT && u->kind == TL_TOK_LE) || (t->kind == TL_TOK_GT && u->kind == TL_TOK_GE)))
    return TL_TOK_EOF; /* `x <<= 2`: the statement's assignment */
  if (t->kind == TL_TOK_PIPE && p->depth == p->no_pipe_depth) return TL_TOK_EOF;
  return t->kind;
}

// binary = cast (binop binary)*  -- precedence climbing, left associative;
//          comparisons (level 3) do not chain
static tl_node *binary(parser *p, int min_prec) {
  tl_node *lhs = cast(p);
  for (;;) {
    const tl_token *t = peek(p);
    if (t->kind == TL_TOK_LARROW)
      tl_parse_fail_at(p, t, "`<-` is only used in comprehension generators; write `< -` for less-than a negative");
    bool two;
    tl_tok_kind op = binary_op(p, &two);
    int prec = binary_prec(op);
    if (prec < min_prec || prec == 0) return lhs;
    next(p);
    if (two) next(p);
    tl_node *n = new_node(p, TL_N_BINARY, t);
    n->op = op;
    n->lhs = lhs;
    n->rhs = binary(p, prec + 1);
    if (prec == 3 && binary_prec(peek(p)->kind) == 3)
      tl_parse_fail_at(p, peek(p), "comparison operators cannot be chained: write `a < b && b < c`");
    lhs = n;
  }
}

/* can the token start the end of a range? (`t[a..]`, `for i in 0.. {`) */
static bool starts_range_end(parser *p) {
  switch (peek(p)->kind) {
  case TL_TOK_RBRACKET: case TL_TOK_RPAREN: case TL_TOK_COMMA: case TL_TOK_SEMI: case TL_TOK_RBRACE:
  case TL_TOK_EOF: return false;
  case TL_TOK_LBRACE: return !p->no_struct;
  default: return true;
  }
}

// expr = binary (".." binary?)? | ".." binary?    -- ranges bind loosest, do not chain
static tl_node *expr(parser *p) {
  tl_parse_enter(p);
  tl_node *n = at(p, TL_TOK_DOTDOT) ? NULL : binary(p, 1);
  if (at(p, TL_TOK_DOTDOT)) {
    tl_node *r = new_node(p, TL_N_RANGE, next(p));
    r->lhs = n;
    if (starts_range_end(p)) r->rhs = binary(p, 1);
    if (at(p, TL_TOK_DOTDOT)) tl_parse_fail_at(p, peek(p), "range operators cannot be chained");
    n = r;
  }
  p->depth--;
  return n;
}

/* ---- statements ---- */

static bool is_assign_op(tl_tok_kind k) {
  return k == TL_TOK_ASSIGN || k == TL_TOK_PLUS_ASSIGN || k == TL_TOK_MINUS_ASSIGN || k == TL_TOK_STAR_ASSIGN ||
         k == TL_TOK_SLASH_ASSIGN || k == TL_TOK_PERCENT_ASSIGN || k == TL_TOK_AMP_ASSIGN || k == TL_TOK_PIPE_ASSIGN ||
         k == TL_TOK_CARET_ASSIGN;
}

/* the assignment operator at the next token, `<<=` and `>>=` made of two; 0 if none */
static tl_tok_kind assign_op_at(parser *p) {
  const tl_token *t = peek(p), *u = peek_at(p, 1);
  if (u->offset == t->offset + 1 && ((t->kind == TL_TOK_LT && u->kind == TL_TOK_LE) || (t->kind == TL_TOK_GT && u->kind == TL_TOK_GE)))
    return t->kind == TL_TOK_LT ? TL_TOK_SHL_ASSIGN : TL_TOK_SHR_ASSIGN;
  return is_assign_op(t->kind) ? t->kind : TL_TOK_EOF;
}

/* ---- patterns ---- */

static bool literal_ahead(parser *p) {
  tl_tok_kind k = peek(p)->kind;
  if (k == TL_TOK_MINUS) k = peek_at(p, 1)->kind;
  return k == TL_TOK_INT || k == TL_TOK_FLOAT || k == TL_TOK_CHAR || k == TL_TOK_STRING || k == TL_TOK_TRUE ||
         k == TL_TOK_FALSE;
}

// lit = "-"? (int | float) | char | string | "true" | "false"
static tl_node *pattern_lit(parser *p) {
  const tl_token *t = peek(p);
  if (!consume(p, TL_TOK_MINUS)) return primary(p);
  if (!at(p, TL_TOK_INT) && !at(p, TL_TOK_FLOAT)) tl_parse_unexpected(p, "a number after '-' in the pattern");
  tl_node *n = new_node(p, TL_N_UNARY, t);
  n->op = TL_TOK_MINUS;
  n->lhs = primary(p);
  return n;
}

// list = (pattern ("," pattern)* ","?)? CLOSE; *comma: one was written
static tl_node *pattern_list(parser *p, tl_tok_kind close, const char *what, bool *comma) {
  tl_node head = {0}, *cur = &head;
  while (!at(p, close)) {
    cur = cur->next = pattern(p);
    if (at(p, close)) break;
    tl_parse_expect(p, TL_TOK_COMMA, what);
    if (comma) *comma = true;
  }
  next(p);
  return head.next;
}

// fields = "{" (("mut"? ident | ident ":" pattern) ("," ...)* ("," "..")? ","?)? "}"   -- n: STRUCT_LIT
static tl_node *pattern_fields(parser *p, tl_node *n) {
  n->kind = TL_N_STRUCT_LIT;
  tl_parse_expect(p, TL_TOK_LBRACE, "'{'");
  tl_node head = {0}, *cur = &head;
  while (!at(p, TL_TOK_RBRACE)) {
    if (consume(p, TL_TOK_DOTDOT)) { /* the fields not named */
      n->ival = 1;
      if (!at(p, TL_TOK_RBRACE)) tl_parse_unexpected(p, "'}' after `..` (it comes last)");
      break;
    }
    const tl_token *t = peek(p);
    bool is_mut = consume(p, TL_TOK_MUT);
    cur = cur->next = new_node(p, TL_N_FIELD_INIT, t);
    cur->name = tl_parse_ident(p, "a field name or `..`");
    if (!is_mut && consume(p, TL_TOK_COLON)) {
      cur->lhs = pattern(p);
    } else { /* shorthand: `x` binds the field x */
      cur->lhs = new_node(p, TL_N_IDENT, t);
      cur->lhs->name = cur->name;
      cur->lhs->is_mut = is_mut;
    }
    if (at(p, TL_TOK_RBRACE)) break;
    tl_parse_expect(p, TL_TOK_COMMA, "',' or '}' in the pattern's fields");
  }
  next(p);
  n->args = head.next;
  return n;
}

// one = lit ("..=" lit)? | "(" list ")" | path ("(" (list | ".." ")") | fields)? | ident "(" list ")"
//     | ident fields | "mut"? ident
/* at an ident followed by `<`: the index of the `::` after a balanced `<..>` of type
 * words (the seed's pattern `Option<i64>::Some(v)`), else 0 */
static int type_args_then_path(const parser *p) {
  int depth = 0;
  for (int i = p->pos + 1; i + 1 < p->n; i++) {
    tl_tok_kind k = p->tok[i].kind;
    if (k == TL_TOK_LT) depth++;
    else if (k == TL_TOK_GT && --depth == 0) return p->tok[i + 1].kind == TL_TOK_COLONCOLON ? i + 1 : 0;
    else if (k != TL_TOK_IDENT && k != TL_TOK_COMMA && k != TL_TOK_INT) return 0;
  }
  return 0;
}

/* `Option<i64>::Some`: the path without its type arguments (the scrutinee's type says them) */
static tl_node *typed_path(parser *p, int colons) {
  const tl_token *t = peek(p);
  tl_node *n = new_node(p, TL_N_PATH, t);
  const char *base = text_of(p, t);
  p->pos = colons + 1;
  const char *v = text_of(p, tl_parse_expect(p, TL_TOK_IDENT, "a variant after '::'"));
  char *name = tl_parse_alloc(p, strlen(base) + strlen(v) + 3);
  sprintf(name, "%s::%s", base, v);
  n->name = name;
  return n;
}

static tl_node *pattern_one(parser *p) {
  const tl_token *t = peek(p);
  tl_parse_enter(p);
  tl_node *n;
  if (literal_ahead(p)) {
    n = pattern_lit(p);
    if (at(p, TL_TOK_DOTDOT)) {
      const tl_token *r = next(p);
      if (!consume(p, TL_TOK_ASSIGN)) tl_parse_fail_at(p, r, "a range pattern includes its end: write `a..=b`");
      tl_node *rng = new_node(p, TL_N_RANGE, r);
      rng->op = TL_TOK_ASSIGN;
      rng->lhs = n;
      if (!literal_ahead(p)) tl_parse_unexpected(p, "the range's end (a literal) after `..=`");
      rng->rhs = pattern_lit(p);
      n = rng;
    }
  } else if (consume(p, TL_TOK_LPAREN)) {
    bool comma = false;
    n = new_node(p, TL_N_TUPLE, t);
    n->args = pattern_list(p, TL_TOK_RPAREN, "',' or ')' in the pattern", &comma);
    if (n->args && !n->args->next && !comma) n = n->args; /* `(a)` is a */
  } else if (at(p, TL_TOK_IDENT) && (peek_at(p, 1)->kind == TL_TOK_COLONCOLON || peek_at(p, 1)->kind == TL_TOK_LPAREN ||
                                      (peek_at(p, 1)->kind == TL_TOK_LT && type_args_then_path(p)))) {
    /* `E::B(..)`, or `Some(x)`, `Ok(v)`, `Err(e)` (the checker says which) */
    n = peek_at(p, 1)->kind == TL_TOK_LT ? typed_path(p, type_args_then_path(p)) : path_or_ident(p);
    if (at(p, TL_TOK_LPAREN)) {
      tl_node *c = new_node(p, TL_N_CALL, next(p));
      c->lhs = n;
      if (at(p, TL_TOK_DOTDOT) && peek_at(p, 1)->kind == TL_TOK_RPAREN) { /* `E::B(..)`: any fields */
        next(p);
        next(p);
        c->ival = 1;
      } else c->args = pattern_list(p, TL_TOK_RPAREN, "',' or ')' in the variant's fields", NULL);
      n = c;
    } else if (at(p, TL_TOK_LBRACE)) n = pattern_fields(p, n);
  } else if (at(p, TL_TOK_IDENT) && peek_at(p, 1)->kind == TL_TOK_LBRACE) {
    n = new_node(p, TL_N_STRUCT_LIT, t);
    n->name = tl_parse_ident(p, "a struct name");
    n = pattern_fields(p, n);
  } else {
    n = new_node(p, TL_N_IDENT, t);
    n->is_mut = consume(p, TL_TOK_MUT);
    n->name = tl_parse_ident(p, "a pattern");
    if (n->is_mut && !strcmp(n->name, "_")) {
      error_hint(p, t, "remove the `mut` prefix: `_` binds nothing", "`mut` must be followed by a named binding");
      n->is_mut = false;
    }
  }
  p->depth--;
  return n;
}

// pattern = one ("|" one)*     -- alternatives: a left-leaning chain of BINARY `|`
static tl_node *pattern(parser *p) {
  tl_node *n = pattern_one(p);
  while (at(p, TL_TOK_PIPE)) {
    tl_node *o = new_node(p, TL_N_BINARY, next(p));
    o->op = TL_TOK_PIPE;
    o->lhs = n;
    o->rhs = pattern_one(p);
    n = o;
  }
  return n;
}

/* `=> break`, `=> continue`, `=> return e`: a block of that one statement */
static tl_node *jump_arm(parser *p) {
  const tl_token *t = peek(p);
  tl_node *b = new_node(p, TL_N_BLOCK, t);
  tl_node *j = new_node(p, t->kind == TL_TOK_BREAK ? TL_N_BREAK : t->kind == TL_TOK_CONTINUE ? TL_N_CONTINUE : TL_N_RETURN, next(p));
  if (j->kind == TL_N_RETURN && !at(p, TL_TOK_COMMA) && !at(p, TL_TOK_RBRACE)) j->lhs = expr_with(p, false);
  b->stmts = j;
  return b;
}

// match = "match" expr_no_struct "{" (arm ("," arm)* ","?)? "}"
// arm = pattern ("if" expr)? "=>" expr       -- the ',' is optional after a block
static tl_node *match_expr(parser *p) {
  tl_parse_enter(p);
  tl_node *n = new_node(p, TL_N_MATCH, next(p));
  n->lhs = head_expr(p, "a `match` head");
  tl_parse_expect(p, TL_TOK_LBRACE, "'{' and the match arms");
  bool saved = p->no_struct;
  p->no_struct = false;
  tl_node head = {0}, *cur = &head;
  while (!at(p, TL_TOK_RBRACE)) {
    tl_node *arm = cur = cur->next = new_node(p, TL_N_ARM, peek(p));
    arm->lhs = pattern(p);
    if (consume(p, TL_TOK_IF)) arm->cond = expr_with(p, false);
    tl_parse_expect(p, TL_TOK_FAT_ARROW, arm->cond ? "'=>' after the guard" : "'=>' (or `if` and a guard) after the pattern");
    bool braced = at(p, TL_TOK_LBRACE);
    arm->rhs = at(p, TL_TOK_BREAK) || at(p, TL_TOK_CONTINUE) || at(p, TL_TOK_RETURN) ? jump_arm(p) : expr_with(p, false);
    if (at(p, TL_TOK_RBRACE)) break;
    if (!consume(p, TL_TOK_COMMA) && !(braced && arm->rhs->kind == TL_N_BLOCK))
      tl_parse_unexpected(p, "',' or '}' after the match arm");
  }
  next(p);
  p->no_struct = saved;
  n->args = head.next;
  p->depth--;
  return n;
}

// equation = "[" ident ("," ident)* "]" "=" expr ";"   -- after `let name`
// The seed language's tensor equation `let C[i, k] = A[i, j] * B[j, k];` is the
// comprehension `[i, k | { A[i, j] * B[j, k] }]`: the names are the output axes, the
// others the body indexes with are summed, every range follows from the tensors.
static tl_node *tensor_equation(parser *p, tl_node *n) {
  tl_node *c = new_node(p, TL_N_COMPR, next(p)), head = {0}, *cur = &head;
  do {
    const tl_token *t = peek(p);
    cur = cur->next = new_node(p, TL_N_IDENT, t);
    cur->name = tl_parse_ident(p, "an axis name in `let name[i, j] = ..`");
  } while (consume(p, TL_TOK_COMMA));
  c->args = head.next;
  tl_parse_expect(p, TL_TOK_RBRACKET, "']' after the tensor equation's axes");
  tl_parse_expect(p, TL_TOK_ASSIGN, "'=' after `let name[axes]`");
  c->body = new_node(p, TL_N_BLOCK, peek(p));
  c->body->value = expr(p);
  n->rhs = c;
  tl_parse_expect(p, TL_TOK_SEMI, "';' after the expression");
  return n;
}

// let = "let" "mut"? ident (":" type)? ("=" expr)? ";" | "let" pattern (":" type)? "=" expr ";"
//     | "let" "mut"? ident equation
static tl_node *let_stmt(parser *p) {
  tl_node *n = new_node(p, TL_N_LET, next(p));
  if (at(p, TL_TOK_LPAREN) || (at(p, TL_TOK_MUT) && peek_at(p, 1)->kind == TL_TOK_LPAREN)) {
    if (at(p, TL_TOK_MUT)) {
      error_hint(p, peek(p), "write it before each name that changes: `let (mut a, mut b) = ..`",
                 "`mut` must be attached to each individual binding");
      next(p);
    }
    n->lhs = pattern(p);
    if (n->lhs->kind == TL_N_IDENT) { /* `let (x) = ..` is `let x = ..` */
      n->name = n->lhs->name;
      n->is_mut = n->lhs->is_mut;
      n->lhs = NULL;
    }
  } else {
    n->is_mut = consume(p, TL_TOK_MUT);
    n->name = tl_parse_ident(p, "a variable name after 'let'");
    if (at(p, TL_TOK_LBRACKET)) return tensor_equation(p, n);
  }
  if (consume(p, TL_TOK_COLON)) n->type = tl_parse_type(p);
  if (consume(p, TL_TOK_ASSIGN)) n->rhs = expr(p);
  tl_parse_expect(p, TL_TOK_SEMI, n->rhs ? "';' after the expression" : "'=' or ';' in the let statement");
  return n;
}

// for = "for" (ident | pattern) "in" expr_no_struct block
//   -- `for (k, v) in m { .. }` is `for $for in m { let (k, v) = $for; .. }`
static tl_node *for_stmt(parser *p) {
  tl_node *n = new_node(p, TL_N_FOR, next(p));
  tl_node *pat = NULL;
  if (at(p, TL_TOK_LPAREN)) {
    pat = pattern(p);
    n->name = "$for";
  } else n->name = tl_parse_ident(p, "a loop variable after 'for'");
  tl_parse_expect(p, TL_TOK_IN, "'in' after the loop variable");
  /* `for x in &v`: the same loop as `for x in v` (a loop never consumes its source) */
  if (at(p, TL_TOK_AMP) && peek_at(p, 1)->kind != TL_TOK_MUT) next(p);
  n->lhs = head_expr(p, "a `for` head");
  n->body = tl_parse_block(p);
  if (pat) {
    tl_node *let = new_node(p, TL_N_LET, peek(p));
    let->line = pat->line;
    let->col = pat->col;
    let->lhs = pat;
    let->rhs = new_node(p, TL_N_IDENT, peek(p));
    let->rhs->name = "$for";
    let->rhs->line = pat->line;
    let->rhs->col = pat->col;
    let->next = n->body->stmts;
    n->body->stmts = let;
  }
  return n;
}

/* an expression at the start of a statement: an assignment target, a statement or
 * the block's value. Sets *is_value when it ends the block without a ';'. */
// expr_stmt = expr (assign_op expr)? ";" | (if | block) ";"? | expr &"}"
static tl_node *expr_stmt(parser *p, bool *is_value) {
  const tl_token *t = peek(p);
  bool block_like = t->kind == TL_TOK_IF || t->kind == TL_TOK_LBRACE || t->kind == TL_TOK_MATCH;
  tl_node *e = block_like ? primary(p) : expr(p);
  if (at(p, TL_TOK_RBRACE)) {
    *is_value = true;
    return e;
  }
  tl_node *s = new_node(p, TL_N_EXPR_STMT, t);
  s->lhs = e;
  if (block_like) { /* `if c { } x = 1;` needs no ';' */
    consume(p, TL_TOK_SEMI);
    return s;
  }
  tl_tok_kind aop = assign_op_at(p);
  if (aop != TL_TOK_EOF) {
    if (e->kind != TL_N_IDENT && e->kind != TL_N_FIELD && e->kind != TL_N_INDEX)
      tl_parse_fail_at(p, t, "cannot assign to this expression: assign to a variable, a field `s.f` or an index `t[i]`");
    s->kind = TL_N_ASSIGN;
    s->op = aop;
    next(p);
    if (aop == TL_TOK_SHL_ASSIGN || aop == TL_TOK_SHR_ASSIGN) next(p);
    s->rhs = expr(p);
  }
  tl_parse_expect(p, TL_TOK_SEMI, "';' after the expression");
  return s;
}

static tl_node *while_let(parser *p);

// stmt = let | "while" expr_no_struct block | "while" "let" .. | "loop" block | for | "break" end
//      | "continue" end | "return" expr? end | expr_stmt      end = ";" | &"}"
static tl_node *stmt(parser *p, bool *is_value) {
  const tl_token *t = peek(p);
  tl_node *n;
  switch (t->kind) {
  case TL_TOK_LET: return let_stmt(p);
  case TL_TOK_FOR: return for_stmt(p);
  case TL_TOK_WHILE:
    if (peek_at(p, 1)->kind == TL_TOK_LET) return while_let(p);
    n = new_node(p, TL_N_WHILE, next(p));
    n->cond = head_expr(p, "a `while` condition");
    n->body = tl_parse_block(p);
    return n;
  case TL_TOK_LOOP:
    n = new_node(p, TL_N_LOOP, next(p));
    n->body = tl_parse_block(p);
    *is_value = at(p, TL_TOK_RBRACE); /* a block's last `loop` is its value (`break x` gives it) */
    return n;
  case TL_TOK_LABEL: /* 'outer: loop / while / for */
    if (peek_at(p, 1)->kind == TL_TOK_COLON) {
      tl_tok_kind k = peek_at(p, 2)->kind;
      if (k != TL_TOK_LOOP && k != TL_TOK_WHILE && k != TL_TOK_FOR)
        tl_parse_fail_at(p, peek_at(p, 2), "a label names a loop: `'outer: loop`, `while` or `for`");
      next(p);
      next(p);
      n = stmt(p, is_value);
      n->str = text_of(p, t); /* the label; a for loop's name is its variable */
      return n;
    }
    return expr_stmt(p, is_value);
  case TL_TOK_BREAK:
  case TL_TOK_CONTINUE:
    n = new_node(p, t->kind == TL_TOK_BREAK ? TL_N_BREAK : TL_N_CONTINUE, next(p));
    if (at(p, TL_TOK_LABEL)) n->str = text_of(p, next(p)); /* break 'outer */
    if (t->kind == TL_TOK_BREAK && !at(p, TL_TOK_SEMI) && !at(p, TL_TOK_RBRACE)) n->lhs = expr(p); /* break value */
    if (!at(p, TL_TOK_RBRACE)) /* `loop { break }` needs no ';', as in Rust */
      tl_parse_expect(p, TL_TOK_SEMI, t->kind == TL_TOK_BREAK ? "';' after 'break'" : "';' after 'continue'");
    return n;
  case TL_TOK_RETURN:
    n = new_node(p, TL_N_RETURN, next(p));
    if (!at(p, TL_TOK_SEMI) && !at(p, TL_TOK_RBRACE)) n->lhs = expr(p);
    if (!at(p, TL_TOK_RBRACE)) tl_parse_expect(p, TL_TOK_SEMI, n->lhs ? "';' after the expression" : "';' after 'return'");
    return n;
  default: {
    if (tl_parse_const_ahead(p)) { /* Rust allows it in a block; TL's constants are the file's */
      error_hint(p, t, "move it to the top level of the file, or write `let` for a value of this block",
                 "a `%.*s` item is written outside functions", (int)t->len, p->diag->src + t->offset);
      longjmp(*p->recover, 1); /* reported: the statement is skipped */
    }
    tl_lparse lp = logic_at(p);
    if (tl_lparse_fact_ahead(&lp)) return logic_call(p, TL_LOGIC_FACT);
    return expr_stmt(p, is_value);
  }
  }
}

/* `while let P = e { body }` is `loop { match e { P => body, _ => break } }`: e is
 * evaluated each turn, and `continue` goes back to it */
// while_let = "while" "let" pattern "=" expr_no_struct block
static tl_node *while_let(parser *p) {
  const tl_token *t = next(p);
  next(p); /* let */
  tl_node *loop = new_node(p, TL_N_LOOP, t), *body = new_node(p, TL_N_BLOCK, t), *st = new_node(p, TL_N_EXPR_STMT, t);
  tl_node *m = new_node(p, TL_N_MATCH, t), *arm = new_node(p, TL_N_ARM, peek(p)), *other = new_node(p, TL_N_ARM, t);
  m->ival = 2;
  arm->lhs = pattern(p);
  tl_parse_expect(p, TL_TOK_ASSIGN, "'=' after the pattern of `while let`");
  m->lhs = head_expr(p, "a `while let` head");
  arm->rhs = tl_parse_block(p);
  other->lhs = new_node(p, TL_N_IDENT, t);
  other->lhs->name = "_";
  other->rhs = new_node(p, TL_N_BLOCK, t);
  other->rhs->stmts = new_node(p, TL_N_BREAK, t);
  arm->next = other;
  m->args = arm;
  st->lhs = m;
  body->stmts = st;
  loop->body = body;
  return loop;
}

/* the brackets open at a point of a failed statement: kinds of the innermost
 * MAX_OPEN, a count beyond (only in absurdly deep input) */
enum { MAX_OPEN = 256 };
typedef struct {
  tl_tok_kind kind[MAX_OPEN];
  int n, extra;
} open_brackets;

static bool has_brace(const open_brackets *o) {
  for (int i = 0; i < o->n; i++)
    if (o->kind[i] == TL_TOK_LBRACE) return true;
  return o->extra > 0;
}

/* tracks bracket k; returns true when it closes the statement: a ';' or a '}' back at
 * the statement's own level (a ')' or ']' that never came is given up at a ';' or a '}') */
static bool track_bracket(open_brackets *o, tl_tok_kind k) {
  switch (k) {
  case TL_TOK_LPAREN: case TL_TOK_LBRACKET: case TL_TOK_LBRACE:
    if (o->n < MAX_OPEN) o->kind[o->n++] = k;
    else o->extra++;
    return false;
  case TL_TOK_RPAREN: case TL_TOK_RBRACKET:
    if (o->extra > 0) o->extra--;
    else if (o->n > 0 && o->kind[o->n - 1] != TL_TOK_LBRACE) o->n--;
    return false; /* a stray one is skipped */
  case TL_TOK_RBRACE:
    if (o->extra > 0) {
      o->extra--;
      return false;
    }
    while (o->n > 0 && o->kind[o->n - 1] != TL_TOK_LBRACE) o->n--;
    if (o->n > 0) o->n--;
    return o->n == 0; /* a nested block ended the statement (`if c { .. }`) */
  case TL_TOK_SEMI:
    if (has_brace(o)) return false; /* a statement of a nested block */
    o->n = 0;
    return true;
  default: return false;
  }
}

/* does the token at i, first on its line, begin a statement or an item? After an error,
 * that is where the next statement is (`let x = 1` missing its ';' does not take the
 * next line's `let` along): a word no expression holds (`let`, `fn`) when no brace is
 * open, so a `(` never closed is given up too; one an expression may hold (a name,
 * `if`) when no bracket is open */
static bool starts_line_stmt(parser *p, int i, const open_brackets *o) {
  if (i == 0 || p->tok[i].line == p->tok[i - 1].line) return false;
  switch (p->tok[i].kind) {
  case TL_TOK_LET: case TL_TOK_FN: case TL_TOK_STRUCT: case TL_TOK_IMPL: case TL_TOK_ENUM: case TL_TOK_TRAIT:
    return !has_brace(o);
  case TL_TOK_FOR: case TL_TOK_WHILE: case TL_TOK_LOOP: case TL_TOK_IF: case TL_TOK_MATCH: case TL_TOK_RETURN:
  case TL_TOK_BREAK: case TL_TOK_CONTINUE: case TL_TOK_IDENT: case TL_TOK_SELF: return o->n == 0 && o->extra == 0;
  default: return false;
  }
}

/* skips the rest of a failed statement that began at token `start`: to just past its
 * ';', to the '}' that closes the block, or to a line that begins a statement,
 * whichever comes first at the statement's own nesting. Brackets opened before the
 * error count, so `[i | i <- 0.. { i }];` skips the comprehension's body and its ']'
 * too. */
static void sync_stmt(parser *p, int start) {
  open_brackets o = {.n = 0};
  for (int i = start; i < p->pos; i++) track_bracket(&o, p->tok[i].kind);
  for (;;) {
    tl_tok_kind k = peek(p)->kind;
    if (k == TL_TOK_EOF) return;
    if (k == TL_TOK_RBRACE && !has_brace(&o)) return; /* the block's own '}' */
    if (p->pos > start && starts_line_stmt(p, p->pos, &o)) return;
    next(p);
    if (track_bracket(&o, k)) return;
  }
}

/* the names a failed `let` at token `start` binds (`let mut x`, `let (a, b)`), as IDENT
 * nodes: the checker declares them with the error type, so their uses further on are
 * not reported as unknown names too */
static tl_node *failed_let_names(parser *p, int start) {
  tl_node head = {0}, *cur = &head;
  if (p->tok[start].kind != TL_TOK_LET) return NULL;
  for (int i = start + 1; i < p->pos; i++) {
    const tl_token *t = &p->tok[i];
    if (t->kind == TL_TOK_ASSIGN || t->kind == TL_TOK_COLON || t->kind == TL_TOK_SEMI || t->kind == TL_TOK_LBRACE ||
        t->kind == TL_TOK_RBRACE)
      break;
    if (t->kind != TL_TOK_IDENT || (t->len == 1 && p->diag->src[t->offset] == '_')) continue;
    cur = cur->next = new_node(p, TL_N_IDENT, t);
    cur->name = text_of(p, t);
  }
  return head.next;
}

/* one statement, with a recovery point: on an error, an ERROR node (args: the names a
 * failed `let` binds) */
static tl_node *guarded_stmt(parser *p, bool *is_value) {
  jmp_buf here, *outer = p->recover;
  const tl_token *t = peek(p);
  bool no_struct = p->no_struct;
  int depth = p->depth, start = p->pos, no_pipe = p->no_pipe_depth;
  if (setjmp(here)) {
    p->recover = outer;
    p->no_struct = no_struct;
    p->depth = depth;
    p->no_pipe_depth = no_pipe;
    *is_value = false;
    sync_stmt(p, start);
    tl_node *err = new_node(p, TL_N_ERROR, t);
    err->args = failed_let_names(p, start);
    return err;
  }
  p->recover = &here;
  tl_node *n = stmt(p, is_value);
  p->recover = outer;
  return n;
}

tl_node *tl_parse_expr(parser *p) { return expr(p); }

static bool word_at(parser *p, int k, const char *w) {
  const tl_token *t = peek_at(p, k);
  return t->kind == TL_TOK_IDENT && t->len == strlen(w) && !memcmp(p->diag->src + t->offset, w, t->len);
}

bool tl_parse_const_ahead(parser *p) {
  tl_tok_kind next_kind = peek_at(p, 1)->kind;
  if (word_at(p, 0, "tensor")) /* `tensor A: Tensor<f32, 1> = [..];`, the seed language's tensor constant */
    return next_kind == TL_TOK_IDENT && peek_at(p, 2)->kind == TL_TOK_COLON;
  return (word_at(p, 0, "const") || word_at(p, 0, "static")) && (next_kind == TL_TOK_IDENT || next_kind == TL_TOK_MUT);
}

// block = "{" stmt* expr? "}"
tl_node *tl_parse_block(parser *p) {
  tl_parse_enter(p);
  tl_node *n = new_node(p, TL_N_BLOCK, tl_parse_expect(p, TL_TOK_LBRACE, "'{'"));
  bool saved = p->no_struct;
  p->no_struct = false;
  tl_node head = {0}, *cur = &head;
  while (!at(p, TL_TOK_RBRACE) && !at(p, TL_TOK_EOF)) {
    if (consume(p, TL_TOK_SEMI)) continue; /* an empty statement */
    bool is_value = false;
    tl_node *s = guarded_stmt(p, &is_value);
    if (is_value) n->value = s;
    else cur = cur->next = s;
  }
  tl_parse_expect(p, TL_TOK_RBRACE, "'}' to close the block");
  p->no_struct = saved;
  n->stmts = head.next;
  p->depth--;
  return n;
}

/* at the top level: does a statement start here (a script's, LANGUAGE.md §2) rather
 * than an item? `p(..)` is a fact or a rule when a `.` ends it or `:-` follows it */
static bool top_stmt_ahead(parser *p) {
  switch (peek(p)->kind) {
  case TL_TOK_LET: case TL_TOK_FOR: case TL_TOK_WHILE: case TL_TOK_LOOP: case TL_TOK_IF: case TL_TOK_MATCH: case TL_TOK_INT:
  case TL_TOK_FLOAT: case TL_TOK_STRING: case TL_TOK_CHAR: case TL_TOK_LPAREN: case TL_TOK_LBRACKET:
  case TL_TOK_MINUS: case TL_TOK_NOT: case TL_TOK_QUESTION: case TL_TOK_TRUE: case TL_TOK_FALSE: return true;
  case TL_TOK_IDENT: {
    if (tl_parse_const_ahead(p)) return false; /* `const N: i64 = 4;`, an item */
    if (peek_at(p, 1)->kind == TL_TOK_FN) return false; /* `extern fn`, `async fn`: items, refused there */
    if (peek_at(p, 1)->kind != TL_TOK_LPAREN) return true;
    tl_lparse lp = logic_at(p);
    if (tl_lparse_fact_ahead(&lp)) return false;
    int depth = 0;
    for (int i = p->pos + 1; i < p->n; i++) {
      tl_tok_kind k = p->tok[i].kind;
      if (k == TL_TOK_EOF || k == TL_TOK_SEMI || k == TL_TOK_LBRACE || k == TL_TOK_RBRACE) break;
      if (k == TL_TOK_LPAREN) depth++;
      if (k != TL_TOK_RPAREN || --depth) continue;
      switch (i + 1 < p->n ? p->tok[i + 1].kind : TL_TOK_EOF) { /* what follows `name(..)` */
      case TL_TOK_SEMI: case TL_TOK_DOT: case TL_TOK_LBRACKET: case TL_TOK_ASSIGN: case TL_TOK_PLUS_ASSIGN:
      case TL_TOK_MINUS_ASSIGN: case TL_TOK_STAR_ASSIGN: case TL_TOK_SLASH_ASSIGN: case TL_TOK_PERCENT_ASSIGN:
      case TL_TOK_PLUS: case TL_TOK_MINUS: case TL_TOK_STAR: case TL_TOK_SLASH: case TL_TOK_PERCENT: case TL_TOK_EQ:
      case TL_TOK_NE: case TL_TOK_LT: case TL_TOK_GT: case TL_TOK_LE: case TL_TOK_GE: case TL_TOK_ANDAND:
      case TL_TOK_OROR: case TL_TOK_AS: return true;
      default: return false; /* a fact or a rule, maybe missing its `.` */
      }
    }
    return false; /* unclosed: reported as the item it starts */
  }
  default: return false;
  }
}

/* beside `fn main`, a top-level `let NAME: T = value;` (the seed language's global) is
 * `static NAME: T = value;`: immutable, typed, a constant expression, seen by every
 * function. Those leave *stmts and become items after cur (returned: the last item);
 * a `let mut` or an untyped one is reported here, and the other statements stay */
static tl_ast_item *lets_as_statics(parser *p, tl_node **stmts, tl_ast_item *cur) {
  tl_node **link = stmts;
  while (*link) {
    tl_node *st = *link;
    if (st->kind != TL_N_LET || !st->name || st->is_mut || !st->type || !st->rhs) {
      if (st->kind == TL_N_LET && st->name && (st->is_mut || !st->type || !st->rhs)) {
        tl_diag_error(p->diag, st->line, st->col,
                      "a top-level `let` beside `fn main` is a constant: it needs a type and a value, and cannot be `mut`");
        tl_diag_hint(p->diag, "write `let %s: T = value;` (TL has no mutable globals), or move it into `main`", st->name);
        *link = st->next; /* reported: not again as a statement */
        continue;
      }
      link = &st->next;
      continue;
    }
    tl_ast_item *it = tl_arena_alloc(p->arena, sizeof *it);
    if (!it) {
      tl_diag_oom(p->diag, st->line, st->col, "out of memory");
      return cur;
    }
    it->kind = TL_ITEM_CONST;
    it->line = st->line;
    it->col = st->col;
    it->name = st->name;
    it->type = st->type;
    it->value = st->rhs;
    it->is_static = true;
    cur = cur->next = it;
    *link = st->next;
  }
  return cur;
}

// program = (item | stmt)*   -- statements outside any function run in order, as the
//                               body of a `main` made for them (no `fn main` allowed then)
int tl_parse(const tl_token *tokens, int n, tl_diag *diag, tl_arena *arena, tl_program **out) {
  int before = diag->errors;
  parser p = {.tok = tokens, .n = n, .diag = diag, .arena = arena};
  *out = tl_arena_alloc(arena, sizeof **out);
  if (!*out || n <= 0 || tokens[n - 1].kind != TL_TOK_EOF) {
    if (*out) tl_diag_error(diag, 1, 1, "internal error: the tokens do not end with end of file");
    else tl_diag_oom(diag, 1, 1, "out of memory");
    return diag->errors - before;
  }
  tl_ast_item head = {0}, *cur = &head, **broken = &(*out)->broken;
  tl_node script = {0}, *last = &script; /* top-level statements */
  const tl_ast_item *main_fn = NULL;
  while (!at(&p, TL_TOK_EOF)) {
    if (top_stmt_ahead(&p)) {
      bool is_value = false;
      p.depth = 0;
      last = last->next = guarded_stmt(&p, &is_value);
      continue;
    }
    tl_ast_item *it = tl_parse_guarded_item(&p, broken);
    if (it) cur = cur->next = it;
    else if (*broken) broken = &(*broken)->next;
    if (it && it->kind == TL_ITEM_FN && it->name && !strcmp(it->name, "main") && !main_fn) main_fn = it;
  }
  if (script.next && main_fn) {
    cur = lets_as_statics(&p, &script.next, cur);
    if (script.next) {
      tl_node *first = script.next;
      tl_diag_error(diag, first->line, first->col, "a file with `fn main` cannot also have statements outside functions");
      tl_diag_hint(diag, "move them into `main` (line %d), or remove `fn main` to run them as a script", main_fn->line);
    }
  } else if (script.next) { /* the statements are the body of `fn main()` */
    tl_ast_item *it = tl_arena_alloc(arena, sizeof *it);
    tl_fn *f = tl_arena_alloc(arena, sizeof *f);
    tl_node *body = tl_arena_alloc(arena, sizeof *body);
    if (!it || !f || !body) {
      tl_diag_oom(diag, 1, 1, "out of memory");
      return diag->errors - before;
    }
    body->kind = TL_N_BLOCK;
    body->line = f->line = it->line = script.next->line;
    body->col = f->col = it->col = script.next->col;
    body->stmts = script.next;
    f->name = it->name = "main";
    f->body = body;
    f->script = true;
    for (tl_node *st = script.next; st; st = st->next)
      if (st->kind == TL_N_ERROR) f->broken = true; /* as a function with a recovered statement */
    it->kind = TL_ITEM_FN;
    it->fn = f;
    cur = cur->next = it;
  }
  (*out)->items = head.next;
  return diag->errors - before;
}
