/* parse_logic.h — the Datalog part of the parser (LANGUAGE.md §8): facts, rules,
 * `relation` declarations, `mod`/`use` lines, `$x`, and where a fact statement is
 * (parse.c parses queries and fact statements, whose arguments are expressions). parse.c calls these at its hooks with the token position; each entry
 * parses one construct into TL_N_LOGIC / TL_N_LVAR nodes (ast.h) in the arena, or
 * returns false with the error (the token it is at, a message, maybe a hint), which
 * parse.c reports and recovers from as from its own errors. */
#ifndef TL_LANG_PARSE_LOGIC_H
#define TL_LANG_PARSE_LOGIC_H

#include <setjmp.h>

#include "core/strbuf.h"
#include "lang/front/ast.h"

typedef struct {
  const tl_token *tok;
  int n, pos;
  const char *src; /* the text identifiers are cut from */
  tl_arena *arena;
  int depth;       /* nesting of parenthesised terms */
  /* the error */
  int err_pos;
  char err[256], hint[256];
  jmp_buf *fail;
  bool oom; /* the error is an allocation that failed */
} tl_lparse;

/* at `$`: `$x` */
bool tl_lparse_lvar(tl_lparse *lp, tl_node **out);
/* at an identifier: is this `p(...)` a fact statement? Yes when a `.` follows the `)`
 * and is not directly followed by a method's name (`p(a).len()` is a call and a
 * method; `p(a).` at the end of a line, or `p(a). p(b).` on one, are facts), and for
 * `p(a).q(b).`: facts missing a space (tl_lparse_glued_end reports it) */
bool tl_lparse_fact_ahead(const tl_lparse *lp);
/* after a fact or a rule: is its `.` followed directly by a name (`p(a).q(b).`)? Then
 * the error is in lp, at the `.` (the item itself is kept: the next one follows) */
bool tl_lparse_glued_end(tl_lparse *lp);
/* at an item that is not fn/struct/impl: a fact, a rule, `relation`, `mod`, `use` */
bool tl_lparse_item(tl_lparse *lp, tl_ast_item *it);
/* after a failed item that began at token `start`: past its end (a fact or a rule:
 * the next `.` outside parentheses; `relation`, `mod`, `use`: `;` or `.`), or to the
 * next `fn`/`struct`/`impl`, whichever comes first */
void tl_lparse_skip_item(tl_lparse *lp, int start);

/* the tree dump (parse.h's format) of a logic item or node */
void tl_logic_dump_item(tl_strbuf *b, const tl_ast_item *it);
void tl_logic_dump_node(tl_strbuf *b, const tl_node *n);

/* a float constant's entity name in facts, rules and queries (the seed's weighted
 * facts): its shortest decimal form that reads back the same, with `.0` if integral */
void tl_lparse_float_name(double v, char b[40]);

#endif
