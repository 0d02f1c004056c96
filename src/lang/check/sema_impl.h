/* sema_impl.h — what the checker's files (sema.c, sema_builtin.c) share. */
#ifndef TL_LANG_SEMA_IMPL_H
#define TL_LANG_SEMA_IMPL_H

#include "lang/check/sema.h"
#include "tl.h"

#define SEMA_MAX_LOOPS 64

typedef struct sym {
  const char *name;
  tl_var *var;
  struct sym *next;
} sym;

/* what type names stand for in a generic instance (sema_generic.c): its type
 * parameters, `Self`, and the owner of its methods (`i64` for `impl Shape for i64`) */
typedef struct sema_tyenv {
  int n;
  const char **names;
  tl_ty **tys;
  tl_ty *self;
  const char *owner;
  int depth; /* instances made to check this one: polymorphic recursion stops */
} sema_tyenv;

typedef struct {
  tl_diag *diag;
  tl_arena *arena;
  tl_sema *out;
  tl_fninfo *fn; /* the function being checked */
  int cap_vars;
  sym *syms;     /* names in scope, innermost first */
  tl_node *loops[SEMA_MAX_LOOPS];
  int nloops;
  int compr_depth;
  bool widened; /* a variable's inferred type grew in this pass: check the function again */
  bool hint;    /* the next tl_sema_expr's expected type is a hint only (tl_sema_expr_hint) */
  struct sema_logic *logic; /* Datalog (sema_logic.c) */
  struct sema_closure *closure; /* the closure being checked, innermost (sema_closure.c) */
  struct sema_gen *gen;     /* generic items, traits, instances (sema_generic.c) */
  sema_tyenv *env;          /* the type parameters in scope, NULL outside generics */
  tl_ty *self_ty;           /* what `Self` is: the impl's type, NULL outside impls */
  const tl_type *assoc;     /* what `Self::Output` is: the impl's associated types (sema_trait.c) */
  tl_ast_item *items;       /* the program's items: the impls `dyn Trait` holds (sema_dyn.c) */
  struct sema_const *consts; /* `const` items (sema_const.c) */
} sema;

/* expect: the type the context requires (a written type, a condition, a scalar
 * operand of a scalar result); a scalar one makes an index of a tensor of unknown rank
 * read a scalar. tl_sema_expr_hint: a type literals may take, no requirement. */
tl_ty *tl_sema_expr(sema *s, tl_node *n, tl_ty *expect);
tl_ty *tl_sema_expr_hint(sema *s, tl_node *n, tl_ty *hint);
tl_ty *tl_sema_block(sema *s, tl_node *n, tl_ty *expect);
/* statements (sema_stmt.c): one statement of a block, and `loop`/`while` as expressions */
void tl_sema_stmt(sema *s, tl_node *n);
void tl_sema_loop(sema *s, tl_node *n);
/* shared by expressions and compound assignments (sema.c) */
tl_ty *tl_sema_binary_tensor(sema *s, tl_node *n, tl_ty *l, tl_ty *r);
tl_ty *tl_sema_binary_at(sema *s, tl_node *n, tl_ty *expect, bool hint_only, tl_ty *l_done);
bool tl_sema_tensor_cond(sema *s, tl_node *cond, const tl_ty *c);
/* a number literal with no suffix and no constant's type: it takes the context's */
bool tl_sema_is_plain_literal(const tl_node *n);
tl_ty *tl_sema_call(sema *s, tl_node *n, tl_ty *expect);
tl_ty *tl_sema_method(sema *s, tl_node *n);
tl_ty *tl_sema_compr(sema *s, tl_node *n);
/* sema_logic.c: Datalog. begin: before the bodies are checked (relations known);
 * claims: is this call `p(..)` a relation call or entity_name(id)? (it becomes a
 * TL_N_LOGIC node); expr: a TL_N_LOGIC or TL_N_LVAR node; finish: after the bodies */
void tl_sema_logic_begin(sema *s, tl_program *prog);
bool tl_sema_logic_claims(sema *s, tl_node *n);
tl_ty *tl_sema_logic_expr(sema *s, tl_node *n);
void tl_sema_logic_finish(sema *s);

tl_ty *tl_sema_tensor(sema *s, int dtype, int rank);
/* t[i, j] or t.item() (checked) of a tensor whose dtype the checker cannot see: its
 * scalar type came from the context, else is f64 */
bool tl_sema_is_flex_read(const tl_node *n);
/* n is differentiable scalar math on floats (x.exp(), max(a, b)): its operands, y NULL
 * for one (sema_grad.c) */
bool tl_sema_grad_math(const tl_node *n, tl_node **x, tl_node **y);

bool tl_sema_ty_fits(const tl_ty *want, const tl_ty *have);
tl_ty *tl_sema_join(sema *s, tl_ty *a, tl_ty *b);
bool tl_sema_widen(sema *s, tl_var *v, tl_ty *t);
tl_ty *tl_sema_resolve_type(sema *s, const tl_type *t);
/* a scalar type by its name (i8 ... u64, f16, bf16, f32, f64, bool, char, String), or NULL */
tl_ty *tl_sema_scalar_named(const char *name);
tl_var *tl_sema_declare(sema *s, const tl_node *at, const char *name, tl_ty *ty, tl_var_kind kind, bool is_mut);
tl_fninfo *tl_sema_find_fn(sema *s, const char *name);
tl_var *tl_sema_lookup(sema *s, const char *name);
void tl_sema_expect_i64(sema *s, tl_node *n, const char *what);
void tl_sema_error(sema *s, const tl_node *n, const char *fmt, ...) TL_PRINTF(3, 4);
/* "what: expected want, found have", unless either has the error type in it */
void tl_sema_mismatch(sema *s, const tl_node *n, const char *what, const tl_ty *want, const tl_ty *have);
bool tl_sema_ty_has_error(const tl_ty *t);
/* sema_io.c: Tensor::save/load, Param::save/load, Tensor::clear_grads (path calls) and
 * the tensor methods it adds; NULL when the call is none of them */
tl_ty *tl_sema_io_path_call(sema *s, tl_node *n);
tl_ty *tl_sema_io_method(sema *s, tl_node *n, tl_ty *t);
/* sema_nn.c: the layer methods conv2d, max_pool2d, avg_pool2d, layer_norm, embedding;
 * NULL when the call is none of them */
tl_ty *tl_sema_nn_method(sema *s, tl_node *n, tl_ty *t);
/* sema_sys.c: assert, System::, Env::, File::, args_*, String:: (free and path calls)
 * and the String methods; NULL when the call is none of them */
tl_ty *tl_sema_sys_call(sema *s, tl_node *n, const char *name);
/* is there a path helper (a 'p' row) of this name? */
bool tl_sema_sys_call_named(const char *path);
/* sema_trait.c: `Self::Output`, the impl's associated type (s->assoc) */
tl_ty *tl_sema_assoc_type(sema *s, const tl_type *t);
/* sema_dyn.c: `dyn Trait` as an enum of the trait's types, `Box<T>` as T */
bool tl_sema_dyn_is(const tl_ty *t);
tl_ty *tl_sema_dyn_resolve(sema *s, const tl_type *t);            /* NULL: neither `dyn T` nor Box */
bool tl_sema_dyn_box_new(sema *s, tl_node *n);                    /* `Box::new(x)` made x */
tl_ty *tl_sema_dyn_wrap(sema *s, tl_node *n, tl_ty *want, tl_ty *have);
tl_ty *tl_sema_dyn_cast(sema *s, tl_node *n, tl_ty *to);
tl_ty *tl_sema_dyn_method(sema *s, tl_node *n, tl_ty *t, tl_ty *expect);
tl_ty *tl_sema_sys_method(sema *s, tl_node *n, tl_ty *t);
/* sema_dist.c: Dist::rank ... Dist::sync_grads; NULL when the path is none of them */
tl_ty *tl_sema_dist_call(sema *s, tl_node *n, const char *path);
tl_ty *tl_sema_ml_call(sema *s, tl_node *n, const char *path); /* sema_ml.c: VarBuilder:: */
tl_ty *tl_sema_ops_method(sema *s, tl_node *n, tl_ty *t);      /* gather, argsort, roll, any... */
tl_ty *tl_sema_ml_method(sema *s, tl_node *n, tl_ty *t);       /* top_k_sample, clip_grad_value... */
/* a path that is a value, `Device::Auto`; NULL when it is none */
tl_ty *tl_sema_sys_path_value(sema *s, tl_node *n);
/* `S(a, b)` where S is a struct (and no function): `S { f1: a, f2: b }` in field order;
 * the node becomes that literal. NULL when no struct is named so. */
tl_ty *tl_sema_positional_struct(sema *s, tl_node *n, const char *name, tl_ty *expect);
const tl_sys_entry *tl_sema_sys_row(size_t i);

/* sema_tuple.c: tuple types (interned as anonymous structs), tuple expressions,
 * `t.0`, `let (a, b) = t;` and `==` on tuples */
tl_ty *tl_sema_tuple_resolve(sema *s, const tl_type *t);
tl_ty *tl_sema_tuple_expr(sema *s, tl_node *n, tl_ty *expect, bool hint);
tl_ty *tl_sema_tuple_field(sema *s, tl_node *n, tl_ty *t);
void tl_sema_tuple_let(sema *s, tl_node *n);
bool tl_sema_tuple_fits(const tl_ty *want, const tl_ty *have);
tl_ty *tl_sema_tuple_join(sema *s, tl_ty *a, tl_ty *b);
tl_ty *tl_sema_tuple_compare(sema *s, tl_node *n, tl_ty *l, tl_ty *r);
bool tl_sema_tuple_eq_ok(const tl_ty *t); /* has `==`: numbers, bools, chars, Strings, tuples of them */
void tl_sema_tuple_name(const tl_ty *t, char *buf, size_t size);
tl_struct_info *tl_sema_find_struct(sema *s, const char *name);

/* sema_enum.c: enum declarations and values `E::A`, `E::B(..)`, `E::C { .. }` (the node
 * becomes a VARIANT); NULL when n names no enum variant */
void tl_sema_enum_declare(sema *s, tl_ast_item *it, bool partial);
void tl_sema_enum_fields(sema *s, tl_ast_item *it);
tl_ty *tl_sema_enum_value(sema *s, tl_node *n);
tl_ty *tl_sema_struct_ty(sema *s, tl_struct_info *st);
/* sema_match.c: `match` and `if let` (exhaustiveness too), and patterns; let_pattern:
 * `let PAT = ..`, which must match every value */
tl_ty *tl_sema_match(sema *s, tl_node *n, tl_ty *expect, bool hint);
void tl_sema_let_pattern(sema *s, tl_node *p, tl_ty *t);
/* the variant named by a path "E::B", or NULL (*en: the enum when E is one) */
tl_variant_info *tl_sema_find_variant(sema *s, const char *path, tl_struct_info **en);

/* sema_option.c: Option<T> and Result<T, E>: their types, the values `Some(x)`, `None`,
 * `Ok(x)`, `Err(e)` (the node becomes a VARIANT; NULL when n is none of them), their
 * methods (NULL when t is neither), postfix `?`, and the variant a pattern `Some(..)`,
 * `None`, `Ok(..)`, `Err(..)` names in a value of type t */
tl_ty *tl_sema_option_resolve(sema *s, const tl_type *t);
tl_ty *tl_sema_option_value(sema *s, tl_node *n, tl_ty *expect, bool hint);
tl_ty *tl_sema_option_method(sema *s, tl_node *n, tl_ty *t);
tl_ty *tl_sema_option_try(sema *s, tl_node *n);
/* does n name one of the four: "Some"... (a pattern's or value's head), its index or -1 */
int tl_sema_option_ctor(const char *name);
/* `Option::Some(x)`, `Option::None`, `Result::Ok(x)`, `Result::Err(e)` (a value or a
 * pattern, n or a call's callee) become `Some(x)`..., the seed language's spelling of
 * them; a program's own enum Option or Result keeps its paths */
void tl_sema_option_spelling(sema *s, tl_node *n);
/* a value whose type only its context gives (`None`, `Ok(..)`, `Err(..)`, a block
 * ending in one): an `if` or `match` checks its other branches first */
bool tl_sema_option_needs_context(const tl_node *n);
tl_variant_info *tl_sema_option_variant(sema *s, tl_node *p, const char *name, tl_ty *t);

/* sema_closure.c: closures, fn types and values of fn type */
bool tl_sema_fn_fits(const tl_ty *want, const tl_ty *have);
/* a shared struct's type arguments (Vec, HashMap, Option, tuple): fn types erased as
 * tensors are (their tensors without dtype or rank); same_erased: do two such
 * arguments have the same erased form (fn types by their whole signature)? */
tl_ty *tl_sema_fn_erase(sema *s, tl_ty *t);
bool tl_sema_ty_same_erased(const tl_ty *a, const tl_ty *b);
void tl_sema_fn_name(const tl_ty *t, char *buf, size_t size);
tl_ty *tl_sema_fn_resolve(sema *s, const tl_type *t); /* `fn(i64) -> i64` */
tl_ty *tl_sema_closure_expr(sema *s, tl_node *n, tl_ty *expect);
/* v named at `at` inside a closure: the closure's copy of it (v when it is its own) */
tl_var *tl_sema_closure_capture(sema *s, tl_var *v, const tl_node *at);
/* a write (an assignment, `&mut v`, a `&mut self` method) to a closure's captured
 * variable: reports it and returns true */
bool tl_sema_closure_written(sema *s, const tl_node *at, const tl_var *v);
/* named function f used as a value (n an IDENT); NULL when it cannot be one (a method) */
tl_ty *tl_sema_fn_value(sema *s, tl_node *n, tl_fninfo *f);
/* `f(3)`, `(s.op)(3)`, `make(2)(5)`: a call of a value of fn type (node->ival B_FNVAL) */
tl_ty *tl_sema_closure_call(sema *s, tl_node *n);
/* For library functions that take a function (Option::map, Vec's map/filter/fold...):
 * checks arg, a closure (its parameter types inferred from params) or any value of fn
 * type, against fn(params...) -> ret; ret NULL: any result, which the returned type
 * tells. Returns arg's fn type, or TY_ERR after reporting a mismatch. */
tl_ty *tl_sema_closure_expect(sema *s, tl_node *arg, tl_ty **params, int nparams, tl_ty *ret);
/* sema_vec.c: Vec<T> and HashMap<K, V>: their types, `Vec::new()`, `vec![..]`, their
 * methods, `v[i]`, `m[k]`, `for x in v`, `==`; NULL when n or t is none of theirs */
tl_ty *tl_sema_vec_resolve(sema *s, const tl_type *t);
tl_ty *tl_sema_vec_type(sema *s, tl_ty *elem);
tl_ty *tl_sema_vec_path_call(sema *s, tl_node *n, tl_ty *expect);
tl_ty *tl_sema_vec_lit(sema *s, tl_node *n, tl_ty *expect);
tl_ty *tl_sema_vec_method(sema *s, tl_node *n, tl_ty *t);
tl_ty *tl_sema_vec_index(sema *s, tl_node *n, tl_ty *t);
tl_ty *tl_sema_vec_for(sema *s, tl_ty *t); /* the loop variable's type */
tl_ty *tl_sema_set_elems(sema *s, tl_node *h, tl_ty *t); /* h, a HashSet, made h.keys() */
tl_ty *tl_sema_vec_compare(sema *s, tl_node *n, tl_ty *l, tl_ty *r);
bool tl_sema_vec_eq_ok(const tl_ty *t); /* has `==` */
bool tl_sema_vec_fits(const tl_ty *want, const tl_ty *have); /* Vec<_> fits any Vec */
/* after a function's passes: each `let` still holding a Vec<_> is an error */
void tl_sema_vec_check_inferred(sema *s, tl_fninfo *f);
/* after every function is checked: which numbers carry an element read's gradient,
 * which meet tensors (node->grad, var->elem/meets/shadow, ret_meets, field meets) */
void tl_sema_grad_program(sema *s);
/* after tl_sema_grad_program: the flags the generator reads (node->flex_read, TL_GRAD_MATH,
 * a Vec's has_eq), each from the checker's predicate on the final tree (sema_annotate.c) */
void tl_sema_annotate(sema *s);
/* n, a float number where a Tensor is required: when it reads tensor elements (through
 * arithmetic and math), it is retyped as a 0-d tensor computed from views; else false */
bool tl_sema_grad_promote(sema *s, tl_node *n);
tl_ty *tl_sema_option_type(sema *s, tl_ty *t); /* Option<t> (sema_option.c) */
tl_ty *tl_sema_option_result_type(sema *s, tl_ty *t, tl_ty *e); /* Result<t, e> */
tl_ty *tl_sema_tuple_of(sema *s, tl_ty **elems, int n); /* (elems...) (sema_tuple.c) */
/* sema_generic.c: generic fns, structs, enums and their impls, monomorphized: each use
 * with new type arguments makes an instance (a tl_fninfo or tl_struct_info of its own,
 * checked and generated as a plain one). register: a generic item or a trait, at
 * declaration (true: taken); item: a generic fn's or trait impl's declaration pass
 * (true: taken); resolve: a type name the environment or a generic declares (NULL: not
 * one); call: `f(..)` or `P::f(..)` of a generic (false: not one; *f NULL after an
 * error); find_fn: a method of an instance made on first use; rename: a literal, value
 * or pattern naming a generic struct or enum gets its instance's name (false: an error) */
bool tl_sema_generic_register(sema *s, tl_ast_item *it, bool broken);
bool tl_sema_generic_item(sema *s, tl_ast_item *it);
bool tl_sema_generic_fn_named(sema *s, const char *name); /* a generic fn of that name */
tl_ty *tl_sema_generic_resolve(sema *s, const tl_type *t);
bool tl_sema_generic_call(sema *s, tl_node *n, const char *name, tl_ty *expect, tl_fninfo **f);
tl_fninfo *tl_sema_generic_find_fn(sema *s, const char *name);
bool tl_sema_generic_rename(sema *s, tl_node *n, tl_ty *expect);
void tl_sema_generic_pattern(sema *s, tl_node *p, tl_ty *t);
/* `x.map(v)` of a generic method `fn map<V>(&self, v: V)` of st's impl (false: none
 * such; *f NULL after an error) */
bool tl_sema_generic_method(sema *s, tl_node *n, tl_struct_info *st, tl_fninfo **f);
/* drops the errors from the first-th on that repeat an earlier one word for word (an
 * error in a generic body is the same in each instance), and names the instance under
 * the others */
void tl_sema_generic_dedupe(sema *s, int first, const char *instance);
/* sema_trait.c: traits. impl: `impl Shape for Circle` declares its methods and the
 * defaults it does not override; method: a trait method on a builtin type (NULL: none);
 * satisfies: does t implement the bound (a user trait or Ord, Clone...) */
void tl_sema_trait_impl(sema *s, tl_ast_item *it);
tl_fninfo *tl_sema_trait_method(sema *s, tl_ty *t, const char *name);
bool tl_sema_trait_satisfies(sema *s, tl_ty *t, const char *trait);
/* sema.c, shared with the generics: declare a fn (a method of st, or of s->env->owner) */
tl_fninfo *tl_sema_declare_fn(sema *s, tl_fn *fn, tl_struct_info *st);
void tl_sema_struct_fill(sema *s, tl_struct_info *st, tl_ast_item *it);
void tl_sema_enum_fill(sema *s, tl_struct_info *st, tl_ast_item *it);

/* sema_iter.c: iterator chains `v.iter().map(f).sum()`, `v.sort_by(f)`, `sort_by_key`,
 * `a.cmp(b)`, `x.partial_cmp(y)`, the built-in enum Ordering; node->len of a B_ITER call */
void tl_sema_iter_begin(sema *s); /* declares Ordering unless the program has its own */
tl_ty *tl_sema_iter_method(sema *s, tl_node *n, tl_ty *t); /* NULL when n is none of these */
void tl_sema_iter_check_consumed(sema *s, tl_fninfo *f);  /* after a function's passes */
/* t, n's type; a `collect()` of pairs where a HashMap is expected: that HashMap */
tl_ty *tl_sema_iter_collect_into(sema *s, tl_node *n, tl_ty *t, tl_ty *expect);

/* sema_const.c: `const` and `static` items. declare: at the declaration pass (broken:
 * its parse was given up, known by name); check: every value computed (after the
 * functions are declared); use: an IDENT naming a constant becomes a literal of its
 * type (NULL: no constant has the name); type: a literal made so, its constant's type
 * (NULL: a literal written so); name: its constant's name */
void tl_sema_const_declare(sema *s, tl_ast_item *it, bool broken);
void tl_sema_const_check(sema *s, tl_program *prog);
tl_ty *tl_sema_const_use(sema *s, tl_node *n);
bool tl_sema_const_exists(sema *s, const char *name);
/* sema_seed.c: `t.fill_(v)` becomes an assignment: 1 (st is now that ASSIGN), 2
 * (reported), 0 (not such a statement) */
int tl_sema_seed_stmt(sema *s, tl_node *st);
int tl_sema_seed_checkpoint(sema *s, tl_node *n); /* `Param::checkpoint(m.f, x)` made m.f(x): 1, -1 reported */
void tl_sema_seed_assign(sema *s, tl_node *st);
/* sema_einsum.c: `let C = A[i, j] * B[j, k];` with i, j, k free becomes a comprehension */
bool tl_sema_einsum_let(sema *s, tl_node *let);
/* `F32::nan()`, `i64::max_value()`: call n becomes the constant's literal; NULL if not one */
tl_ty *tl_sema_const_call(sema *s, tl_node *n);
tl_ty *tl_sema_const_type(const tl_node *n);
const char *tl_sema_const_name(const tl_node *n);

/* sema_suggest.c: the candidates of "did you mean" (tl_suggest) for a name not found:
 * variables in scope; free functions; what follows `owner::` (methods, or associated
 * functions and library paths); struct (and enum) names; every type name; fields;
 * variants */
void tl_sema_suggest_vars(sema *s, tl_suggest *g);
void tl_sema_suggest_fns(sema *s, tl_suggest *g);
void tl_sema_suggest_members(sema *s, tl_suggest *g, const char *owner, bool methods);
void tl_sema_suggest_structs(sema *s, tl_suggest *g, bool enums);
void tl_sema_suggest_types(sema *s, tl_suggest *g);
void tl_sema_suggest_fields(const tl_struct_info *st, tl_suggest *g);
void tl_sema_suggest_variants(const tl_struct_info *en, tl_suggest *g);

/* checks each argument of a list (a named one by its value) after an arity error, so
 * errors inside them are still reported */
void tl_sema_check_rest(sema *s, tl_node *args);
/* sema_lib.c, for the library types: does written type t (`Option<..>`, `Vec<..>`)
 * have want type arguments (else an error with the hint)? does call or method n,
 * named what in the error, have want arguments (else an error, and the arguments are
 * checked as tl_sema_check_rest does)? */
bool tl_sema_type_arity(sema *s, const tl_type *t, int want, const char *hint);
bool tl_sema_arity(sema *s, tl_node *n, const char *what, int want);
/* sema_builtin.c: shape argument a (`[2, 3]`, an i64, an integer tensor, a Vec<i64>);
 * its rank when the checker knows it, else -1 */
int tl_sema_check_shape(sema *s, tl_node *a);
/* method n changes its receiver (`v.push(x)`, `v.sort_by(f)`): it must be a mutable
 * variable (or a field or element of one), not a closure's captured copy */
void tl_sema_receiver_mut(sema *s, tl_node *n);
/* sema_lib.c: may `what` change `v`? (a plain `let` without `mut`: yes, with a warning) */
bool tl_sema_may_change(sema *s, const tl_node *at, tl_var *v, const char *what);

#endif
