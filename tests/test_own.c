/* test_own.c — the ownership pass (src/lang/check/own.c): which read of a variable is its
 * last use, on the control-flow graph (sequence, branches, loops with back edges,
 * break, continue, return). Each program marks the reads to check with a name; the
 * test lists, in source order, the last-use flag of every read of those names. */
#include <stdlib.h>
#include <string.h>

#include "lang/front/lex.h"
#include "lang/check/own.h"
#include "lang/front/parse.h"
#include "lang/check/sema.h"
#include "test.h"

/* the flags of the reads of `name` in source order, as a string of 0/1 */
static void collect(const tl_node *n, const char *name, char *out) {
  if (!n) return;
  if (n->kind == TL_N_IDENT && !strcmp(n->name, name)) strcat(out, n->last_use ? "1" : "0");
  const tl_node *kids[] = {n->cond, n->lhs, n->rhs, n->then, n->els, n->body};
  if (n->kind == TL_N_BINARY || n->kind == TL_N_ASSIGN) { /* evaluation order: lhs then rhs */
    if (!(n->kind == TL_N_ASSIGN && n->op == TL_TOK_ASSIGN && n->lhs->kind == TL_N_IDENT)) /* `a = e` writes a */
      collect(n->lhs, name, out);
    collect(n->rhs, name, out);
    return;
  }
  if (n->kind == TL_N_METHOD || n->kind == TL_N_CALL || n->kind == TL_N_INDEX) collect(n->lhs, name, out);
  for (const tl_node *a = n->args; a; a = a->next) collect(a, name, out);
  for (const tl_node *s = n->stmts; s; s = s->next) collect(s, name, out);
  for (size_t i = 0; i < sizeof kids / sizeof kids[0]; i++)
    if (!(i == 1 && (n->kind == TL_N_METHOD || n->kind == TL_N_CALL || n->kind == TL_N_INDEX))) collect(kids[i], name, out);
  collect(n->value, name, out);
}

static char *flags_of(const char *src, const char *name) {
  static char out[64];
  out[0] = 0;
  tl_arena *arena = tl_arena_create();
  tl_diag diag;
  tl_diag_init(&diag, "t.tl", src, strlen(src));
  tl_lexer lx = {.arena = arena};
  tl_program *prog = NULL;
  tl_sema S;
  tl_lex(&lx, &diag);
  if (!tl_parse(lx.tokens, lx.ntokens, &diag, arena, &prog) && !tl_sema_check(prog, &diag, arena, &S)) {
    for (tl_fninfo *f = S.fns; f; f = f->next) tl_own_analyze(f);
    collect(S.main->fn->body, name, out);
  } else {
    snprintf(out, sizeof out, "errors");
    fputs(diag.text.data ? diag.text.data : "", stderr);
  }
  tl_diag_free(&diag);
  tl_lex_free(&lx);
  tl_arena_destroy(arena);
  return out;
}

TEST(own_straight_line_last_read_moves) {
  CHECK_STR(flags_of("fn main() { let a = [1.0]; let b = a; println(b); let c = b; println(c); }", "b"), "01");
  CHECK_STR(flags_of("fn main() { let a = [1.0]; println(a); println(a); }", "a"), "01");
}

TEST(own_branches_join) {
  /* read in one branch, then after the if: the branch read is not last */
  CHECK_STR(flags_of("fn main() { let a = [1.0]; if true { println(a); } println(a); }", "a"), "01");
  /* last in both branches */
  CHECK_STR(flags_of("fn main() { let a = [1.0]; if true { let b = a; } else { println(a); } }", "a"), "11");
}

TEST(own_loops_back_edge_keeps_values_alive) {
  /* read inside a loop, declared outside: the next iteration reads it again */
  CHECK_STR(flags_of("fn main() { let a = [1.0]; let mut i = 0; while i < 3 { let b = a; i += 1; } }", "a"), "0");
  /* ... unless the iteration leaves right after */
  CHECK_STR(flags_of("fn main() { let a = [1.0]; loop { let b = a; break; } }", "a"), "1");
  /* continue goes back to the head, where the value is read again */
  CHECK_STR(flags_of("fn main() { let a = [1.0]; for i in 0..3 { if i == 1 { continue; } let b = a; } }", "a"), "0");
  /* redefined before the next read: each read is the last of its value */
  CHECK_STR(flags_of("fn main() { let mut a = [1.0]; for i in 0..3 { let b = a; a = [2.0]; } }", "a"), "1");
  /* a value used after the loop stays alive through it */
  CHECK_STR(flags_of("fn main() { let a = [1.0]; for i in 0..3 { println(a); } let b = a; }", "a"), "01");
}

TEST(own_return_ends_every_path) {
  CHECK_STR(flags_of("fn main() { let a = [1.0]; for i in 0..3 { if i == 2 { let b = a; return; } } }", "a"), "1");
  CHECK_STR(flags_of("fn main() { let a = [1.0]; let n = 2; if n > 1 { println(a); return; } println(a); }", "a"),
            "11");
}

TEST(own_short_circuit_may_skip) {
  /* the right side of && runs only sometimes: the read after it is still needed */
  CHECK_STR(flags_of("fn main() { let s = \"x\"; let ok = true && s == \"x\"; println(s); }", "s"), "01");
}
