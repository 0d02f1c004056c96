/* test_parse.c — the TL parser: the tree of every construct (as tl_ast_dump's
 * S-expressions: precedence, associativity, postfix chains, statements, items) and
 * the rendered diagnostics of syntax errors, with recovery to report them all. */
#include <stdlib.h>

#include "lang/front/parse.h"
#include "test.h"

typedef struct {
  char *dump;  /* the tree, one item a line */
  char *diags; /* the rendered diagnostics, "" when none */
  int errors;  /* tl_parse's count (lexical errors not included) */
  tl_program *prog;
  tl_arena *arena;
  tl_lexer lx;
  tl_diag d;
} parsed;

static void parse(parsed *r, const char *src) {
  tl_diag_init(&r->d, "t.tl", src, strlen(src));
  tl_lex(&r->lx, &r->d);
  r->arena = tl_arena_create();
  r->errors = tl_parse(r->lx.tokens, r->lx.ntokens, &r->d, r->arena, &r->prog);
  r->dump = tl_ast_dump(r->prog);
  r->diags = r->d.text.data ? r->d.text.data : "";
}

static void done(parsed *r) {
  free(r->dump);
  tl_arena_destroy(r->arena);
  tl_lex_free(&r->lx);
  tl_diag_free(&r->d);
}

/* the body of `fn f() { BODY }`, parsed, must dump as `(fn f () EXPECTED)` */
#define CHECK_BODY(body, expected)                            \
  do {                                                        \
    parsed r_;                                                \
    parse(&r_, "fn f() { " body " }");                        \
    CHECK_STR(r_.dump, "(fn f () " expected ")\n");           \
    CHECK_STR(r_.diags, "");                                  \
    done(&r_);                                                \
  } while (0)

/* a whole file must dump as EXPECTED without errors */
#define CHECK_FILE(src, expected)                             \
  do {                                                        \
    parsed r_;                                                \
    parse(&r_, src);                                          \
    CHECK_STR(r_.dump, expected);                             \
    CHECK_STR(r_.diags, "");                                  \
    CHECK_INT(r_.errors, 0);                                  \
    done(&r_);                                                \
  } while (0)

/* a file must report exactly DIAGS (NERR errors) and still dump as DUMP */
#define CHECK_ERRORS(src, nerr, want_diags, want_dump)        \
  do {                                                        \
    parsed r_;                                                \
    parse(&r_, src);                                          \
    CHECK_INT(r_.errors, nerr);                               \
    CHECK_STR(r_.diags, want_diags);                          \
    CHECK_STR(r_.dump, want_dump);                            \
    done(&r_);                                                \
  } while (0)

/* ---- trees ---- */

TEST(parse_hello) {
  CHECK_FILE("fn main() {\n  let x = 1 + 2 * 3;\n  println(\"hi\")\n}\n",
             "(fn main () (block (let x (+ 1 (* 2 3))) (value (call println (str \"hi\")))))\n");
}

TEST(parse_or_and_levels) {
  CHECK_BODY("a || b && c || d;", "(block (|| (|| a (&& b c)) d))");
  CHECK_BODY("a && b || c && d;", "(block (|| (&& a b) (&& c d)))");
  CHECK_BODY("a && b == c;", "(block (&& a (== b c)))");
}

TEST(parse_comparisons_below_arithmetic) {
  CHECK_BODY("a + b < c * d;", "(block (< (+ a b) (* c d)))");
  CHECK_BODY("1 + 2 == 3 - 0", "(block (value (== (+ 1 2) (- 3 0))))");
  CHECK_BODY("a != b; a <= b; a >= b; a > b;", "(block (!= a b) (<= a b) (>= a b) (> a b))");
}

TEST(parse_additive_is_left_associative) {
  CHECK_BODY("1 - 2 - 3;", "(block (- (- 1 2) 3))");
  CHECK_BODY("a - b + c;", "(block (+ (- a b) c))");
  CHECK_BODY("a + b * c - d;", "(block (- (+ a (* b c)) d))");
}

TEST(parse_multiplicative_is_left_associative) {
  CHECK_BODY("8 / 4 / 2 % 3;", "(block (% (/ (/ 8 4) 2) 3))");
  CHECK_BODY("a * b / c;", "(block (/ (* a b) c))");
}

TEST(parse_as_binds_tightest_of_binaries) {
  CHECK_BODY("x as i64 as f32;", "(block (as (as x i64) f32))");
  CHECK_BODY("a * b as f32;", "(block (* a (as b f32)))");
  CHECK_BODY("-a as f32;", "(block (as (- a) f32))");
  CHECK_BODY("t as Tensor<f64, 2>;", "(block (as t Tensor<f64,2>))");
}

TEST(parse_unary) {
  CHECK_BODY("-x * y;", "(block (* (- x) y))");
  CHECK_BODY("!a && b;", "(block (&& (! a) b))");
  CHECK_BODY("- - x; !f(x); -t.sum();", "(block (- (- x)) (! (call f x)) (- (method t sum)))");
  CHECK_BODY("g(&mut v);", "(block (call g (&mut v)))");
}

TEST(parse_ranges_bind_loosest) {
  CHECK_BODY("a..b; ..b; a..;", "(block (.. a b) (.. _ b) (.. a _))");
  CHECK_BODY("0..n + 1;", "(block (.. 0 (+ n 1)))");
  CHECK_BODY("0..n == x;", "(block (.. 0 (== n x)))");
  CHECK_BODY("a || b..c", "(block (value (.. (|| a b) c)))");
}

TEST(parse_index_and_slices) {
  CHECK_BODY("t[i, j];", "(block (index t i j))");
  CHECK_BODY("t[..];", "(block (index t (.. _ _)))");
  CHECK_BODY("t[a + 1..b * 2, ..];", "(block (index t (.. (+ a 1) (* b 2)) (.. _ _)))");
  CHECK_BODY("t[0][1..];", "(block (index (index t 0) (.. 1 _)))");
}

TEST(parse_postfix_chains) {
  CHECK_BODY("a.b(c)[i, 1..n].d;", "(block (. (index (method a b c) i (.. 1 n)) d))");
  CHECK_BODY("f()(1);", "(block (call (call f) 1))");
  CHECK_BODY("x.y.z(1, 2,).w;", "(block (. (method (. x y) z 1 2) w))");
}

TEST(parse_paths) {
  CHECK_BODY("Tensor::randn([2, 3]).sum(1).item();",
             "(block (method (method (call Tensor::randn (array 2 3)) sum 1) item))");
  CHECK_BODY("P::new(x)", "(block (value (call P::new x)))");
  CHECK_BODY("a::b::c;", "(block a::b::c)");
}

TEST(parse_nested_arrays) {
  CHECK_BODY("[[[1], [2]], [[3], [4]]];", "(block (array (array (array 1) (array 2)) (array (array 3) (array 4))))");
  CHECK_BODY("[]; [1.5, -2,];", "(block (array) (array 1.5 (- 2)))");
  CHECK_BODY("Tensor::zeros([n, 3])", "(block (value (call Tensor::zeros (array n 3))))");
}

TEST(parse_struct_literals) {
  CHECK_BODY("let p = P { x: 1.0, y };", "(block (let p (struct-lit P (x 1.0) (y y))))");
  CHECK_BODY("let e = P {};", "(block (let e (struct-lit P)))");
  CHECK_BODY("f(P { x: a + 1, }).x", "(block (value (. (call f (struct-lit P (x (+ a 1)))) x)))");
}

/* `if c {`: the brace opens the body, never a struct literal (the Rust rule) */
TEST(parse_no_struct_literal_in_conditions) {
  CHECK_BODY("if x { y }", "(block (value (if x (block (value y)))))");
  CHECK_BODY("if a == b { c }", "(block (value (if (== a b) (block (value c)))))");
  CHECK_BODY("while i < n { i += 1; }", "(block (while (< i n) (block (+= i 1))))");
  CHECK_BODY("for p in ps { p }", "(block (for p ps (block (value p))))");
  CHECK_BODY("for i in 0.. { }", "(block (for i (.. 0 _) (block)))");
  /* in parentheses or brackets it is a struct literal again */
  CHECK_BODY("while (P { x }).x { }", "(block (while (. (struct-lit P (x x)) x) (block)))");
  CHECK_BODY("if f(P { x: 1 }) { }", "(block (value (if (call f (struct-lit P (x 1))) (block))))");
}

TEST(parse_else_if_chains) {
  CHECK_BODY("if a { 1 } else if b { 2 } else if c { 3 } else { 4 }",
             "(block (value (if a (block (value 1)) (if b (block (value 2)) (if c (block (value 3)) "
             "(block (value 4)))))))");
  CHECK_BODY("let w = if c { 1 } else { 2 };", "(block (let w (if c (block (value 1)) (block (value 2)))))");
}

TEST(parse_blocks_with_values) {
  CHECK_BODY("let v = { let a = 1; a + 1 }; { 3 }",
             "(block (let v (block (let a 1) (value (+ a 1)))) (value (block (value 3))))");
  CHECK_BODY("{ }; ;; x", "(block (block) (value x))");
  CHECK_BODY("let x = 1;", "(block (let x 1))");
}

/* an if or a block at the start of a statement ends it: no ';' needed */
TEST(parse_if_statement_needs_no_semicolon) {
  CHECK_BODY("if c { f(); } x = 1; { y } z",
             "(block (if c (block (call f))) (= x 1) (block (value y)) (value z))");
  CHECK_BODY("if c { 1 } else { 2 }; 3", "(block (if c (block (value 1)) (block (value 2))) (value 3))");
}

TEST(parse_let_forms) {
  CHECK_BODY("let x = 1; let mut y = 2; let z: f32 = 3.0; let mut t: Tensor<f32, 2> = a; let u: i64;",
             "(block (let x 1) (let mut y 2) (let z : f32 3.0) (let mut t : Tensor<f32,2> a) (let u : i64))");
  CHECK_BODY("let t: Tensor<bool> = m; let s: String = q;", "(block (let t : Tensor<bool> m) (let s : String q))");
}

TEST(parse_assignments) {
  CHECK_BODY("x = 1; x += 2; x -= 3; x *= 4; x /= 5; x %= 6;",
             "(block (= x 1) (+= x 2) (-= x 3) (*= x 4) (/= x 5) (%= x 6))");
  CHECK_BODY("s.f = 1; self.w[0] -= 1; t[i, j] = t[j, i] * 2;",
             "(block (= (. s f) 1) (-= (index (. self w) 0) 1) (= (index t i j) (* (index t j i) 2)))");
  CHECK_BODY("t[1..3] = z;", "(block (= (index t (.. 1 3)) z))");
}

TEST(parse_loops) {
  CHECK_BODY("for i in 0..n { s += i; }", "(block (for i (.. 0 n) (block (+= s i))))");
  CHECK_BODY("for i in range(0, n) { }", "(block (for i (call range 0 n) (block)))");
  CHECK_BODY("for row in t.transpose(0, 1) { }", "(block (for row (method t transpose 0 1) (block)))");
  CHECK_BODY("while a < b && c || d { continue; }", "(block (while (|| (&& (< a b) c) d) (block (continue))))");
  CHECK_BODY("loop { if done { break; } }", "(block (value (loop (block (value (if done (block (break))))))))"); /* a block's last loop is its value */
}

TEST(parse_jumps) {
  CHECK_BODY("break; continue; return; return x + 1;", "(block (break) (continue) (return) (return (+ x 1)))");
  CHECK_BODY("return x", "(block (return x))");
  CHECK_BODY("loop { return }", "(block (value (loop (block (return)))))");
  CHECK_BODY("loop { break } while c { continue }", "(block (loop (block (break))) (while c (block (continue))))");
}

TEST(parse_literals) {
  CHECK_BODY("1; 0x1F; 2.5e-3; 1e3; 0.5; 2.0;", "(block 1 31 0.0025 1e+03 0.5 2.0)");
  CHECK_BODY("\"a\\\"b\\n\"; 'x'; '\\n'; '\\u{3bb}'; true; false; self;",
             "(block (str \"a\\\"b\\n\") (char 'x') (char '\\u{a}') (char '\\u{3bb}') true false self)");
}

TEST(parse_functions_with_params) {
  CHECK_FILE("fn add(x: i64, mut y: f32, z: &mut Tensor<f32, 1>,) -> f64 { x }\nfn main() { }\n",
             "(fn add ((x i64) (mut y f32) (z &mut Tensor<f32,1>)) -> f64 (block (value x)))\n"
             "(fn main () (block))\n");
  CHECK_FILE("fn p() -> Point { Point { x: 1.0 } }", "(fn p () -> Point (block (value (struct-lit Point (x 1.0)))))\n");
}

TEST(parse_structs_and_impls) {
  CHECK_FILE("struct P { x: f32, y: Tensor<f32, 2> }\n"
             "struct E {}\n"
             "impl P {\n"
             "  fn new(x: f32) -> P { P { x, y: Tensor::zeros([1, 1]) } }\n"
             "  fn scale(&mut self, k: f32) { self.x *= k; }\n"
             "  fn get(self) -> f32 { self.x }\n"
             "  fn peek(&self) -> f32 { self.x }\n"
             "}\n",
             "(struct P (x f32) (y Tensor<f32,2>))\n"
             "(struct E)\n"
             "(impl P (fn new ((x f32)) -> P (block (value (struct-lit P (x x) (y (call Tensor::zeros (array 1 1)))))))"
             " (fn scale (&mut self (k f32)) (block (*= (. self x) k)))"
             " (fn get (self) -> f32 (block (value (. self x))))"
             " (fn peek (&self) -> f32 (block (value (. self x)))))\n");
}

TEST(parse_empty_and_comments) {
  CHECK_FILE("", "");
  CHECK_FILE("// nothing\n/* here */", "");
}

/* ---- tensor comprehensions (§7) ---- */

TEST(parse_comprehension_matmul) {
  CHECK_BODY("[i, j | k <- 0..p { a[i, k] * b[k, j] }]",
             "(block (value (compr (i j) (<- k (.. 0 p)) (block (value (* (index a i k) (index b k j)))))))");
  parsed r;
  parse(&r, "fn f() {\n  let c = [i, j | k <- 0..p { a[i, k] * b[k, j] }];\n}\n");
  CHECK_INT(r.errors, 0);
  const tl_node *c = r.prog->items->fn->body->stmts->rhs;
  CHECK(c->kind == TL_N_COMPR && c->line == 2 && c->col == 11);
  CHECK(c->args->kind == TL_N_IDENT && !strcmp(c->args->name, "i") && c->args->col == 12);
  CHECK(c->args->next->kind == TL_N_IDENT && !strcmp(c->args->next->name, "j") && !c->args->next->next);
  const tl_node *g = c->stmts;
  CHECK(g->kind == TL_N_GEN && !strcmp(g->name, "k") && g->line == 2 && g->col == 19 && !g->next);
  CHECK(g->lhs->kind == TL_N_RANGE && g->lhs->lhs->kind == TL_N_INT && g->lhs->rhs->kind == TL_N_IDENT);
  CHECK(c->body && c->body->kind == TL_N_BLOCK && c->body->value && !c->body->stmts);
  done(&r);
}

/* a generator is `name <- a..b`; any other clause is a filter */
TEST(parse_comprehension_generators_and_filters) {
  CHECK_BODY("let t = [i, j | i <- 0..n, j <- 0..m, i != j, x[i] > 0.5 && ok];",
             "(block (let t (compr (i j) (<- i (.. 0 n)) (<- j (.. 0 m)) (!= i j) (&& (> (index x i) 0.5) ok))))");
  CHECK_BODY("[i | i <- 1..n + 1, j <- (0..t.dim(0)), k <- lo(a)..hi { k }];",
             "(block (compr (i) (<- i (.. 1 (+ n 1))) (<- j (.. 0 (method t dim 0))) (<- k (.. (call lo a) hi)) "
             "(block (value k))))");
  /* clauses take no struct literal, so `ok {` and `hi {` open the body (in parentheses
   * it is a struct literal again) */
  CHECK_BODY("[i | i <- 0..n, ok { 1 }];", "(block (compr (i) (<- i (.. 0 n)) ok (block (value 1))))");
  CHECK_BODY("[i | i <- 0..n, (P { x: i }).x > 0];",
             "(block (compr (i) (<- i (.. 0 n)) (> (. (struct-lit P (x i)) x) 0)))");
}

/* without a body: `[i | ...]` is the index, several axes a trailing coordinate axis;
 * trailing commas as in arrays */
TEST(parse_comprehension_without_body) {
  CHECK_BODY("[i | i <- 0..n]", "(block (value (compr (i) (<- i (.. 0 n)))))");
  CHECK_BODY("let g = [i, j, | i <- 0..3, j <- 0..4, i < j,];",
             "(block (let g (compr (i j) (<- i (.. 0 3)) (<- j (.. 0 4)) (< i j))))");
}

/* no output axes: a full reduction to a 0-d tensor */
TEST(parse_comprehension_zero_axes) {
  CHECK_BODY("[ | i <- 0..n { x[i] }]", "(block (value (compr () (<- i (.. 0 n)) (block (value (index x i))))))");
  CHECK_BODY("let s = [| i <- 0..n, j <- 0..m { a[i, j] }].item();",
             "(block (let s (method (compr () (<- i (.. 0 n)) (<- j (.. 0 m)) (block (value (index a i j)))) item)))");
}

/* no clauses: the ranges come from the tensors the body indexes (the checker's job) */
TEST(parse_comprehension_body_only) {
  CHECK_BODY("[i | { a[i] * 2 }]", "(block (value (compr (i) (block (value (* (index a i) 2))))))");
  CHECK_BODY("[i, j | { a[i, j] + b[j] }].sum()",
             "(block (value (method (compr (i j) (block (value (+ (index a i j) (index b j))))) sum)))");
}

TEST(parse_comprehension_body_with_let_and_if) {
  CHECK_BODY("let r = [i | i <- 0..n {\n"
             "  let v = x[i] * w;\n"
             "  let mut y = v;\n"
             "  if v > 0.0 { y = v * 2.0; }\n"
             "  if y < 1.0 { y } else { 1.0 }\n"
             "}];",
             "(block (let r (compr (i) (<- i (.. 0 n)) (block (let v (* (index x i) w)) (let mut y v) "
             "(if (> v 0.0) (block (= y (* v 2.0)))) (value (if (< y 1.0) (block (value y)) (block (value 1.0))))))))");
}

TEST(parse_comprehension_nested) {
  CHECK_BODY("[i | i <- 0..n { let s = [ | j <- 0..m { a[i, j] }]; s.item() * [k | k <- 0..i].sum() }]",
             "(block (value (compr (i) (<- i (.. 0 n)) (block (let s (compr () (<- j (.. 0 m)) "
             "(block (value (index a i j))))) (value (* (method s item) "
             "(method (compr (k) (<- k (.. 0 i))) sum)))))))");
  /* in a clause and as an array element */
  CHECK_BODY("[[i | i <- 0..2], [i | i <- 0..n, [j | j <- 0..i].sum() > 1]];",
             "(block (array (compr (i) (<- i (.. 0 2))) (compr (i) (<- i (.. 0 n)) "
             "(> (method (compr (j) (<- j (.. 0 i))) sum) 1))))");
}

/* arrays are as they were; `<` then a negative needs the space */
TEST(parse_arrays_and_less_than_beside_comprehensions) {
  CHECK_BODY("[]; [a]; [a, b,]; [a || b]; [[]];", "(block (array) (array a) (array a b) (array (|| a b)) (array (array)))");
  CHECK_BODY("a < -1 && b <= -x", "(block (value (&& (< a (- 1)) (<= b (- x)))))");
}

/* nodes keep their positions, for later errors */
TEST(parse_node_positions) {
  parsed r;
  parse(&r, "fn main() {\n  let x = a +\n    b;\n}\n");
  CHECK_INT(r.errors, 0);
  const tl_ast_item *it = r.prog->items;
  CHECK(it && it->kind == TL_ITEM_FN && !strcmp(it->name, "main"));
  const tl_node *let = it->fn->body->stmts;
  CHECK(let->kind == TL_N_LET && let->line == 2 && let->col == 3);
  CHECK(let->rhs->kind == TL_N_BINARY && let->rhs->op == TL_TOK_PLUS && let->rhs->line == 2 && let->rhs->col == 13);
  CHECK(let->rhs->rhs->line == 3 && let->rhs->rhs->col == 5);
  done(&r);
}

/* ---- errors ---- */

TEST(parse_error_missing_semicolon) {
  CHECK_ERRORS("fn f() {\n  x = 1\n}\n", 1,
               "t.tl:3:1: error: expected ';' after the expression, found '}'\n"
               "}\n"
               "^\n",
               "(fn f () (block (error)))\n");
}

TEST(parse_error_expected_expression) {
  CHECK_ERRORS("fn f() { let x = (1 + ); }", 1,
               "t.tl:1:23: error: expected an expression, found ')'\n"
               "fn f() { let x = (1 + ); }\n"
               "                      ^\n",
               "(fn f () (block (error)))\n");
}

TEST(parse_error_reserved_word) {
  CHECK_ERRORS("fn f() { trait x { } }\npub fn g() { }\n", 2,
               "t.tl:1:10: error: `trait` is reserved\n"
               "fn f() { trait x { } }\n"
               "         ^\n"
               "t.tl:2:1: error: `pub` is reserved\n"
               "pub fn g() { }\n"
               "^\n",
               "(fn f () (block (error)))\n(fn g () (block))\n");
}

TEST(parse_error_chained_comparison) {
  CHECK_ERRORS("fn f() { let b = a < b < c; ok }", 1,
               "t.tl:1:24: error: comparison operators cannot be chained: write `a < b && b < c`\n"
               "fn f() { let b = a < b < c; ok }\n"
               "                       ^\n",
               "(fn f () (block (error) (value ok)))\n");
  CHECK_ERRORS("fn f() { a == b != c; }", 1,
               "t.tl:1:17: error: comparison operators cannot be chained: write `a < b && b < c`\n"
               "fn f() { a == b != c; }\n"
               "                ^\n",
               "(fn f () (block (error)))\n");
}

TEST(parse_error_chained_range) {
  CHECK_ERRORS("fn f() { a..b..c; }", 1,
               "t.tl:1:14: error: range operators cannot be chained\n"
               "fn f() { a..b..c; }\n"
               "             ^\n",
               "(fn f () (block (error)))\n");
}

TEST(parse_error_bad_assignment_target) {
  CHECK_ERRORS("fn f() { f(x) = 1; a + b += 2; }", 2,
               "t.tl:1:10: error: cannot assign to this expression: assign to a variable, a field `s.f` or an "
               "index `t[i]`\n"
               "fn f() { f(x) = 1; a + b += 2; }\n"
               "         ^\n"
               "t.tl:1:20: error: cannot assign to this expression: assign to a variable, a field `s.f` or an "
               "index `t[i]`\n"
               "fn f() { f(x) = 1; a + b += 2; }\n"
               "                   ^\n",
               "(fn f () (block (error) (error)))\n");
}

/* `if P { x: 1 }`: no block starts with `x:`, so this is a struct literal where Rust's
 * rule allows none; the error says so and how to write it, and the literal is parsed as
 * one, so what follows it reads as meant (no second error) */
TEST(parse_error_struct_literal_in_condition) {
  CHECK_ERRORS("fn f() { if P { x: 1 } { } }", 1,
               "t.tl:1:13: error: a struct literal cannot be written directly in an `if` condition\n"
               "fn f() { if P { x: 1 } { } }\n"
               "            ^\n"
               "  hint: wrap it in parentheses: `(P { .. })`\n",
               "(fn f () (block (value (if (struct-lit P (x 1)) (block)))))\n");
  CHECK_ERRORS("fn f() { while a == Pt { y: 2 }.y { } }", 1,
               "t.tl:1:21: error: a struct literal cannot be written directly in a `while` condition\n"
               "fn f() { while a == Pt { y: 2 }.y { } }\n"
               "                    ^\n"
               "  hint: wrap it in parentheses: `(Pt { .. })`\n",
               "(fn f () (block (while (== a (. (struct-lit Pt (y 2)) y)) (block))))\n");
}

/* end of file is just past the last text, not on the blank line after it */
TEST(parse_error_unclosed_block) {
  CHECK_ERRORS("fn f() {\n  let x = 1;\n\n  \n", 1,
               "t.tl:2:13: error: expected '}' to close the block, found end of file\n"
               "  let x = 1;\n"
               "            ^\n",
               "");
}

/* one file, many errors: each statement and item recovers on its own; `let y = 2`
 * without its ';' ends at the next line's `let`, which parses */
TEST(parse_error_many_in_one_file) {
  CHECK_ERRORS("fn main() {\n"
               "  let x = ;\n"
               "  let y = 2\n"
               "  let z = 3;\n"
               "  foo(1, 2;\n"
               "  w = [1, 2 3];\n"
               "  ok(z)\n"
               "}\n"
               "fn (x: i64) { }\n"
               "struct S { a: f32 b: f32 }\n"
               "fn g() -> i64 { if x { 1 } else { 2 } }\n",
               6,
               "t.tl:2:11: error: expected an expression, found ';'\n"
               "  let x = ;\n"
               "          ^\n"
               "t.tl:4:3: error: expected ';' after the expression, found 'let'\n"
               "  let z = 3;\n"
               "  ^\n"
               "t.tl:5:11: error: expected ',' or ')' in the arguments, found ';'\n"
               "  foo(1, 2;\n"
               "          ^\n"
               "t.tl:6:13: error: expected ',' or ']' in the array, found an integer\n"
               "  w = [1, 2 3];\n"
               "            ^\n"
               "t.tl:9:4: error: expected a function name after 'fn', found '('\n"
               "fn (x: i64) { }\n"
               "   ^\n"
               "t.tl:10:19: error: expected ',' or '}' in the fields, found identifier 'b'\n"
               "struct S { a: f32 b: f32 }\n"
               "                  ^\n",
               "(fn main () (block (error) (error) (let z 3) (error) (error) (value (call ok z))))\n"
               "(fn g () -> i64 (block (value (if x (block (value 1)) (block (value 2))))))\n");
}

TEST(parse_error_item_level_recovery) {
  CHECK_ERRORS("x = 1;\nfn main() { }\n}\nfn g() { }\n", 2,
               "t.tl:3:1: error: expected an item (fn, struct, impl, a fact or a rule), found '}'\n"
               "}\n"
               "^\n"
               "t.tl:1:1: error: a file with `fn main` cannot also have statements outside functions\n"
               "x = 1;\n"
               "^\n"
               "  hint: move them into `main` (line 2), or remove `fn main` to run them as a script\n",
               "(fn main () (block))\n(fn g () (block))\n");
}

TEST(parse_error_in_impl_recovers_at_next_method) {
  CHECK_ERRORS("impl P {\n  let y = 1;\n  fn a(self, x) { }\n  fn b() { ok }\n}\nfn main() { }\n", 2,
               "t.tl:2:3: error: expected 'fn' or '}' in the impl, found 'let'\n"
               "  let y = 1;\n"
               "  ^\n"
               "t.tl:3:15: error: expected ':' and the parameter's type, found ')'\n"
               "  fn a(self, x) { }\n"
               "              ^\n",
               "(impl P (fn b () (block (value ok))))\n(fn main () (block))\n");
}

TEST(parse_logic_items_and_queries) {
  CHECK_ERRORS("relation parent(entity, entity);\n"
               "parent(alice, bob).\n"
               "age(bob, -3).\n"
               "anc(x, y) :- parent(x, z), anc(z, y), not bad(x), !bad(y), x != y, add(x, 1, $w).\n"
               "ok(x + 1) :- n(x), x * 2 <= (x - 1) % 3.\n"
               "mod facts;\n"
               "use facts::*;\n"
               "fn main() {\n"
               "  let q = ?parent(alice, $x);\n"
               "  parent(bob, carol).\n"
               "  let n = q.len() + parent(_, $y).len();\n"
               "}\n",
               0, "",
               "(relation parent entity entity)\n"
               "(fact (parent alice bob))\n"
               "(fact (age bob -3))\n"
               "(rule (anc x y) (parent x z) (anc z y) (not bad x) (not bad y) (!= x y) (add x 1 $w))\n"
               "(rule (ok (+ x 1)) (n x) (<= (* x 2) (% (- x 1) 3)))\n"
               "(mod facts)\n"
               "(use facts)\n"
               "(fn main () (block (let q (? parent alice $x)) (fact parent bob carol) "
               "(let n (+ (method q len) (method (call parent _ $y) len)))))\n");
}

TEST(parse_logic_errors) {
  CHECK_ERRORS("parent(alice, bob)\n"
               "p(x) :- q(x); r(x).\n"
               "relation r(f32);\n"
               "use facts;\n"
               "q([1]).\n"
               "ok(a).\n"
               "fn main() {\n"
               "  let q = ?(x);\n"
               "}\n",
               5,
               "t.tl:2:1: error: expected '.' to end the fact or ':-' to start a rule's body, found identifier 'p'\n"
               "p(x) :- q(x); r(x).\n"
               "^\n"
               "t.tl:3:12: error: a relation's columns are `entity` or `i64`\n"
               "relation r(f32);\n"
               "           ^\n"
               "  hint: write `relation parent(entity, entity);` or `relation age(entity, i64);`\n"
               "t.tl:4:10: error: expected `::*` after the module name: only `use facts::*;` is supported\n"
               "use facts;\n"
               "         ^\n"
               "t.tl:5:3: error: expected a term (a name, a number, `$x` or `_`), found '['\n"
               "q([1]).\n"
               "  ^\n"
               "t.tl:8:12: error: expected a relation after `?`: `?p(a, $x)`, found '('\n"
               "  let q = ?(x);\n"
               "           ^\n",
               "(fact (ok a))\n"
               "(fn main () (block (error)))\n");
}

TEST(parse_error_types) {
  CHECK_ERRORS("fn f(t: Tensor<f8, 2>) { }\nfn g(x: i64<f32 f64>) { }\nfn h(x: Tensor<f32, n>) { }\n", 3,
               "t.tl:1:16: error: unknown dtype 'f8': expected bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 or f64\n"
               "fn f(t: Tensor<f8, 2>) { }\n"
               "               ^\n"
               "t.tl:2:17: error: expected '>' after the type arguments, found identifier 'f64'\n"
               "fn g(x: i64<f32 f64>) { }\n"
               "                ^\n"
               "t.tl:3:21: error: expected a rank (an integer), found identifier 'n'\n"
               "fn h(x: Tensor<f32, n>) { }\n"
               "                    ^\n",
               "");
}

/* Rust's `&v` and `*v` are v itself (every read borrows); `&mut v` stays a borrow */
TEST(parse_shared_borrow_and_deref_are_the_value) {
  CHECK_ERRORS("fn f() { g(&v, *w, &mut u); }", 0, "", "(fn f () (block (call g v w (&mut u))))\n");
}

/* ---- comprehension errors ---- */

TEST(parse_error_comprehension_axes_must_be_names) {
  CHECK_ERRORS("fn f() {\n  let t = [i + 1, j | k <- 0..p];\n  ok\n}\n", 1,
               "t.tl:2:12: error: a comprehension's output axes must be names\n"
               "  let t = [i + 1, j | k <- 0..p];\n"
               "           ^\n",
               "(fn f () (block (error) (value ok)))\n");
  CHECK_ERRORS("fn f() { [i, 2 | k <- 0..p]; [self | { 1 }]; [a.b | { 1 }] }", 3,
               "t.tl:1:14: error: a comprehension's output axes must be names\n"
               "fn f() { [i, 2 | k <- 0..p]; [self | { 1 }]; [a.b | { 1 }] }\n"
               "             ^\n"
               "t.tl:1:31: error: a comprehension's output axes must be names\n"
               "fn f() { [i, 2 | k <- 0..p]; [self | { 1 }]; [a.b | { 1 }] }\n"
               "                              ^\n"
               "t.tl:1:47: error: a comprehension's output axes must be names\n"
               "fn f() { [i, 2 | k <- 0..p]; [self | { 1 }]; [a.b | { 1 }] }\n"
               "                                              ^\n",
               "(fn f () (block (error) (error) (error)))\n");
}

/* the error is at the generator's range; the body after it is skipped with it */
TEST(parse_error_generator_without_range) {
  CHECK_ERRORS("fn f() { [i | i <- n]; [i | i <- 0.. { i }]; [i | i <- ..n]; [i | i <- 0..n, j <- f(x)]; ok }", 4,
               "t.tl:1:20: error: a generator needs a range `a..b`\n"
               "fn f() { [i | i <- n]; [i | i <- 0.. { i }]; [i | i <- ..n]; [i | i <- 0..n, j <- f(x)]; ok }\n"
               "                   ^\n"
               "t.tl:1:34: error: a generator needs a range `a..b`\n"
               "fn f() { [i | i <- n]; [i | i <- 0.. { i }]; [i | i <- ..n]; [i | i <- 0..n, j <- f(x)]; ok }\n"
               "                                 ^\n"
               "t.tl:1:56: error: a generator needs a range `a..b`\n"
               "fn f() { [i | i <- n]; [i | i <- 0.. { i }]; [i | i <- ..n]; [i | i <- 0..n, j <- f(x)]; ok }\n"
               "                                                       ^\n"
               "t.tl:1:83: error: a generator needs a range `a..b`\n"
               "fn f() { [i | i <- n]; [i | i <- 0.. { i }]; [i | i <- ..n]; [i | i <- 0..n, j <- f(x)]; ok }\n"
               "                                                                                  ^\n",
               "(fn f () (block (error) (error) (error) (error) (value ok)))\n");
}

TEST(parse_error_generator_variable_must_be_a_name) {
  CHECK_ERRORS("fn f() { [i | i + 1 <- 0..n]; ok }", 1,
               "t.tl:1:15: error: a generator's variable must be a name: `i <- 0..n`\n"
               "fn f() { [i | i + 1 <- 0..n]; ok }\n"
               "              ^\n",
               "(fn f () (block (error) (value ok)))\n");
}

TEST(parse_error_comprehension_missing_bracket) {
  CHECK_ERRORS("fn f() {\n  let t = [i | k <- 0..p { a[i, k] };\n  ok\n}\n", 1,
               "t.tl:2:37: error: expected ']' to close the comprehension, found ';'\n"
               "  let t = [i | k <- 0..p { a[i, k] };\n"
               "                                    ^\n",
               "(fn f () (block (error) (value ok)))\n");
  CHECK_ERRORS("fn f() {\n  let t = [i | i <- 0..n;\n  ok\n}\n", 1,
               "t.tl:2:25: error: expected ',', '{' or ']' after the comprehension's clause, found ';'\n"
               "  let t = [i | i <- 0..n;\n"
               "                        ^\n",
               "(fn f () (block (error) (value ok)))\n");
}

TEST(parse_error_comprehension_needs_clauses_or_body) {
  CHECK_ERRORS("fn f() { let t = [i | ]; ok }", 1,
               "t.tl:1:23: error: a comprehension needs clauses or a body\n"
               "fn f() { let t = [i | ]; ok }\n"
               "                      ^\n",
               "(fn f () (block (error) (value ok)))\n");
}

/* an error in a comprehension's body is reported and recovered inside the body */
TEST(parse_error_in_comprehension_body) {
  CHECK_ERRORS("fn f() { let t = [i | k <- 0..p { let = 3; a[i, k] }]; ok }", 1,
               "t.tl:1:39: error: expected a variable name after 'let', found '='\n"
               "fn f() { let t = [i | k <- 0..p { let = 3; a[i, k] }]; ok }\n"
               "                                      ^\n",
               "(fn f () (block (let t (compr (i) (<- k (.. 0 p)) (block (error) (value (index a i k))))) (value ok)))\n");
}

/* `<-` is always one token: outside a generator it is an error with a hint */
TEST(parse_error_larrow_in_expression) {
  CHECK_ERRORS("fn f() {\n  let b = a<-1;\n  if x <- y { }\n  g(a + b<-c);\n  ok\n}\n", 3,
               "t.tl:2:12: error: `<-` is only used in comprehension generators; write `< -` for less-than a "
               "negative\n"
               "  let b = a<-1;\n"
               "           ^\n"
               "t.tl:3:8: error: `<-` is only used in comprehension generators; write `< -` for less-than a "
               "negative\n"
               "  if x <- y { }\n"
               "       ^\n"
               "t.tl:4:10: error: `<-` is only used in comprehension generators; write `< -` for less-than a "
               "negative\n"
               "  g(a + b<-c);\n"
               "         ^\n",
               "(fn f () (block (error) (error) (error) (value ok)))\n");
}

/* deep nesting is an error, never a stack overflow; tokens after it still parse */
TEST(parse_error_too_deep) {
  enum { N = 5000 };
  char *src = malloc(3 * N + 64);
  strcpy(src, "fn f() { let x = ");
  for (int i = 0; i < N; i++) strcat(src, "(");
  strcat(src, "1");
  for (int i = 0; i < N; i++) strcat(src, ")");
  strcat(src, "; ok }");
  parsed r;
  parse(&r, src);
  CHECK_INT(r.errors, 1);
  CHECK_CONTAINS(r.diags, "t.tl:1:217: error: nesting is too deep (more than 200 levels)");
  CHECK_STR(r.dump, "(fn f () (block (error) (value ok)))\n");
  done(&r);
  free(src);
}

/* a chain of postfix operations (`.f`, calls, indexing) or of casts nests as deep as
 * its length in every pass after the parser, so each link counts as a level; a chain
 * of binary operators is walked in a loop everywhere and has no such bound */
TEST(parse_error_long_postfix_and_cast_chains) {
  enum { N = 300 };
  char *src = malloc(16 * N + 64);
  strcpy(src, "fn f() { let x = a");
  for (int i = 0; i < N; i++) strcat(src, ".b");
  strcat(src, "; ok }");
  parsed r;
  parse(&r, src);
  CHECK_INT(r.errors, 1);
  CHECK_CONTAINS(r.diags, "error: nesting is too deep (more than 200 levels)");
  CHECK_STR(r.dump, "(fn f () (block (error) (value ok)))\n");
  done(&r);
  strcpy(src, "fn f() { let x = a");
  for (int i = 0; i < N; i++) strcat(src, " as i64");
  strcat(src, "; ok }");
  parse(&r, src);
  CHECK_INT(r.errors, 1);
  CHECK_CONTAINS(r.diags, "error: nesting is too deep (more than 200 levels)");
  done(&r);
  strcpy(src, "fn f() { let x = a"); /* 150 links, then the depth is back where it was */
  for (int i = 0; i < 150; i++) strcat(src, ".b()");
  strcat(src, " + c");
  for (int i = 0; i < 150; i++) strcat(src, "[0]");
  strcat(src, "; }");
  parse(&r, src);
  CHECK_INT(r.errors, 0);
  done(&r);
  free(src);
}

/* `name: value` in a call's arguments is a named argument (the checker allows only
 * `requires_grad:` of the creation functions); in indexing it is not */
TEST(parse_named_arguments) {
  CHECK_BODY("Tensor::randn([2, 2], requires_grad: true);",
             "(block (call Tensor::randn (array 2 2) (requires_grad true)))");
  CHECK_BODY("x.m(a, b: c + 1);", "(block (method x m a (b (+ c 1))))");
  CHECK_ERRORS("fn f() { t[i: 1]; }", 1,
               "t.tl:1:13: error: expected ',' or ']' in the index, found ':'\n"
               "fn f() { t[i: 1]; }\n"
               "            ^\n",
               "(fn f () (block (error)))\n");
}

/* garbage never loops or crashes: every recovery moves on */
TEST(parse_error_garbage_terminates) {
  const char *srcs[] = {"}}}}", "fn", "fn f(", "fn f() { ) ] } }", "impl", "impl P { fn", "struct S { a: }",
                        "fn f() { if }", "fn f() { let }", "fn f() { for in {} }", "{ { {", ") fn f() {} (",
                        "fn f() { [ | ", "fn f() { [i | i <- ", "fn f() { [i | {", "fn f() { [|] }",
                        "fn f() { [i | i <- 0..n { ] } ] }", "fn f() { [i, | <- ] ; } ]", "fn f() { <- [ <- | } }"};
  for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
    parsed r;
    parse(&r, srcs[i]);
    CHECK(r.errors > 0);
    CHECK(r.dump != NULL);
    done(&r);
  }
}

/* a file without `fn main`: statements outside functions become main's body, in order;
 * `name(..)` is a statement when `;`, a method, an operator or `[` follows, else a
 * fact or a rule (test_parse: statements vs items at the top level) */
TEST(parse_script_statements) {
  CHECK_FILE("p(a).\n"
             "let x = 1;\n"
             "q(y) :- p(y).\n"
             "println(x);\n"
             "fn f() -> i64 { 2 }\n"
             "f() + x;\n"
             "f().max(1);\n"
             "for i in 0..2 { x; }\n",
             "(fact (p a))\n"
             "(rule (q y) (p y))\n"
             "(fn f () -> i64 (block (value 2)))\n"
             "(fn main () (block (let x 1) (call println x) (+ (call f) x) (method (call f) max 1) "
             "(for i (.. 0 2) (block x))))\n");
}

TEST(parse_script_and_main_is_an_error) {
  CHECK_ERRORS("fn main() { }\nprint(2);\n", 1,
               "t.tl:2:1: error: a file with `fn main` cannot also have statements outside functions\n"
               "print(2);\n"
               "^\n"
               "  hint: move them into `main` (line 1), or remove `fn main` to run them as a script\n",
               "(fn main () (block))\n");
}

/* beside `fn main`, a typed immutable top-level `let` is a `static` item (after the others) */
TEST(parse_top_level_let_is_static) {
  CHECK_FILE("let Y: i64 = 2;\nfn main() { }\n", "(fn main () (block))\n(static Y i64 2)\n");
}

TEST(parse_tuples) {
  CHECK_BODY("let t = (1, (2.5,), ());", "(block (let t (tuple 1 (tuple 2.5) (tuple))))");
  CHECK_BODY("(a)", "(block (value a))");
  CHECK_BODY("t.0.1.2", "(block (value (. (. (. t 0) 1) 2)))"); /* `.0.1` lexes as a float */
  CHECK_BODY("t.1.x", "(block (value (. (. t 1) x)))");
  CHECK_BODY("let ((a, _), mut b) = t;", "(block (let (tuple (tuple a _) mut b) t))");
  CHECK_BODY("let (x) = 1;", "(block (let x 1))");
  CHECK_FILE("fn f(p: (i64, (Tensor<f32>,)), q: ()) -> (f32, i64) { p }\n",
             "(fn f ((p (i64, (Tensor<f32>,))) (q ())) -> (f32, i64) (block (value p)))\n");
}

TEST(parse_option_and_result) {
  CHECK_FILE("fn f(x: Option<Option<i64>>, r: Result<(i64, f32), String>) -> Option<Tensor<f32, 1>> { x }\n",
             "(fn f ((x Option<Option<i64>>) (r Result<(i64, f32), String>)) -> Option<Tensor<f32,1>> (block (value x)))\n");
  CHECK_BODY("let v = f(x)?.y?;", "(block (let v (? (. (? (call f x)) y))))");
  CHECK_BODY("match o { Some(x) => x, None => 0 }", "(block (value (match o (=> (call Some x) x) (=> None 0))))");
}

TEST(parse_enums_and_match) {
  CHECK_FILE("enum E { A, B(i64, (f32, bool)), C { x: f32 }, }\n",
             "(enum E (A) (B i64 (f32, bool)) (C x: f32))\n");
  CHECK_BODY("match e { E::A => 1, E::B(x, _) if x > 0 => { x } E::C { x, .. } | E::D(..) => 2, }",
             "(block (value (match e (=> E::A 1) (=> (call E::B x _) (if (> x 0)) (block (value x)))"
             " (=> (| (struct-lit E::C (x x) ..) (call E::D ..)) 2))))");
  CHECK_BODY("match n { -1 => a, 1..=5 | 'a'..='z' => b, (0, mut y) => c, P { x: 0, y } => d }",
             "(block (value (match n (=> (- 1) a) (=> (| (..= 1 5) (..= (char 'a') (char 'z'))) b)"
             " (=> (tuple 0 mut y) c) (=> (struct-lit P (x 0) (y y)) d))))");
  CHECK_BODY("loop { match x { 0 => break, _ => continue } }",
             "(block (value (loop (block (value (match x (=> 0 (block (break))) (=> _ (block (continue)))))))))");
  CHECK_BODY("if let E::B(v) = e { v } else { 0 }",
             "(block (value (if-let e (=> (call E::B v) (block (value v))) (=> _ (block (value 0))))))");
  CHECK_BODY("let c = E::C { x: 1.0 };", "(block (let c (struct-lit E::C (x 1.0))))");
  CHECK_BODY("while let E::B(v) | E::C { v, .. } = e { f(v); }",
             "(block (loop (block (while-let e (=> (| (call E::B v) (struct-lit E::C (v v) ..)) (block (call f v)))"
             " (=> _ (block (break)))))))");
}

/* "did you mean": the closest candidate within max(len, 3) / 3 edits (a swap of two
 * neighbours is one), a case-only difference first, none that shares nothing */
static const char *suggest(const char *name, const char *const *cands) {
  tl_suggest g;
  tl_suggest_init(&g, name);
  for (; *cands; cands++) tl_suggest_add(&g, *cands);
  return g.best ? g.best : "(none)";
}

TEST(diag_suggest_closest_name) {
  CHECK_STR(suggest("zero", (const char *[]){"ones", "zeros", "eye", NULL}), "zeros");
  CHECK_STR(suggest("prnitln", (const char *[]){"print", "println", NULL}), "println"); /* one swap */
  CHECK_STR(suggest("abcdef", (const char *[]){"abcxyf", NULL}), "abcxyf");          /* 2 of 6: in */
  CHECK_STR(suggest("abcdef", (const char *[]){"axcxyf", NULL}), "(none)");          /* 3 of 6: out */
  CHECK_STR(suggest("ab", (const char *[]){"abc", NULL}), "abc");                    /* at least 1 */
  CHECK_STR(suggest("z", (const char *[]){"x", "y", NULL}), "(none)");               /* shares nothing */
  CHECK_STR(suggest("tensor", (const char *[]){"tensors", "Tensor", NULL}), "Tensor"); /* case first */
  CHECK_STR(suggest("sum", (const char *[]){"sum", NULL}), "(none)");                /* not itself */
  CHECK_STR(suggest("abcdef", (const char *[]){"abxxef", "abcdex", NULL}), "abcdex"); /* closest wins */
}

/* `const` and `static` items: words, not keywords (a variable may be called `static`),
 * so an item only when a name (or `mut`) follows; a script's statements around them */
TEST(parse_const_items) {
  CHECK_FILE("const N: i64 = 4 * 2;\nstatic mut S: f32 = -1.5;\n",
             "(const N i64 (* 4 2))\n(static mut S f32 (- 1.5))\n");
  CHECK_FILE("const N: i64 = 4;\nlet static = N;\n",
             "(const N i64 4)\n(fn main () (block (let static N)))\n");
}
