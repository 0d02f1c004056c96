/* parse.h — the TL parser (LANGUAGE.md §2-4): tokens -> syntax tree.
 * in: the lexer's tokens (ending with TL_TOK_EOF), the diagnostics of the file (its
 * source gives identifiers their text), an arena; out: the program, every node in the
 * arena. Every syntax error goes to the diagnostics; the parser recovers at the next
 * statement or item, so one run reports them all. Tensor comprehensions (§7) are
 * parsed; Datalog and `relation` are not yet (an error says so). */
#ifndef TL_LANG_PARSE_H
#define TL_LANG_PARSE_H

#include "lang/front/ast.h"

/* returns the number of errors; *out is a program either way (with TL_N_ERROR
 * nodes where statements failed), NULL only when out of memory */
int tl_parse(const tl_token *tokens, int n, tl_diag *diag, tl_arena *arena, tl_program **out);

/* The tree as S-expressions, one item a line (malloc'd; NULL when out of memory):
 *   (fn NAME (PARAM...) [-> TYPE] BLOCK)   PARAM: (x T) (mut x T) (x &mut T) self &self
 *                                          &mut self
 *   (struct NAME (FIELD TYPE)...)  (impl NAME FN...)   TYPE: i64, Tensor<f32,2>
 *   (block STMT... [(value EXPR)])  (let [mut] NAME [: TYPE] [EXPR])  (= LHS RHS) (+= ...)
 *   (while C BLOCK) (loop BLOCK) (for X EXPR BLOCK) (break) (continue) (return [EXPR])
 *   1 2.5 (str "s") (char 'c') true x self Tensor::zeros (- x) (! x) (&mut x) (+ a b)
 *   (as x f32) (.. a b) with `_` for an open end, (call f ARGS) (method x m ARGS)
 *   (. x f) (index t ARGS) (array ELEMS) (struct-lit P (x EXPR)...) (if C BLOCK [ELSE])
 *   (compr (AXIS...) CLAUSE... [BLOCK]): `[i, j | i <- 0..n, x > 0 { .. }]` is
 *     (compr (i j) (<- i (.. 0 n)) (> x 0) (block ..)); a generator is (<- NAME RANGE),
 *     any other clause a filter expression; `[ | ..]` has the axes ()
 *   (error)
 * An expression statement is its expression, bare. */
char *tl_ast_dump(const tl_program *p);

#endif
