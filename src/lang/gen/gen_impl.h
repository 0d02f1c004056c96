/* gen_impl.h — what the code generator's files (gen.c, gen_builtin.c, gen_compr.c)
 * share: the emitter state and the value model.
 *
 * Every expression is emitted as statements that compute it, plus a C expression
 * for its value (a `cv`). A String, Tensor or struct value is either borrowed (a
 * variable or a field: no reference of its own) or an owned temporary holding one
 * reference; owned temporaries are released at the end of their statement unless a
 * consumer takes them (moves). */
#ifndef TL_LANG_GEN_IMPL_H
#define TL_LANG_GEN_IMPL_H

#include "core/strbuf.h"
#include "lang/gen/gen.h"
#include "lang/rt/rt_ops.h"
#include "lang/rt/rt_vec.h"
#include "lang/check/types.h"

#define GEN_MAX_TEMPS 4096
#define GEN_MAX_LOCALS 4096
#define GEN_MAX_LOOPS 64

typedef struct {
  const char *c; /* a C expression */
  tl_ty *ty;
  int temp;      /* index in the temp stack when an owned temporary, else -1 */
  tl_var *var;   /* a plain read of this variable */
  const tl_node *node;
} cv;

typedef struct {
  int locals_mark; /* locals declared inside the loop start here */
  const tl_node *node;
  const char *result; /* a `loop` with `break value`: the C variable that takes it */
  int temps_mark;     /* the temporaries pending inside it (an inner for loop's source) from here */
  int stmt_mark;      /* ... and from here with its own (its source), which a break leaves too */
} gen_loop;

typedef struct {
  const tl_sema *S;
  tl_arena *arena;
  const char *file;
  bool lines;          /* emit #line directives */
  tl_strbuf *out;      /* the function being written */
  int indent;
  int ntmp;            /* names t1, t2, ... in this function */
  struct {
    const char *name;
    tl_ty *ty;
    bool taken;
  } temps[GEN_MAX_TEMPS];
  int ntemps;
  tl_var *locals[GEN_MAX_LOCALS]; /* owned locals in scope, innermost last */
  int nlocals;
  gen_loop loops[GEN_MAX_LOOPS];
  const char *loop_result; /* the result variable of the `loop` about to be made */
  const tl_node *loop_stmt; /* the loop statement being made, and the temporaries' mark */
  int loop_stmt_mark;       /* where it began (its source comes after) */
  int stmt_temps_mark;     /* the temporaries of the statement being made start here */
  int nloops;
  const tl_fninfo *fn;
  const tl_node *stmt; /* the statement being generated: a move checks it for other reads */
  /* comprehension: index variables -> their axis in the iteration space */
  int compr_rank;
  bool in_compr;
  bool failed;
  char error[256];
  const char *main_file; /* the program's file; file is the function's own (modules) */
  bool own_file;         /* the function sets R->file to its file: restored on return */
  tl_strbuf *side;       /* closures' environments and functions, and the wrappers of named
                            functions used as values: placed before every function */
  int nclosures;
  struct gen_wrapped *wrapped; /* the named functions that have a wrapper (gen_closure.c) */
  int nlost;                   /* tlrt_grad_lost's places so far (gen_grad.c) */
  const char *check;           /* generating a number checked by tlrt_grad_check: the
                                  arguments `&said, why` of its reads' checks, else NULL */
} gen;

/* a built piece of C (tl_strbuf_take), caller frees; NULL when an append ran out of
 * memory, which fails the whole program (g->failed) so no C with a hole is compiled */
char *tl_gen_take_text(gen *g, tl_strbuf *b);

const char *tl_gen_fmt(gen *g, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_gen_emit(gen *g, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_gen_line(gen *g, const tl_node *n);
const char *tl_gen_ctype(gen *g, const tl_ty *t);
const char *tl_gen_ret_ctype(gen *g, const tl_ty *t); /* a function's result type: () is void */
const char *tl_gen_new_temp(gen *g, const tl_ty *t, const char *init); /* declares, registers if refcounted */
cv tl_gen_temp_value(gen *g, const tl_ty *t, const char *init);
/* gen_builtin.c: a shape argument (sema's tl_sema_check_shape) as C's `ndim, dims`;
 * tensor_ty, any tensor type, types the temporary a Vec<i64> shape is read into */
const char *tl_gen_shape_arg(gen *g, tl_node *a, const tl_ty *tensor_ty);
cv tl_gen_expr(gen *g, tl_node *n);
cv tl_gen_number_read(gen *g, const char *get, tl_ty *to, const tl_ty *t); /* a tensor element's double as `to` */
/* scalar numbers (gen.c): float arithmetic's result r in type t (f16 and bf16 round it
 * to their format); float x as integer type to, saturating, NaN 0 (Rust's `as`) */
const char *tl_gen_float_result(gen *g, const tl_ty *t, const char *r);
const char *tl_gen_f2i(gen *g, const tl_ty *to, const char *x);
cv tl_gen_flex_read(gen *g, tl_node *n, const char **dtype); /* gen.c: n->flex_read */
cv tl_gen_scalar(const char *c, tl_ty *t);
const char *tl_gen_take(gen *g, cv v); /* a C expression holding a reference the consumer owns */
const char *tl_gen_place(gen *g, tl_node *n); /* a place's C lvalue, each struct on its path made unique */
void tl_gen_release_temps(gen *g, int mark);
const char *tl_gen_release_call(gen *g, const tl_ty *t, const char *c);
void tl_gen_fail(gen *g, const tl_node *n, const char *msg);
const char *tl_gen_retain_expr(gen *g, const tl_ty *t, const char *c);
const char *tl_gen_var_ref(gen *g, const tl_var *v); /* a variable's C lvalue */
bool tl_gen_moves(gen *g, cv v); /* would tl_gen_take move this variable (its last use)? */
void tl_gen_add_local(gen *g, tl_var *v, const tl_node *at); /* an owned local, dropped at its scope's end */

cv tl_gen_adopt_temp(gen *g, const char *name, tl_ty *t); /* a C variable holding a reference: an owned temporary */
void tl_gen_scope_end(gen *g, int mark); /* the locals from mark on: dropped, out of scope */
/* gen_match.c: enum values, their printing, `match` and `if let` */
cv tl_gen_variant(gen *g, tl_node *n);
cv tl_gen_match(gen *g, tl_node *n);
void tl_gen_enum_fmt(gen *g, const tl_struct_info *st, tl_strbuf *out);

/* the way out of the function on this path: pending temporaries and owned locals
 * dropped, val (NULL: none) returned */
void tl_gen_return_value(gen *g, const char *val);
/* gen_option.c: Option's and Result's methods, postfix `?` and printing */
cv tl_gen_option_method(gen *g, tl_node *n);
cv tl_gen_option_try(gen *g, tl_node *n);
void tl_gen_option_fmt(gen *g, const tl_struct_info *st, tl_strbuf *out);

/* gen_tuple.c: tuple values, `let (a, b) = t;`, a tuple struct's printing and `==` */
cv tl_gen_tuple(gen *g, tl_node *n);
void tl_gen_tuple_let(gen *g, tl_node *n);
void tl_gen_tuple_declare(const tl_struct_info *st, tl_strbuf *out);
void tl_gen_tuple_functions(gen *g, const tl_struct_info *st, tl_strbuf *out);
/* the tensors of a loop-carried value (a tensor, or those in a tuple's or struct's
 * fields) computed now, so a lazy graph never grows from turn to turn */
void tl_gen_realize_value(gen *g, const tl_ty *t, const char *c, const tl_node *loop, int depth);

/* the statements of f's body, its drops and its return (after its signature and `{`) */
void tl_gen_function_body(gen *g, const tl_fninfo *f);
/* gen_closure.c: closures (an environment object and a C function each), named
 * functions as values (a wrapper, in an object without environment) and calls of fn
 * values. A value of fn type is a `tlrt_fnobj *` (rt.h), refcounted as a struct is. */
cv tl_gen_closure(gen *g, tl_node *n);
cv tl_gen_fn_value(gen *g, tl_node *n);
cv tl_gen_fnval_call(gen *g, tl_node *n);
/* For library code that calls a function value (Option::map, Vec's map/filter/fold):
 * the C expression of a call of fn_c (a C expression of a `tlrt_fnobj *`, evaluated
 * twice: a name or a field) of type fty with the C arguments args[0..nargs) (borrowed:
 * the callee never releases them). Its value, when fty's result is refcounted, is a
 * reference the caller owns. */
const char *tl_gen_closure_call_expr(gen *g, const char *fn_c, const char *const *args, int nargs, const tl_ty *fty);
/* gen_vec.c: Vec<T> and HashMap<K, V> (layout and helpers in rt_vec.h): a B_VEC call,
 * vec![..], v[i] / m[k] reads and v[i] places, `for x in v`, ==, the C of the types */
const char *tl_gen_vec_ctype(const tl_ty *t);
cv tl_gen_vec_call(gen *g, tl_node *n);
cv tl_gen_vec_lit(gen *g, tl_node *n);
cv tl_gen_vec_index(gen *g, tl_node *n);
const char *tl_gen_vec_place(gen *g, tl_node *n);
void tl_gen_vec_for(gen *g, tl_node *n);
/* the C pushing val (an element of type et, owned) onto the Vec vec, its capacity checked */
void tl_gen_vec_push(gen *g, const tl_ty *et, const char *vec, const tl_node *at, const char *val);
cv tl_gen_vec_eq(gen *g, tl_node *n, cv a, cv b);
void tl_gen_vec_declare(gen *g, const tl_struct_info *st, tl_strbuf *out);
void tl_gen_vec_functions(gen *g, const tl_struct_info *st, tl_strbuf *out);
/* gen_iter.c: iterator chains (one loop each, where consumed), sort_by, cmp, Ordering */
cv tl_gen_iter_call(gen *g, tl_node *n);
void tl_gen_iter_for(gen *g, tl_node *n);
/* one turn of a loop (gen.c); owned: a local of the turn released at its end, or NULL */
void tl_gen_loop_body(gen *g, tl_node *loop, tl_node *body, tl_var *owned);

/* gen_builtin.c */
cv tl_gen_builtin_call(gen *g, tl_node *n);
cv tl_gen_io_call(gen *g, tl_node *n); /* gen_io.c: B_IO_FIRST..B_IO_LAST */
cv tl_gen_nn_call(gen *g, tl_node *n); /* gen_nn.c: B_NN_FIRST..B_NN_LAST */
/* dbg: a C bool expression, "0" for `{}`, "1" for `{:?}`, "dbg" inside a __fmt
 * function (each takes it: a struct's strings are quoted under `{:?}` only) */
void tl_gen_fmt_value(gen *g, cv v, int prec, const tl_node *at, const char *dbg);
cv tl_gen_array(gen *g, tl_node *n);
int tl_gen_unop_code(tl_builtin id); /* the rt_ops TLRT_UNOP_* of an elementwise builtin */
int tl_gen_tensor_op(tl_tok_kind op); /* the rt_ops TLRT_OP_* of an operator token */
/* gen_logic.c: Datalog; the program's knowledge base as static data */
cv tl_gen_logic(gen *g, tl_node *n);
struct lf_program;
void tl_gen_logic_program(const struct lf_program *P, tl_strbuf *out);
/* gen_sys.c: a B_SYS call (assert, System::, File::, String methods...) */
cv tl_gen_sys_call(gen *g, tl_node *n);
/* gen_dist.c: a B_DIST call (Dist::rank ... Dist::sync_grads) */
cv tl_gen_dist_call(gen *g, tl_node *n);
cv tl_gen_ml_call(gen *g, tl_node *n); /* gen_ml.c: B_ML */
cv tl_gen_ops_call(gen *g, tl_node *n); /* gen_ops.c: B_OPS */
cv tl_gen_str_parse(gen *g, tl_node *n); /* s.parse::<T>() */
/* gen_compr.c */
cv tl_gen_compr(gen *g, tl_node *n);
cv tl_gen_compr_expr(gen *g, tl_node *n); /* an expression of a comprehension body: a tensor */
cv tl_gen_binary_values(gen *g, tl_node *n, tl_tok_kind op, cv a, cv b);
/* t[...] as a tensor (a view when t requires grad): the C of the call (gen.c) */
const char *tl_gen_index_tensor(gen *g, tl_node *n, const char *t);
/* gen_grad.c: numbers read from tensor elements that keep their gradient (sema_grad.c) */
bool tl_gen_grad_elem(const tl_node *n);             /* node->grad TL_GRAD_ELEM, a float */
cv tl_gen_as_tensor(gen *g, tl_node *n);             /* an ELEM number as a 0-d tensor graph */
cv tl_gen_grad_operand(gen *g, tl_node *x, bool meets); /* x, as a 0-d tensor where it meets one */
/* t (op) p where p is tl_gen_as_tensor's (p_left: p (op) t) */
cv tl_gen_grad_meet(gen *g, const tl_node *at, int op, cv t, cv p, bool p_left);
/* an ELEM number going into a plain number that meets a tensor elsewhere: its value,
 * with a run-time warning when it requires grad (why: what loses the gradient) */
const char *tl_gen_grad_lost(gen *g, tl_node *n, const char *why);
/* n (ELEM) where no history is kept: its value, each element read in it checked at
 * run time (sema_grad.c's TL_GRAD_CHECK) */
cv tl_gen_grad_checked(gen *g, tl_node *n, const char *why);
/* a read with TL_GRAD_CHECK of tensor t (its C) or of a variable's shadow */
void tl_gen_grad_check(gen *g, const tl_node *n, const char *t);
/* a number argument of a tensor builtin (clamp, full, masked_fill): its C, through
 * tl_gen_grad_lost when it is read from tensor elements (`instead`: what keeps it) */
const char *tl_gen_plain_number(gen *g, tl_node *a, const char *builtin, const char *instead);
/* after a call of f: a variable with a shadow lent as `&mut x` got a plain number */
void tl_gen_grad_after_call(gen *g, const tl_node *n, const tl_fninfo *f);
void tl_gen_grad_let(gen *g, tl_node *n);            /* `let` of a variable with a shadow */
void tl_gen_grad_assign(gen *g, tl_node *n, int op); /* `=` (op < 0) or `op=` (TLRT_OP_*) to one */
/* binary chains `a + b + c ...` (gen.c): the spine, top first (malloc'd; NULL after
 * an error), and a step's value r made from a with temporaries from mark on, settled */
#define GEN_MAX_CHAIN_CALLS 4096
tl_node **tl_gen_chain_spine(gen *g, tl_node *n, size_t *k);
cv tl_gen_chain_settle(gen *g, cv r, cv a, int mark);

#endif
