/* test_logic_agg.c — aggregates (TL_KB_AGG; Soufflé's `n = count : { .. }`, sum, min,
 * max) in the knowledge base: the C API's literal against hand-computed rows, its
 * misuse messages, recomputation when the aggregated relation gains facts, and a
 * differential of random programs with aggregates against SWI-Prolog's
 * aggregate_all/3 (skipped, saying so, when swipl is not installed); and `.input` /
 * `.output` files beside a program (Soufflé's default names, options, a bad line). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "lang/lang.h"
#include "test.h"
#include "tl.h"

static const tl_kb_type II[] = {TL_KB_INT, TL_KB_INT}, I1[] = {TL_KB_INT}, EI[] = {TL_KB_ENTITY, TL_KB_INT};

/* rows of the query rel(x, n) as "x n;" text, ascending */
static char *rows_text(tl_kb *kb, const char *rel, int arity) {
  tl_kb_term args[2] = {tl_kb_var("x"), tl_kb_var("n")};
  tl_tensor *t = tl_kb_query(kb, rel, arity, arity == 2 ? args : args + 1);
  tl_strbuf sb = {0};
  tl_strbuf_puts(&sb, "");
  if (!t || tl_ndim(t) != 2) {
    tl_strbuf_printf(&sb, "(query failed: %s)", tl_last_error(NULL));
    return tl_strbuf_take(&sb);
  }
  const int64_t *d = tl_data(t);
  for (int64_t i = 0; i < tl_dim(t, 0); i++) {
    if (arity == 2) tl_strbuf_printf(&sb, "%lld %lld;", (long long)d[2 * i], (long long)d[2 * i + 1]);
    else tl_strbuf_printf(&sb, "%lld;", (long long)d[i]);
  }
  tl_release(t);
  return tl_strbuf_take(&sb);
}

#define CHECK_ROWS_TEXT(kb, rel, arity, want)       \
  do {                                              \
    char *got_ = rows_text((kb), (rel), (arity));   \
    CHECK_STR(got_, (want));                        \
    free(got_);                                     \
  } while (0)

/* deg(x, n) :- node(x), n = OP over w(x, _) (the value column 1), through the C API */
static tl_status add_agg_rule(tl_kb *kb, const char *head, tl_kb_op op) {
  tl_kb_term hx[2] = {tl_kb_var("x"), tl_kb_var("n")}, nx[1] = {tl_kb_var("x")};
  tl_kb_term ag[3] = {tl_kb_var("x"), tl_kb_var("n"), tl_kb_num(1)};
  tl_kb_literal h = tl_kb_atom(head, 2, hx);
  tl_kb_literal body[2] = {tl_kb_atom("node", 1, nx), tl_kb_agg(op, "w", 3, ag)};
  return tl_kb_rule(kb, &h, 2, body);
}

TEST(logic_agg_c_api) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  tl_kb_relation(kb, "node", 1, I1);
  tl_kb_relation(kb, "w", 2, II);
  const char *heads[] = {"cnt", "sum", "lo", "hi"};
  for (int i = 0; i < 4; i++) {
    tl_kb_relation(kb, heads[i], 2, II);
    CHECK_INT(add_agg_rule(kb, heads[i], (tl_kb_op)(TL_KB_COUNT + i)), TL_OK);
  }
  for (int64_t x = 1; x <= 3; x++) tl_kb_fact(kb, "node", 1, &x);
  int64_t w[][2] = {{1, 4}, {1, -6}, {1, 9}, {2, 3}};
  tl_kb_facts(kb, "w", 4, &w[0][0]);
  /* by hand: node 1 has 4, -6, 9; node 2 has 3; node 3 nothing */
  CHECK_ROWS_TEXT(kb, "cnt", 2, "1 3;2 1;3 0;");
  CHECK_ROWS_TEXT(kb, "sum", 2, "1 7;2 3;3 0;");
  CHECK_ROWS_TEXT(kb, "lo", 2, "1 -6;2 3;");
  CHECK_ROWS_TEXT(kb, "hi", 2, "1 9;2 3;");
  /* w gains tuples after the strata were evaluated: aggregates recompute (they are
   * not monotone), as strata under not do */
  int64_t more[][2] = {{3, 5}, {1, -10}};
  tl_kb_facts(kb, "w", 2, &more[0][0]);
  CHECK_ROWS_TEXT(kb, "cnt", 2, "1 4;2 1;3 1;");
  CHECK_ROWS_TEXT(kb, "sum", 2, "1 -3;2 3;3 5;");
  CHECK_ROWS_TEXT(kb, "lo", 2, "1 -10;2 3;3 5;");
  CHECK_ROWS_TEXT(kb, "hi", 2, "1 9;2 3;3 5;");
  /* sum wraps as the rules' arithmetic does */
  tl_kb_relation(kb, "big", 2, II);
  int64_t big[][2] = {{7, INT64_MAX}, {7, 2}};
  tl_kb_facts(kb, "big", 2, &big[0][0]);
  tl_kb_relation(kb, "bsum", 1, I1);
  tl_kb_term n1[1] = {tl_kb_var("n")}, ag[2] = {tl_kb_var("n"), tl_kb_num(1)};
  tl_kb_literal h = tl_kb_atom("bsum", 1, n1), b = tl_kb_agg(TL_KB_SUM, "big", 2, ag);
  CHECK_INT(tl_kb_rule(kb, &h, 1, &b), TL_OK);
  CHECK_ROWS_TEXT(kb, "bsum", 1, "-9223372036854775807;");
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}

/* aggregates in rule text, added in two texts: the second's hidden relations are new */
TEST(logic_agg_in_rule_text) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  CHECK_INT(tl_kb_add_rules(kb, "e(1, 2).\ne(1, 3).\ne(2, 3).\nn(1).\nn(2).\nn(3).\n"
                                "deg(x, c) :- n(x), c = count : { e(x, _) }.\n"),
            TL_OK);
  CHECK_INT(tl_kb_add_rules(kb, "ind(y, c) :- n(y), c = count : { e(_, y) }.\n"
                                "tot(s) :- s = sum y : { e(_, y) }.\n"),
            TL_OK);
  CHECK_ROWS_TEXT(kb, "deg", 2, "1 2;2 1;3 0;");
  CHECK_ROWS_TEXT(kb, "ind", 2, "1 0;2 1;3 2;");
  CHECK_ROWS_TEXT(kb, "tot", 1, "8;");
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}

TEST(logic_agg_misuse_messages) {
  tl_ctx *ctx = tl_init();
  tl_kb *kb = tl_kb_new(ctx);
  tl_kb_relation(kb, "node", 1, I1);
  tl_kb_relation(kb, "w", 2, II);
  tl_kb_relation(kb, "named", 2, EI);
  tl_kb_relation(kb, "out", 2, II);
  tl_kb_term hx[2] = {tl_kb_var("x"), tl_kb_var("n")}, nx[1] = {tl_kb_var("x")};
  tl_kb_literal h = tl_kb_atom("out", 2, hx);
  tl_kb_term too_many[5] = {tl_kb_var("x"), tl_kb_var("x"), tl_kb_var("x"), tl_kb_var("n"), tl_kb_num(1)};
  tl_kb_term bad_col[3] = {tl_kb_var("x"), tl_kb_var("n"), tl_kb_num(2)};
  tl_kb_term no_num[3] = {tl_kb_var("x"), tl_kb_var("n"), tl_kb_var("y")};
  tl_kb_term ok[3] = {tl_kb_var("x"), tl_kb_var("n"), tl_kb_num(1)};
  tl_kb_term ent[3] = {tl_kb_var("x"), tl_kb_var("n"), tl_kb_num(0)};
  tl_kb_literal b[2] = {tl_kb_atom("node", 1, nx), tl_kb_agg(TL_KB_SUM, "w", 5, too_many)};
  CHECK_INT(tl_kb_rule(kb, &h, 2, b), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "kb_rule out(x, n) :- node(x), n = sum #1 : w(x, x, x): an aggregate over w groups on 3 "
                                "columns, more than its 2");
  b[1] = tl_kb_agg(TL_KB_MAX, "w", 3, bad_col);
  CHECK_INT(tl_kb_rule(kb, &h, 2, b), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "kb_rule out(x, n) :- node(x), n = max #2 : w(x): an aggregate's value column must be an "
                                "integer column of w, not 2");
  b[1] = tl_kb_agg(TL_KB_MIN, "named", 3, ent);
  CHECK_INT(tl_kb_rule(kb, &h, 2, b), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "kb_rule out(x, n) :- node(x), n = min #0 : named(x): an aggregate's value column must be "
                                "an integer column of named, not 0");
  b[1] = tl_kb_agg(TL_KB_COUNT, "w", 3, no_num);
  CHECK_INT(tl_kb_rule(kb, &h, 2, b), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "kb_rule: body literal 2: an aggregate's arguments are the group, the result and the value "
                                "column (TL_KB_NUM)");
  b[1] = tl_kb_agg(TL_KB_ADD, "w", 3, ok);
  CHECK_INT(tl_kb_rule(kb, &h, 2, b), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "kb_rule: body literal 2: an aggregate's operator must be TL_KB_COUNT .. TL_KB_MAX, not 0");
  /* the group must be bound elsewhere */
  b[0] = tl_kb_atom("node", 1, (tl_kb_term[]){tl_kb_var("z")});
  b[1] = tl_kb_agg(TL_KB_COUNT, "w", 3, ok);
  CHECK_INT(tl_kb_rule(kb, &h, 2, b), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "kb_rule out(x, n) :- node(z), n = count : w(x): unbound variable x (bind it in a positive "
                                "atom or as an arithmetic result)");
  /* through recursion: refused as negation is */
  b[0] = tl_kb_atom("node", 1, nx);
  CHECK_INT(tl_kb_rule(kb, &h, 2, b), TL_OK);
  tl_kb_term wx[2] = {tl_kb_var("x"), tl_kb_var("n")};
  tl_kb_literal wh = tl_kb_atom("w", 2, wx), wb = tl_kb_atom("out", 2, wx);
  CHECK_INT(tl_kb_rule(kb, &wh, 1, &wb), TL_ERR_ARG);
  CHECK_STR(tl_last_error(ctx), "kb_rule w(x, n) :- out(x, n): an aggregate is not stratified: out -> count w -> out");
  tl_kb_free(kb);
  TEST_SHUTDOWN(ctx);
}

/* ---- the differential against SWI-Prolog ----------------------------------------------- */

static uint64_t rng_state;
static int rnd(int n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((rng_state >> 33) % (uint64_t)n);
}

enum { NPROG = 120, MAXAGG = 6 };

/* one aggregate of the generated programs: the TL text of its braces and value, the
 * Prolog goal and value (program P), whether it groups on x */
typedef struct {
  const char *tl_body, *pl_body;
  const char *tl_value, *pl_value; /* NULL: count */
  bool grouped;
  bool outer_t; /* the rule binds t outside the braces, w(x, t), and its head holds it */
} shape;

static const shape shapes[] = {
    {"e(x, y)", "e(P, X, Y)", "y", "Y", true, false},
    {"e(x, _)", "e(P, X, _)", NULL, NULL, true, false},
    {"e(y, x)", "e(P, Y, X)", "y", "Y", true, false},
    {"e(x, y), w(y, z)", "e(P, X, Y), w(P, Y, Z)", "z", "Z", true, false},
    {"e(x, y), w(y, z)", "e(P, X, Y), w(P, Y, Z)", "y * 2 - z", "Y * 2 - Z", true, false},
    {"p(x, y)", "p(P, X, Y)", "y", "Y", true, false},
    {"w(x, y), y > 1", "w(P, X, Y), Y > 1", "y", "Y", true, false},
    {"e(x, y), not w(y, _)", "e(P, X, Y), \\+ w(P, Y, _)", "y", "Y", true, false},
    {"w(x, y), r = y % 3", "w(P, X, Y), R is Y rem 3", "r", "R", true, false},
    {"e(_, y)", "e(P, _, Y)", "y", "Y", false, false},
    {"p(y, z)", "p(P, Y, Z)", "z - y", "Z - Y", false, false},
    {"w(_, y)", "w(P, _, Y)", "y", "Y", false, false},
    {"e(x, y), y > t", "e(P, X, Y), Y > T", "y", "Y", true, true},
    {"w(x, y), y < t", "w(P, X, Y), Y < T", "y - t", "Y - T", true, true},
    {"p(x, y), not e(y, t)", "p(P, X, Y), \\+ e(P, Y, T)", "y", "Y", true, true},
};
static const char *const ops[] = {"count", "sum", "min", "max"};

static bool have_swipl(void) { return system("command -v swipl >/dev/null 2>&1") == 0; }

/* program k's facts into both texts */
static void gen_facts(tl_strbuf *tl, tl_strbuf *pl, int k) {
  int ne = rnd(9), nw = rnd(9);
  bool seen[2][5][10] = {{{0}}}; /* relations are sets (Soufflé's); Prolog's clauses are not */
  for (int i = 0; i < ne; i++) {
    int a = rnd(5), b = rnd(5);
    if (seen[0][a][b]) continue;
    seen[0][a][b] = true;
    tl_strbuf_printf(tl, "e(%d, %d).\n", a, b);
    tl_strbuf_printf(pl, "e(%d, %d, %d).\n", k, a, b);
  }
  for (int i = 0; i < nw; i++) {
    int a = rnd(5), b = rnd(10) - 3;
    if (seen[1][a][b + 3]) continue;
    seen[1][a][b + 3] = true;
    tl_strbuf_printf(tl, "w(%d, %d).\n", a, b);
    tl_strbuf_printf(pl, "w(%d, %d, %d).\n", k, a, b);
  }
  for (int x = 0; x < 5; x++) {
    tl_strbuf_printf(tl, "dom(%d).\n", x);
    tl_strbuf_printf(pl, "dom(%d, %d).\n", k, x);
  }
  tl_strbuf_puts(tl, "relation e(i64, i64);\nrelation w(i64, i64);\np(x, y) :- e(x, y).\np(x, y) :- p(x, z), e(z, y).\n");
}

/* rule j of program k: a{j}(x, n) or a{j}(n), with its Prolog twin agg(P, J, X, N) */
static void gen_rule(tl_strbuf *tl, tl_strbuf *pl, int k, int j, const shape *s, int op) {
  const char *tl_val = op && s->tl_value ? s->tl_value : "";
  if (op && !s->tl_value) op = 0; /* no value: count */
  if (s->outer_t)
    tl_strbuf_printf(tl, "a%d(x, t, n) :- dom(x), w(x, t), n = %s %s : { %s }.\n", j, ops[op], op ? tl_val : "", s->tl_body);
  else if (s->grouped)
    tl_strbuf_printf(tl, "a%d(x, n) :- dom(x), n = %s %s : { %s }.\n", j, ops[op], op ? tl_val : "", s->tl_body);
  else tl_strbuf_printf(tl, "a%d(n) :- n = %s %s : { %s }.\n", j, ops[op], op ? tl_val : "", s->tl_body);
  const char *x = s->grouped ? "X" : "-1";
  const char *dom = s->outer_t ? "dom(P, X), w(P, X, T), " : s->grouped ? "dom(P, X), " : "";
  tl_strbuf_printf(pl, "row(%d, %d, [%s%s, N]) :- P = %d, %s", k, j, x, s->outer_t ? ", T" : "", k, dom);
  if (op == 0) tl_strbuf_printf(pl, "aggregate_all(count, (%s), N).\n", s->pl_body);
  else tl_strbuf_printf(pl, "aggregate_all(%s(V), (%s, V is %s), N).\n", ops[op], s->pl_body, s->pl_value);
}

TEST(logic_agg_differential_swipl) {
  if (!have_swipl()) {
    fprintf(stderr, "logic_agg_differential_swipl: swipl not found, skipped (apt-get install swi-prolog-core)\n");
    return;
  }
  rng_state = 20261127;
  tl_strbuf pl = {0}, want = {0}, got = {0};
  tl_strbuf_puts(&pl, ":- style_check(-singleton).\n:- style_check(-discontiguous).\n:- dynamic e/3, w/3, dom/2.\n"
                      ":- dynamic row/3.\n:- table p/3.\np(P, X, Y) :- e(P, X, Y).\np(P, X, Y) :- p(P, X, Z), e(P, Z, Y).\n");
  char *tl_text[NPROG];
  int nagg[NPROG];
  for (int k = 0; k < NPROG; k++) {
    tl_strbuf tl = {0};
    gen_facts(&tl, &pl, k);
    nagg[k] = 2 + rnd(MAXAGG - 1);
    for (int j = 0; j < nagg[k]; j++)
      gen_rule(&tl, &pl, k, j, &shapes[rnd((int)(sizeof shapes / sizeof *shapes))], rnd(4));
    tl_text[k] = tl_strbuf_take(&tl);
  }
  /* rows of one rule ascending, as TL's query gives them */
  tl_strbuf_puts(&pl, "main :- forall((between(0, 10000, P), between(0, 10, J)), (findall(R, row(P, J, R), Rs0),\n"
                      "  msort(Rs0, Rs), forall(member(R, Rs), (atomic_list_concat([P, J | R], ' ', S), writeln(S))))).\n");
  char *dir = tl_test_tmpdir(), path[512], cmd[1200];
  snprintf(path, sizeof path, "%s/agg.pl", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) fputs(pl.data, f), fclose(f);
  snprintf(cmd, sizeof cmd, "swipl -q -g main -t halt '%s' 2>&1", path);
  FILE *p = popen(cmd, "r");
  char line[256];
  while (p && fgets(line, sizeof line, p)) tl_strbuf_puts(&want, line);
  CHECK_INT(p ? pclose(p) : -1, 0);
  /* TL: each program in a knowledge base of its own; rows in the order Prolog's main
   * prints them (programs, then rules, then x ascending: dom's order) */
  tl_ctx *ctx = tl_init();
  int rows = 0, empty_minmax = 0;
  for (int k = 0; k < NPROG; k++) {
    tl_kb *kb = tl_kb_new(ctx);
    if (tl_kb_add_rules(kb, tl_text[k]) != TL_OK) {
      tl_test_fail(__FILE__, __LINE__, "program %d: %s\n%s", k, tl_last_error(ctx), tl_text[k]);
      tl_kb_free(kb);
      continue;
    }
    for (int j = 0; j < nagg[k]; j++) {
      char rel[16];
      snprintf(rel, sizeof rel, "a%d", j);
      snprintf(line, sizeof line, "a%d(x, n)", j);
      bool grouped = strstr(tl_text[k], line) != NULL;
      snprintf(line, sizeof line, "a%d(x, t, n)", j);
      int ncol = strstr(tl_text[k], line) ? 3 : grouped ? 2 : 1;
      tl_kb_term args[3] = {tl_kb_var("x"), tl_kb_var("t"), tl_kb_var("n")};
      if (ncol == 2) args[1] = args[2];
      tl_tensor *t = tl_kb_query(kb, rel, ncol, ncol == 1 ? args + 2 : args);
      if (!t) {
        tl_test_fail(__FILE__, __LINE__, "program %d: query %s: %s", k, rel, tl_last_error(ctx));
        continue;
      }
      const int64_t *d = tl_data(t);
      int64_t n = tl_dim(t, 0);
      if (ncol == 2 && n < 5) empty_minmax++;
      for (int64_t i = 0; i < n; i++, rows++) {
        tl_strbuf_printf(&got, "%d %d", k, j);
        if (ncol == 1) tl_strbuf_puts(&got, " -1");
        for (int c = 0; c < ncol; c++) tl_strbuf_printf(&got, " %lld", (long long)d[i * ncol + c]);
        tl_strbuf_puts(&got, "\n");
      }
      tl_release(t);
    }
    tl_kb_free(kb);
  }
  /* compare line by line, naming the first program that differs */
  const char *a = got.data ? got.data : "", *b = want.data ? want.data : "";
  if (strcmp(a, b)) {
    int line_no = 1;
    const char *a0 = a;
    while (*a && *a == *b) line_no += *a == '\n', a++, b++;
    while (a > a0 && a[-1] != '\n') a--, b--; /* from the line's start */
    int prog = -1;
    sscanf(b, "%d", &prog);
    tl_test_fail(__FILE__, __LINE__, "TL and SWI-Prolog differ at line %d (program %d):\nTL: %.80s\nswipl: %.80s\n%s", line_no,
                 prog, a, b, prog >= 0 && prog < NPROG ? tl_text[prog] : "");
  }
  /* not vacuous: many rows, and min/max over empty groups met */
  CHECK(rows > 1000);
  CHECK(empty_minmax > 20);
  for (int k = 0; k < NPROG; k++) free(tl_text[k]);
  tl_strbuf_free(&pl), tl_strbuf_free(&want), tl_strbuf_free(&got);
  tl_test_rm_tree(dir);
  TEST_SHUTDOWN(ctx);
}

/* ---- .input / .output files ------------------------------------------------------------- */

static bool write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  fputs(text, f);
  return fclose(f) == 0;
}

/* runs the program text at dir/prog.tl; its exit code, stdout and stderr (free them) */
static int run_prog(const char *dir, const char *text, char **out, char **err) {
  char path[512];
  snprintf(path, sizeof path, "%s/prog.tl", dir);
  if (!write_text(path, text)) return -1;
  size_t nout = 0, nerr = 0;
  FILE *fo = open_memstream(out, &nout), *fe = open_memstream(err, &nerr);
  tl_lang_run_options o = {.out = fo, .err = fe};
  int rc = tl_lang_run_source(path, text, strlen(text), &o);
  fclose(fo), fclose(fe);
  return rc;
}

TEST(logic_io_files_beside_the_program) {
  char *dir = tl_test_tmpdir(), path[512], *out = NULL, *err = NULL;
  /* Soufflé's default names: edge.facts read, path.csv written, tab-separated */
  snprintf(path, sizeof path, "%s/edge.facts", dir);
  CHECK(write_text(path, "1\t2\n2\t3\n3\t1\n"));
  snprintf(path, sizeof path, "%s/names.csv", dir);
  CHECK(write_text(path, "1;one\n2;two words\n"));
  const char *prog = "relation edge(i64, i64);\nrelation named(i64, entity);\n.input edge\n"
                     ".input named(filename=\"names.csv\", delimiter=\";\")\n"
                     "path(x, y) :- edge(x, y).\npath(x, y) :- path(x, z), edge(z, y).\n"
                     "far(n, c) :- named(x, n), c = count : { path(x, _) }.\n"
                     ".output path\n.output far(filename=\"far.tsv\")\nfn main() { println(?path(1, 1)); }\n";
  CHECK_INT(run_prog(dir, prog, &out, &err), 0);
  CHECK_STR(out, "1.0\n");
  CHECK_STR(err, "");
  snprintf(path, sizeof path, "%s/path.csv", dir);
  char *got = tl_test_slurp(path);
  /* a 3-cycle: every pair */
  CHECK_STR(got ? got : "(none)", "1\t1\n1\t2\n1\t3\n2\t1\n2\t2\n2\t3\n3\t1\n3\t2\n3\t3\n");
  free(got);
  snprintf(path, sizeof path, "%s/far.tsv", dir);
  got = tl_test_slurp(path);
  CHECK_STR(got ? got : "(none)", "one\t3\ntwo words\t3\n");
  free(got), free(out), free(err);
  /* a malformed line: the error names it, and the program does not run */
  snprintf(path, sizeof path, "%s/edge.facts", dir);
  CHECK(write_text(path, "1\t2\n2\t3\t4\n"));
  CHECK_INT(run_prog(dir, "relation edge(i64, i64);\n.input edge\nfn main() { println(\"ran\"); }\n", &out, &err), 1);
  CHECK_STR(out, "");
  char want[1200];
  snprintf(want, sizeof want, "%s/prog.tl:2:1: runtime error: `.input edge`: %s/edge.facts:2:4: `edge` has 2 columns, and "
           "this line has more (nothing of it was loaded)\n", dir, dir);
  CHECK_STR(err, want);
  free(out), free(err);
  tl_test_rm_tree(dir);
}
