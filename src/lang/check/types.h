/* types.h — the checked tree: what the checker (sema.h) leaves on the syntax tree and
 * in tl_sema, and the pure functions over it. Every expression node has its type
 * (node->ty), every name its variable (node->var), every call its target (node->ref: a
 * user function; node->ival: a builtin, node->len its method), and the flags the later
 * passes read (ast.h). The ownership pass and the code generator read only this: they
 * never call the checker. All of it lives in the same arena as the tree. */
#ifndef TL_LANG_TYPES_H
#define TL_LANG_TYPES_H

#include "core/arena.h"
#include "lang/front/ast.h"
#include "lang/front/diag.h"

typedef enum {
  TY_ERROR, /* an expression already reported: silences follow-on errors */
  TY_UNIT,
  TY_BOOL,
  TY_I32,
  TY_I64,
  TY_U8, /* Rust's byte: no tensor dtype, a scalar and a Vec<u8> element */
  TY_F32,
  TY_F64,
  /* Rust's other scalars (LANGUAGE.md §3): C's fixed-width integers, wrapping; f16 and
   * bf16 a C float holding a value of that format, each result rounded back to it */
  TY_I8,
  TY_I16,
  TY_U16,
  TY_U32,
  TY_U64,
  TY_F16,
  TY_BF16,
  TY_CHAR,
  TY_STR,
  TY_TENSOR,
  TY_STRUCT,
  TY_RANGE, /* a..b, only as a `for` head, a slice or a generator */
  TY_FN,    /* `fn(i64) -> i64`: a closure or a named function as a value (sema_closure.c) */
} tl_ty_kind;

typedef struct tl_struct_info tl_struct_info;

typedef struct tl_ty {
  tl_ty_kind kind;
  int dtype;          /* TENSOR: a tl_dtype, or -1 when not known at compile time */
  int rank;           /* TENSOR: -1 when not known */
  tl_struct_info *st; /* STRUCT; a tuple is a STRUCT whose st is_tuple (sema_tuple.c) */
  uint32_t ent_cols;  /* TENSOR from a query: bit c set when column c (of the last axis)
                         holds entity ids, printed by name (sema_logic.c) */
  struct tl_ty **elems; /* a tuple: its element types, st->nfields of them, as precise as
                           known (st's fields have tensors' dtype and rank erased); NULL:
                           those of st */
  struct tl_ty **fn_params; /* FN: the parameter types, fn_nparams of them, and the result */
  int fn_nparams;
  struct tl_ty *fn_ret;
} tl_ty;

typedef enum { VAR_LOCAL, VAR_PARAM, VAR_PARAM_OWNED, VAR_PARAM_REF } tl_var_kind;

typedef struct tl_var {
  const char *name;
  tl_ty *ty;
  tl_var_kind kind;  /* PARAM: borrowed; PARAM_OWNED: `mut x: T`; PARAM_REF: `&mut` */
  bool is_mut;
  int id;            /* 0.. within its function: the ownership pass's bit */
  int line, col;
  int loop_depth;    /* loops enclosing the declaration */
  bool is_index;     /* a comprehension index variable */
  bool is_for;       /* a `for` loop's variable */
  bool captured;     /* a closure's copy of an outer variable (sema_closure.c) */
  bool plain_let;    /* declared by `let name` (not a parameter or a pattern): owns its value */
  struct tl_node *gen;       /* index variable: its generator's range, or NULL when inferred */
  struct tl_node *range_src; /* ... inferred: the INDEX node whose axis gives its range */
  int range_axis;
  bool summed;               /* index variable not among the output axes */
  bool vectorized;           /* set by the code generator: a tensor over a comprehension's space */
  int axis;                  /* index variable: its axis in the comprehension's space */
  struct tl_node *let;       /* a `let` without a written type: the variable's type is the
                                join of every value it gets (tl_sema_widen) */
  /* sema_grad.c: a float scalar variable that gets a value read from a tensor's
   * elements (elem), one read where it meets a tensor (meets); with both, `shadow` is
   * the 0-d tensor the generator keeps beside it, so gradients flow through it */
  bool elem, meets;
  struct tl_var *shadow;
} tl_var;

/* a closure (node->ref of a CLOSURE): checked as a function of its own (fn: its
 * parameters, variables and result), each captured variable an inner variable that
 * the closure's environment holds, copied or moved in from the outer one */
typedef struct tl_capture {
  struct tl_var *outer, *inner;
  struct tl_node *read; /* the IDENT node that reads outer where the closure is made */
  struct tl_capture *next;
} tl_capture;
typedef struct tl_closure_info {
  struct tl_fninfo *fn;
  tl_capture *caps;
  int ncaps;
  struct tl_ty *ty; /* its fn type */
} tl_closure_info;

/* a comprehension's iteration space (node->ref of a COMPR) */
typedef struct {
  int n, nout;
  tl_var *vars[32];
} tl_compr_vars;

typedef struct tl_fninfo {
  const char *name;   /* "main", "P::new" */
  const char *cname;  /* "tlf_main", "tlf_P__new" */
  tl_fn *fn;
  tl_struct_info *self_struct; /* methods: the impl's struct */
  tl_param *self;     /* the receiver, NULL for functions and `P::f` without self */
  int nparams;        /* without self */
  tl_var **params;    /* params[0] is self when there is one */
  int nvars;          /* variables of the function, numbered 0..nvars-1 */
  tl_var **vars;
  tl_ty *ret;
  bool partial;       /* its parse was given up: calls to it are not checked (its result is
                         TY_ERROR), nor is it */
  bool ret_meets;     /* a call's float result meets a tensor in arithmetic (sema_grad.c) */
  struct sema_tyenv *env; /* an instance of a generic fn or method, or a trait's method:
                             what its type parameters and `Self` stand for (sema_generic.c) */
  struct tl_fninfo *next;
} tl_fninfo;

typedef struct tl_field_info {
  const char *name;
  tl_ty *ty;
  int line, col;
  bool meets; /* a read of it meets a tensor in arithmetic (sema_grad.c) */
} tl_field_info;

/* an enum's variant: its fields are the enum's st->fields[first .. first+nfields) */
typedef struct tl_variant_info {
  const char *name; /* "B" */
  int tag;          /* its index among the enum's variants */
  int first, nfields;
  bool named;       /* `C { x: f32 }`; else `B(i64, f32)` or `A` */
  int line, col;
  struct tl_struct_info *en;
} tl_variant_info;

struct tl_struct_info {
  const char *name;  /* "Point"; a tuple's "(i64, Tensor)" */
  const char *cname; /* the C struct tag: "tls_Point"; a tuple's "tlt_3" */
  bool is_tuple;     /* an anonymous struct, one for each list of element types with
                        tensors' dtype and rank erased; fields "0", "1"... */
  bool is_enum;      /* an enum (sema_enum.c): a tag and every variant's fields, named
                        "v<tag>_<field>" (f_v1_0, f_v2_x in C) */
  char generic;      /* 'O' Option<T>: None, Some(T); 'R' Result<T, E>: Ok(T), Err(E); an
                        enum made for each payload type (sema_option.c); 'V' Vec<T>, 'M'
                        HashMap<K, V> (sema_vec.c: no fields, a run-time tlrt_vec/tlrt_map);
                        0 otherwise */
  struct tl_ty *targs[2]; /* 'V': T (NULL: not inferred yet); 'M': K and V */
  struct tl_fninfo *display; /* a struct's `impl Display` `to_string(&self) -> String`: what `{}`
                                prints (gen.c); NULL: its Debug form */
  char flavor;       /* 'V': 'D' a VecDeque (a Vec with its deque methods); 'M': 'S' a HashSet
                        (a map of its elements to true), 'B' a BTreeMap (kept in key order); 0
                        otherwise */
  int nvariants;
  tl_variant_info *variants;
  int nfields;
  tl_field_info *fields;
  int line, col;
  bool partial; /* its parse, or its impl's, was given up: an unknown field or method
                   is not reported (it may be the part that did not parse) */
  bool has_eq;  /* 'V': its elements have `==`, so the Vec has (the generator writes its
                   __eq); set once the program is checked (tl_sema_vec_eq_ok) */
  const char *generic_of; /* an instance of a generic struct or enum: its name ("Pair" for
                             "Pair<i64, f64>"), and its type arguments (sema_generic.c) */
  int ngargs;
  struct tl_ty **gargs;
  struct tl_struct_info *next;
};

typedef struct {
  tl_fninfo *fns;          /* every function and method */
  tl_struct_info *structs;
  tl_fninfo *main;
  struct lf_program *logic; /* the Datalog program (sema_logic.c), NULL when none */
  const struct tl_unit *units; /* the program's files (module.c); nunits 0 or 1: one file */
  int nunits;
} tl_sema;

/* builtins: node->ival of a CALL/METHOD/PATH call */
typedef enum {
  B_NONE,
  /* free functions */
  B_PRINT, B_PRINTLN, B_FORMAT,
  /* Tensor:: */
  B_ZEROS, B_ONES, B_FULL, B_RANDN, B_RAND, B_ARANGE, B_EYE, B_LINSPACE, B_CAT, B_STACK,
  /* tensor methods: elementwise (math also as free functions on scalars) */
  B_NEG, B_EXP, B_LOG, B_SQRT, B_SIN, B_COS, B_TANH, B_SIGMOID, B_RELU, B_GELU, B_GELU_TANH, B_ABS, B_LOG1P, B_EXPM1, B_ERF,
  B_FLOOR, B_CEIL, B_ROUND, B_POW, B_MAXIMUM, B_MINIMUM, B_CLAMP,
  B_GT, B_LT, B_GE, B_LE, B_EQ, B_NE,
  /* reductions and shape */
  B_SUM, B_SUMALL, B_MEAN, B_MAX, B_MIN, B_ARGMAX, B_ARGMIN, B_SOFTMAX, B_LOG_SOFTMAX,
  B_RESHAPE, B_TRANSPOSE, B_PERMUTE, B_UNSQUEEZE, B_SQUEEZE, B_SHAPE, B_DIM, B_LEN,
  B_NUMEL, B_MATMUL, B_ITEM, B_CLONE, B_CONTIGUOUS, B_TO_DTYPE, B_PROD, B_CUMSUM, B_EXPAND, B_FLIP,
  /* autograd */
  B_BACKWARD, B_GRAD, B_DETACH, B_ENABLE_GRAD, B_REQUIRES_GRAD, B_ZERO_GRAD,
  /* losses */
  B_MSE_LOSS, B_CROSS_ENTROPY,
  /* strings */
  B_STR_LEN,
  /* s.parse::<T>() (sema_sys.c, gen_sys.c): a Result<T, String> */
  B_STR_PARSE,
  /* x.is_nan(), is_infinite() (the seed's is_inf), is_finite() on a float: node->len 0, 1, 2 */
  B_FLOAT_TEST,
  /* tensor files and more tensor methods (sema_io.c, gen_io.c, rt_io.c): B_IO_FIRST..B_IO_LAST */
  B_TENSOR_SAVE, B_TENSOR_LOAD, B_PARAM_SAVE, B_PARAM_LOAD, B_CLEAR_GRADS, B_MANUAL_SEED, B_ZEROS_LIKE, B_ONES_LIKE,
  B_RAND_LIKE, B_RANDN_LIKE,
  B_TRIL, B_TRIU, B_MASKED_FILL, B_WHERE, B_VAR, B_STD, B_LEAKY_RELU, B_L1_LOSS, B_ELU, B_MISH, B_HARDSIGMOID, B_HARDSWISH, B_BCE_LOSS, B_SLICE, B_SLICE_LEN, B_DROPOUT, B_PAD, B_NORM, B_TENSOR_PRINT, B_TO_DEVICE, B_DEVICE, B_DETACH_GRAD,
  B_NLL_LOSS, B_KL_DIV_LOSS, B_LOGICAL, B_TOPK, B_PART,
  /* layer methods (sema_nn.c, gen_nn.c, rt_nn.c): B_NN_FIRST..B_NN_LAST */
  B_CONV2D, B_CONV2D_BIAS, B_MAX_POOL2D, B_AVG_POOL2D, B_LAYER_NORM, B_EMBEDDING, B_ADAM_STEP, B_NORM_LAYER, B_LINEAR, B_CONV1D, B_RESAMPLE,
  /* system calls and String methods (sema_sys.c, gen_sys.c, rt_sys.c): node->len is
   * the row of sema_sys.c's table */
  B_SYS,
  /* Option and Result methods (sema_option.c, gen_option.c): node->len is the method */
  B_OPTION,
  /* a call of a value of fn type: `f(3)`, `(s.op)(3)`, `make(2)(5)` (sema_closure.c) */
  B_FNVAL,
  /* Vec and HashMap methods (sema_vec.c, gen_vec.c): node->len is the method (VEC_*) */
  B_VEC,
  /* iterator chains, sort_by, cmp and Ordering (sema_iter.c, gen_iter.c): node->len an IT_* */
  B_ITER,
  /* Dist:: (sema_dist.c, gen_dist.c, rt_dist.c): node->len a TL_DIST_* */
  B_DIST,
  /* the seed's model helpers (sema_ml.c, gen_ml.c, rt_ml.c): node->len a TL_ML_* */
  B_ML,
  /* torch's gather, scatter, scatter_add, argsort, logsumexp, roll, repeat, any, all (sema_ops.c,
   * gen_ops.c, rt_ops_index.c): node->len a TL_OPS_* */
  B_OPS,
  B_COUNT
} tl_builtin;
#define B_IO_FIRST B_TENSOR_SAVE
#define B_IO_LAST B_PART
#define B_NN_FIRST B_CONV2D
#define B_NN_LAST B_RESAMPLE

enum { TL_DIST_RANK, TL_DIST_SIZE, TL_DIST_ALL_REDUCE, TL_DIST_ALL_REDUCE_MEAN, TL_DIST_BROADCAST, TL_DIST_BARRIER,
       TL_DIST_SHARD, TL_DIST_SYNC_GRADS };
enum { TL_ML_VB_GET, TL_ML_VB_GRAD, TL_ML_TOP_K, TL_ML_TOP_P, TL_ML_CLIP_VALUE, TL_ML_CLIP_NORM, TL_ML_GET, TL_ML_TEMPERATURE,
       TL_ML_REP_PENALTY, TL_ML_SDPA, TL_ML_INVERSE, TL_ML_DET, TL_ML_SOLVE,
       TL_ML_SVD_U, TL_ML_SVD_S, TL_ML_SVD_V, TL_ML_EIG_VALUES, TL_ML_EIG_VECTORS, TL_ML_SVD };

enum { TL_OPS_ARGSORT, TL_OPS_GATHER, TL_OPS_SCATTER, TL_OPS_LOGSUMEXP, TL_OPS_ROLL, TL_OPS_REPEAT, TL_OPS_ANY, TL_OPS_ALL, TL_OPS_SCATTER_ADD };

/* a loop's variables written inside it (loop->ref): realized every iteration */
typedef struct tl_varlist {
  tl_var *var;
  struct tl_varlist *next;
} tl_varlist;

/* a row of the system calls' table (sema_sys.c): node->sys of a B_SYS call */
typedef struct tl_sys_entry {
  const char *name; /* "assert", "System::time", "char_at" (a method) */
  char kind;        /* 'f' free, 'p' path, 'm' String method, 'v' a value (Device::Auto) */
  const char *cfn;  /* the rt_sys.h function */
  const char *args; /* one letter a parameter: b bool, i i64, s String */
  char ret;         /* u unit, b, i, s, f f32, d f64, c char */
  bool loc;         /* cfn takes the line and column */
} tl_sys_entry;

/* node->len of a B_OPTION call: the method (sema_option.c) */
enum { OPT_IS_SOME, OPT_IS_NONE, OPT_IS_OK, OPT_IS_ERR, OPT_UNWRAP, OPT_EXPECT, OPT_UNWRAP_OR, OPT_OK_OR, OPT_OK, OPT_ERR, OPT_MAP, OPT_AND_THEN, OPT_MAP_ERR,
       OPT_UNWRAP_OR_ELSE, OPT_UNWRAP_ERR, OPT_EXPECT_ERR };
/* node->len of a B_VEC call: the Vec or HashMap method (sema_vec.c) */
enum { VEC_PUSH, VEC_POP, VEC_LEN, VEC_IS_EMPTY, VEC_INSERT, VEC_REMOVE, VEC_CONTAINS, VEC_SORT, VEC_REVERSE,
       VEC_CLEAR, VEC_TO_TENSOR, VEC_NEW, VEC_WITH_CAPACITY, VEC_FROM_TENSOR,
       MAP_INSERT, MAP_GET, MAP_CONTAINS_KEY, MAP_REMOVE, MAP_LEN, MAP_IS_EMPTY, MAP_KEYS, MAP_VALUES, MAP_NEW, VEC_GET, VEC_FIRST, VEC_LAST, VEC_CAPACITY, VEC_SET, MAP_CLEAR,
       VEC_COUNT, VEC_EXTEND, VEC_TRUNCATE, VEC_SWAP, VEC_INDEX_OF, VEC_SLICE, VEC_JOIN, VEC_DEDUP,
       VEC_PUSH_FRONT, VEC_POP_FRONT, SET_INSERT, SET_REMOVE, VEC_RANGE, VEC_RETAIN };
/* node->len of a B_ITER call (sema_iter.c) */
enum { IT_ITER, IT_MAP, IT_FILTER, IT_ENUMERATE, IT_ZIP, IT_REV, IT_TAKE, IT_SKIP, IT_COLLECT, IT_SUM, IT_COUNT, IT_FOLD,
       IT_MIN, IT_MAX, IT_ANY, IT_ALL, IT_SORT_BY, IT_SORT_BY_KEY, IT_CMP, IT_PARTIAL_CMP, IT_ORD_REVERSE, IT_COLLECT_MAP, IT_STR_CHARS, IT_REDUCE, IT_POSITION };

bool tl_ty_is_refcounted(const tl_ty *t); /* String, Tensor, struct, tuple */
bool tl_ty_is_tuple(const tl_ty *t);
bool tl_ty_is_option(const tl_ty *t); /* Option<T> */
bool tl_ty_is_result(const tl_ty *t); /* Result<T, E> */
bool tl_ty_is_vec(const tl_ty *t);    /* Vec<T> */
bool tl_ty_is_map(const tl_ty *t);    /* HashMap<K, V> */
bool tl_ty_is_iter(const tl_ty *t);   /* an unconsumed iterator chain (sema_iter.c) */
/* a tuple's element i, as precise as known */
tl_ty *tl_ty_tuple_elem(const tl_ty *t, int i);
bool tl_ty_is_numeric(const tl_ty *t);
bool tl_ty_is_float(const tl_ty *t);
bool tl_ty_is_int(const tl_ty *t);
/* the scalar number types (types.c): an integer's width in bits (0: not an integer),
 * unsigned, f16/bf16 (a float rounded to that format after each operation); the
 * integer's range as int64 (u64's top: INT64_MAX, what a literal can spell); v wrapped
 * into the integer type of kind k (u64: the bits) */
int tl_ty_int_bits(const tl_ty *t);
bool tl_ty_is_unsigned(const tl_ty *t);
bool tl_ty_is_half(const tl_ty *t);
void tl_ty_int_range(tl_ty_kind k, int64_t *lo, int64_t *hi);
int64_t tl_ty_int_wrap(tl_ty_kind k, int64_t v);
/* "f32", "Tensor<f32, 2>", "Point" into buf */
const char *tl_ty_name(const tl_ty *t, char *buf, size_t size);
/* the basic types, one object each (types.c): compared by address */
extern tl_ty tl_ty_basic[TY_RANGE + 1];
#define TY_ERR (&tl_ty_basic[TY_ERROR])
#define TY_UNIT_T (&tl_ty_basic[TY_UNIT])
#define TY_BOOL_T (&tl_ty_basic[TY_BOOL])
#define TY_I32_T (&tl_ty_basic[TY_I32])
#define TY_U8_T (&tl_ty_basic[TY_U8])
#define TY_I64_T (&tl_ty_basic[TY_I64])
#define TY_F32_T (&tl_ty_basic[TY_F32])
#define TY_F64_T (&tl_ty_basic[TY_F64])
#define TY_I8_T (&tl_ty_basic[TY_I8])
#define TY_I16_T (&tl_ty_basic[TY_I16])
#define TY_U16_T (&tl_ty_basic[TY_U16])
#define TY_U32_T (&tl_ty_basic[TY_U32])
#define TY_U64_T (&tl_ty_basic[TY_U64])
#define TY_F16_T (&tl_ty_basic[TY_F16])
#define TY_BF16_T (&tl_ty_basic[TY_BF16])
#define TY_CHAR_T (&tl_ty_basic[TY_CHAR])
#define TY_STR_T (&tl_ty_basic[TY_STR])
#define TY_RANGE_T (&tl_ty_basic[TY_RANGE])

/* the dtype rules (LANGUAGE.md §3), which the checker types with and the generator
 * applies to the values it makes (0-d tensors that keep a gradient, a comprehension's
 * tensors). A scalar type's dtype (-1: none); the scalar type of a dtype's elements
 * (f32 when the dtype is not known) */
int tl_ty_dtype(const tl_ty *t);
tl_ty *tl_ty_of_dtype(int dtype);
/* the dtype two tensors of dtypes a and b compute in, as torch promotes: the wider
 * along bool < i32 < i64 < f32 < f64; -1 when a dtype it depends on is not known */
int tl_ty_promote_dtypes(int a, int b);
/* the dtype a number n of type ty takes beside a tensor: its own, but i64 for an
 * integer literal, whatever type the tensor's dtype hinted it (it may be unknown) */
int tl_ty_scalar_dtype(const tl_node *n, const tl_ty *ty);
/* the dtype of l (op) r where one of them is a tensor (ln, rn: their nodes) */
int tl_ty_binary_dtype(const tl_node *ln, const tl_ty *l, const tl_node *rn, const tl_ty *r);

/* a format placeholder's spec, Rust's subset `{:[[fill]align][0][width][.prec][?]}`
 * (align < > ^; 0: zeros after the sign); read from s[i] = '{' to its '}' (*end);
 * false when malformed. width 0: none; prec -1: none; align 0: the type's own */
typedef struct {
  int width, prec;
  char align, fill;
  bool zero, debug;
} tl_fmt_spec;
bool tl_fmt_spec_read(const char *s, size_t len, size_t i, size_t *end, tl_fmt_spec *out);
#endif
