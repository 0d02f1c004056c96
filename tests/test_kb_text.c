/* test_kb_text.c — tl_kb_add_rules: Datalog text into a knowledge base (tl.h), the
 * language's syntax and checks from C: answers worked out by hand, every error with
 * its exact message, and a failing text leaving the knowledge base as it was. */
#include <stdint.h>
#include <string.h>

#include "test.h"
#include "tl.h"

static void check_rows_at(int line, tl_tensor *t, int64_t n, int k, const int64_t *want) {
  if (!t || tl_get_dtype(t) != TL_I64 || tl_ndim(t) != 2 || tl_dim(t, 0) != n || tl_dim(t, 1) != k) {
    tl_test_fail(__FILE__, line, "the query did not give i64 [%lld, %d]", (long long)n, k);
    return;
  }
  const int64_t *got = tl_data(t);
  for (int64_t i = 0; got && i < n * k; i++)
    if (got[i] != want[i]) {
      tl_test_fail(__FILE__, line, "element %lld is %lld, expected %lld", (long long)i, (long long)got[i],
                   (long long)want[i]);
      return;
    }
}
#define CHECK_ROWS(t, n, k, ...) check_rows_at(__LINE__, (t), (n), (k), (const int64_t[]){__VA_ARGS__})
#define Q(kb, rel, ...) \
  tl_kb_query((kb), (rel), (int)(sizeof((tl_kb_term[]){__VA_ARGS__}) / sizeof(tl_kb_term)), (tl_kb_term[]){__VA_ARGS__})

/* adding text fails with exactly this message */
#define CHECK_FAILS(ctx, kb, text, msg)                               \
  do {                                                                \
    CHECK_INT(tl_kb_add_rules((kb), (text)), TL_ERR_ARG);             \
    CHECK_STR(tl_last_error(ctx), (msg));                             \
  } while (0)

TEST(kb_text_facts_and_rules) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  CHECK_INT(tl_kb_add_rules(kb, "parent(alice, bob).\n"
                                "parent(bob, carol).\n"
                                "anc(x, y) :- parent(x, y).\n"
                                "anc(x, y) :- parent(x, z), anc(z, y).\n"),
            TL_OK);
  CHECK_INT(tl_kb_entity_count(kb), 3); /* alice 0, bob 1, carol 2 */
  CHECK_STR(tl_kb_entity_name(kb, 2), "carol");
  CHECK_ROWS(Q(kb, "anc", tl_kb_ent(0), tl_kb_var("w")), 2, 1, 1, 2);
  CHECK_INT(tl_kb_count(kb, "anc"), 3);
  /* a later text sees the entities: `alice` in a rule is that entity */
  CHECK_INT(tl_kb_add_rules(kb, "not_alice(x) :- anc(x, _), x != alice.\nparent(carol, dan).\n"), TL_OK);
  CHECK_ROWS(Q(kb, "not_alice", tl_kb_var("x")), 2, 1, 1, 2);
  CHECK_INT(tl_kb_count(kb, "anc"), 6);
  CHECK_STR(tl_kb_entity_name(kb, 3), "dan");
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}

TEST(kb_text_uses_the_knowledge_base) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  CHECK_INT(tl_kb_entity(kb, "zed"), 0);
  CHECK_INT(tl_kb_relation(kb, "edge", 2, (tl_kb_type[]){TL_KB_ENTITY, TL_KB_ENTITY}), TL_OK);
  /* `zed` is an entity of kb, so a rule's `zed` is that entity; new ones follow it */
  CHECK_INT(tl_kb_add_rules(kb, "edge(a, b).\n"
                                "edge(b, zed).\n"
                                "reach(x, y) :- edge(x, y).\n"
                                "reach(x, y) :- edge(x, z), reach(z, y).\n"
                                "to_zed(x) :- reach(x, zed).\n"
                                "from_zed(y) :- reach(zed, y).\n"),
            TL_OK);
  CHECK_ROWS(Q(kb, "to_zed", tl_kb_var("x")), 2, 1, 1, 2);
  CHECK_INT(tl_kb_count(kb, "from_zed"), 0);
  /* edge's columns are kb's: an integer there is an error */
  CHECK_FAILS(ctx, kb, "edge(a, 3).", "kb_add_rules: 1:9: argument 2 of `edge` is used both as an entity and as an integer");
  CHECK_FAILS(ctx, kb, "relation edge(entity, i64);", "kb_add_rules: 1:10: relation `edge` is declared again with other columns");
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}

TEST(kb_text_types_arithmetic_negation) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  CHECK_INT(tl_kb_add_rules(kb, "relation score(entity, i64);\n"
                                "age(ann, 30).\n"
                                "age(bob, 12).\n"
                                "adult(x) :- age(x, n), n >= 18.\n"
                                "next(x, m) :- age(x, n), add(n, 1, m).\n"
                                "flag().\n"
                                "n(-3).\n"
                                "neg(x) :- n(x), x < 0, flag().\n"
                                "minor(x) :- age(x, _), !adult(x).\n"),
            TL_OK);
  CHECK_ROWS(Q(kb, "adult", tl_kb_var("x")), 1, 1, 0);
  CHECK_ROWS(Q(kb, "next", tl_kb_var("x"), tl_kb_var("m")), 2, 2, 0, 31, 1, 13);
  CHECK_ROWS(Q(kb, "neg", tl_kb_var("x")), 1, 1, -3);
  CHECK_ROWS(Q(kb, "minor", tl_kb_var("x")), 1, 1, 1);
  CHECK_INT(tl_kb_fact(kb, "score", 2, (int64_t[]){1, 7}), TL_OK); /* declared (entity, i64) */
  CHECK_ROWS(Q(kb, "score", tl_kb_var("x"), tl_kb_var("s")), 1, 2, 1, 7);
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}

TEST(kb_text_errors) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  CHECK_FAILS(ctx, kb, "p(a)\nq(b).",
              "kb_add_rules: 2:1: expected '.' to end the fact or ':-' to start a rule's body, found identifier 'q'");
  CHECK_FAILS(ctx, kb, "p(a).\nq(x) :- r(x).", "kb_add_rules: 2:9: unknown relation `r`");
  CHECK_FAILS(ctx, kb, "p(a).\nq(x) :- not p(x).", "kb_add_rules: 2:15: unbound variable `x`");
  CHECK_FAILS(ctx, kb, "p(a).\nq(x) :- p(x), y > 2.",
              "kb_add_rules: 2:15: unbound variable `y` (no fact names an entity `y`, so here it is a variable)");
  CHECK_FAILS(ctx, kb, "age(ann, 30).\nage(bob, old).",
              "kb_add_rules: 2:10: argument 2 of `age` is used both as an entity and as an integer");
  CHECK_FAILS(ctx, kb, "p(a).\np(a, b).", "kb_add_rules: 2:1: `p` takes 1 argument, not 2");
  CHECK_FAILS(ctx, kb, "p(a).\nq(x) :- r(x).\ns(y) :- t(y).", "kb_add_rules: 2:9: unknown relation `r` (and 1 more error)");
  CHECK_FAILS(ctx, kb, "fn main() { }", "kb_add_rules: 1:1: only facts, rules and relation declarations go in rule text");
  CHECK_FAILS(ctx, kb, "p(x) :- q(x), not p(x).\nq(a).", "kb_add_rules: 1:15: negation is not stratified: p -> not p");
  /* text that says "out of memory" is a user's error, not a failed allocation (the
   * diagnostics quote the source line; a flag, not the words, marks running out) */
  CHECK_FAILS(ctx, kb, "out of memory.",
              "kb_add_rules: 1:1: only facts, rules and relation declarations go in rule text (and 1 more error)");
  CHECK_FAILS(ctx, kb, "p(a).\nq(x) :- p(x), \"out of memory\".",
              "kb_add_rules: 2:30: expected an atom `p(..)` or a comparison, found '.'");
  /* every one of them left kb as it was */
  CHECK_INT(tl_kb_entity_count(kb), 0);
  CHECK_INT(tl_kb_count(kb, "p"), -1);
  /* negation through a rule kb already has: refused by kb itself */
  CHECK_INT(tl_kb_add_rules(kb, "p(a).\nq(x) :- p(x), not r(x).\nr(x) :- p(x).\n"), TL_OK);
  CHECK_FAILS(ctx, kb, "r(x) :- q(x).", "kb_add_rules: 1:9: negation is not stratified: q -> not r -> q");
  CHECK_INT(tl_kb_count(kb, "q"), 0);
  CHECK_INT(tl_kb_add_rules(NULL, "p(a)."), TL_ERR_ARG);
  CHECK_STR(tl_last_error(NULL), "kb_add_rules: the knowledge base is NULL");
  CHECK_FAILS(ctx, kb, NULL, "kb_add_rules: the text is NULL");
  CHECK_INT(tl_kb_add_rules(kb, ""), TL_OK); /* nothing to add */
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}

/* several facts and rules on one line: a `.` and a space end each (the bug: the second
 * fact read as a method called on the first) */
TEST(kb_text_facts_on_one_line) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  CHECK_INT(tl_kb_add_rules(kb, "edge(a, b). edge(b, c). edge(c, d).\npath(x, y) :- edge(x, y). path(x, z) :- path(x, y), edge(y, z)."), TL_OK);
  CHECK_INT(tl_kb_count(kb, "edge"), 3);
  CHECK_INT(tl_kb_count(kb, "path"), 6); /* ab ac ad bc bd cd */
  /* no space after the dot: said at the dot (it read as a method call on the fact) */
  CHECK_FAILS(ctx, kb, "edge(d, e).edge(e, f).",
              "kb_add_rules: 1:11: a space or a line end must follow the `.` that ends a fact or a rule");
  CHECK_FAILS(ctx, kb, "p(x) :- edge(x, _).q(y) :- edge(_, y).",
              "kb_add_rules: 1:19: a space or a line end must follow the `.` that ends a fact or a rule");
  CHECK_INT(tl_kb_count(kb, "edge"), 3);
  tl_kb_free(kb);
  tl_shutdown(ctx);
}

/* a bare name in a rule that is an entity, and a bare variable written once, are
 * warnings: the text is added, tl_kb_warnings says what and where (issue 22: with
 * `alloc(p, o).` the rule `pt(v, o) :- alloc(v, o).` silently gave one row) */
TEST(kb_text_warnings) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  CHECK_STR(tl_kb_warnings(kb), ""); /* nothing added yet */
  CHECK_INT(tl_kb_add_rules(kb, "alloc(p, o).\nalloc(q, h).\npt(v, o) :- alloc(v, o).\n"), TL_OK);
  CHECK_STR(tl_kb_warnings(kb), "kb_add_rules: 3:7: `o` is the entity `o` here, not a variable: the fact at line 1 "
                                "names it (write `$o` for a variable, or `\"o\"` for the entity without this warning)\n");
  CHECK_INT(tl_kb_count(kb, "pt"), 1); /* what the rule says: only allocations of o */
  /* `$o` is the variable; `"o"` the entity, without a warning; the warnings are the
   * last call's */
  CHECK_INT(tl_kb_add_rules(kb, "pt2(v, $o) :- alloc(v, $o).\nat_o(v) :- alloc(v, \"o\").\n"), TL_OK);
  CHECK_STR(tl_kb_warnings(kb), "");
  CHECK_ROWS(Q(kb, "pt2", tl_kb_var("v"), tl_kb_var("o")), 2, 2, 0, 1, 2, 3); /* p o, q h */
  CHECK_ROWS(Q(kb, "at_o", tl_kb_var("v")), 1, 1, 0);
  /* an entity of the knowledge base itself; a variable written once */
  CHECK_INT(tl_kb_entity(kb, "zed"), 4);
  CHECK_INT(tl_kb_add_rules(kb, "to_zed(x) :- alloc(x, zed).\nhas(x) :- alloc(x, y).\n"), TL_OK);
  CHECK_STR(tl_kb_warnings(kb),
            "kb_add_rules: 1:23: `zed` is the entity `zed` here, not a variable: the knowledge base has it (write "
            "`$zed` for a variable, or `\"zed\"` for the entity without this warning)\n"
            "kb_add_rules: 2:20: `y` occurs only once in this rule, so it is a variable that matches any value (no "
            "fact names an entity `y`: write `_` for any value, or `\"y\"` for the entity)\n");
  CHECK_INT(tl_kb_count(kb, "has"), 2);
  /* a rule's name in quotes is an entity though no fact names it */
  CHECK_INT(tl_kb_add_rules(kb, "marked(\"nobody\").\nis_marked(x) :- marked(x), x == \"nobody\".\n"), TL_OK);
  CHECK_ROWS(Q(kb, "is_marked", tl_kb_var("x")), 1, 1, 5);
  CHECK_STR(tl_kb_entity_name(kb, 5), "nobody");
  /* an error is the first error, though a warning comes before it; the warnings stay */
  CHECK_FAILS(ctx, kb, "w(v) :- alloc(v, o).\nbad(x) :- not alloc(x, _).\n",
              "kb_add_rules: 2:21: unbound variable `x`");
  CHECK_STR(tl_kb_warnings(kb), "kb_add_rules: 1:18: `o` is the entity `o` here, not a variable: the knowledge base "
                                "has it (write `$o` for a variable, or `\"o\"` for the entity without this warning)\n");
  /* a string is any text but NUL (Soufflé's symbols), "_" an entity, not the wildcard */
  CHECK_FAILS(ctx, kb, "p(\"a\\0b\").",
              "kb_add_rules: 1:3: a string in a fact, rule or query names an entity, and holds no NUL character");
  CHECK_INT(tl_kb_add_rules(kb, "sym(\"two words\", \"_\").\nother(x) :- sym(\"two words\", x)."), TL_OK);
  CHECK_INT(tl_kb_count(kb, "other"), 1);
  CHECK_STR(tl_kb_entity_name(kb, tl_kb_entity_count(kb) - 1), "_");
  CHECK(tl_kb_warnings(NULL) == NULL);
  CHECK_STR(tl_last_error(NULL), "kb_warnings: the knowledge base is NULL");
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}
