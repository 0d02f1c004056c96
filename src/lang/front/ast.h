/* ast.h — the syntax tree of a TL file (LANGUAGE.md §2-4), built by the parser.
 * Every node, name and list lives in one tl_arena and goes with it, all at once.
 * Lists (statements, arguments, params, fields, items) are linked through `next`. */
#ifndef TL_LANG_AST_H
#define TL_LANG_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "lang/front/lex.h"

/* `i64`, `Point`, `Tensor`, `Tensor<f32, 2>`, a tuple `(i64, Tensor)`, `()`,
 * `Option<i64>`, `Result<Tensor, String>` (the type arguments are elems, not is_tuple) */
typedef struct tl_type {
  int line, col;
  const char *name;  /* "i64", "Tensor", a struct's name; "()" for a tuple or unit */
  const char *dtype; /* Tensor<dtype, rank>: "f32"...; NULL when not written */
  int64_t rank;      /* -1 when not written */
  struct tl_type *elems; /* a tuple's element types, Option's or Result's type arguments,
                            linked by next (NULL: `()`) */
  bool is_tuple;         /* `(...)`: elems, or unit when there are none */
  struct tl_type *ret;   /* `fn(i64) -> f32` (name "fn", elems the parameters): the result
                            type, NULL for `()` (sema_closure.c) */
  struct tl_type *next;
} tl_type;

typedef enum {
  /* expressions */
  TL_N_INT,        /* ival */
  TL_N_FLOAT,      /* fval */
  TL_N_STR,        /* str, len */
  TL_N_CHAR,       /* ival: the code point */
  TL_N_BOOL,       /* ival: 0 or 1 */
  TL_N_IDENT,      /* name */
  TL_N_SELF,       /* self */
  TL_N_PATH,       /* name: "Tensor::zeros" (segments joined by ::) */
  TL_N_UNARY,      /* op (MINUS, NOT, AMP for `&mut`), lhs */
  TL_N_BINARY,     /* op, lhs, rhs */
  TL_N_CAST,       /* lhs as type */
  TL_N_RANGE,      /* lhs..rhs, either may be NULL */
  TL_N_CALL,       /* lhs(args) */
  TL_N_METHOD,     /* lhs.name(args) */
  TL_N_FIELD,      /* lhs.name (a tuple's field: "0", "1"...) */
  TL_N_INDEX,      /* lhs[args]; a RANGE argument is a slice */
  TL_N_ARRAY,      /* [args] */
  TL_N_TUPLE,      /* (args): a tuple (`(a,)` one element, `()` unit); also a `let`
                      pattern, whose leaves are IDENT nodes (is_mut; `_` binds nothing) */
  TL_N_STRUCT_LIT, /* name { args }: FIELD_INIT nodes */
  TL_N_FIELD_INIT, /* name: lhs (shorthand `y` gives lhs = IDENT y) */
  TL_N_IF,         /* if cond then (a BLOCK) else els (a BLOCK, an IF or NULL) */
  TL_N_BLOCK,      /* { stmts value? } */
  TL_N_COMPR,      /* [args | stmts body?]: args are the output axes (IDENT nodes), stmts
                      the clauses (GEN nodes and filter expressions), body a BLOCK or NULL */
  TL_N_GEN,        /* a comprehension clause `name <- lhs` (lhs a RANGE) */
  TL_N_LOGIC,      /* Datalog (parse_logic.c): ival a TL_LOGIC_* kind, name the relation,
                      args the terms; an ATOM negated has op NOT */
  TL_N_LVAR,       /* `$x` in a query or a rule: name */
  TL_N_MATCH,      /* match lhs { args }: ARM nodes; `if let P = e { a } else { b }` is
                      `match e { P => a, _ => b }` (ival 1: written as `if let`), and
                      `while let P = e { a }` is `loop { match e { P => a, _ => break } }`
                      (ival 2) */
  TL_N_ARM,        /* lhs (if cond)? => rhs: a pattern, a guard or NULL, the value */
  TL_N_TRY,        /* lhs?: an Option's or Result's value, or an early return (sema_option.c) */
  TL_N_CLOSURE,    /* |args| -> type body: args IDENT nodes (a param's written type in
                      type, or NULL), type the written result or NULL, body a BLOCK; the
                      checker sets ref (sema.h tl_closure_info) and stmts: one IDENT read
                      per captured variable, at the closure (sema_closure.c) */
  TL_N_VARIANT,    /* made by the checker of `E::A`, `E::B(args)`, `E::C { args }`
                      (FIELD_INIT nodes): ref the variant (sema.h tl_variant_info) */
  /* patterns (match arms, `let`, `if let`): IDENT a binding (is_mut; `_` none), a
   * literal (INT FLOAT CHAR STR BOOL, UNARY `-` of a number), RANGE `a..=b` (op
   * ASSIGN), TUPLE, PATH `E::A`, CALL `E::B(pats)`, STRUCT_LIT `E::C { x, y: pat, .. }`
   * or `P { .. }` (ival 1: has `..`), BINARY with op PIPE `p | q` */
  /* statements */
  TL_N_LET,        /* let is_mut? name (: type)? (= rhs)?; `let (a, b) = ..`: name NULL,
                      lhs the pattern (a TUPLE) */
  TL_N_ASSIGN,     /* lhs op rhs: op is ASSIGN or PLUS_ASSIGN... */
  TL_N_EXPR_STMT,  /* lhs; */
  TL_N_WHILE,      /* while cond body */
  TL_N_LOOP,       /* loop body */
  TL_N_FOR,        /* for name in lhs body */
  TL_N_BREAK,
  TL_N_CONTINUE,
  TL_N_RETURN,     /* return lhs? */
  TL_N_ERROR,      /* where a parse error was (never in a tree without errors) */
} tl_node_kind;

typedef struct tl_node tl_node;
struct tl_node {
  tl_node_kind kind;
  int line, col;
  tl_node *next;
  tl_tok_kind op;
  tl_node *lhs, *rhs;
  tl_node *cond, *then, *els;
  tl_node *body;  /* WHILE, LOOP, FOR: a BLOCK */
  tl_node *stmts; /* BLOCK */
  tl_node *value; /* BLOCK: the trailing value expression, or NULL */
  tl_node *args;
  const char *name;
  tl_type *type; /* LET, CAST; IDENT/PATH: a turbofish `f::<i64>`, its elems the type
                    arguments, rank the path segment they follow (0: the first) */
  bool is_mut;   /* LET */
  int64_t ival;
  double fval;
  const char *str;
  size_t len;
  /* filled by the checker (sema.c) and the ownership pass (own.c) */
  struct tl_ty *ty;     /* the expression's type */
  struct tl_var *var;   /* IDENT, LET, FOR, GEN: the variable named or declared */
  void *ref;            /* CALL/METHOD/PATH: the function or builtin called; FIELD: the
                           struct's field (not a tuple's) */
  const struct tl_sys_entry *sys; /* a B_SYS call or value: its row (sema_sys.c) */
  bool last_use;        /* IDENT: the variable is dead after this read (a move point) */
  bool flex_read;       /* INDEX or item(): a number read from a tensor whose dtype the
                           checker cannot see (tl_sema_is_flex_read) */
  unsigned char grad;   /* TL_GRAD_* (sema_grad.c) */
};
/* a float scalar whose value follows from an element read of a float tensor: where it
 * meets a tensor, the generator computes it as a 0-d tensor, so gradients flow */
#define TL_GRAD_ELEM 1
/* an element read (or a variable with a shadow) in a number that goes where no history
 * is kept (a tensor's element, clamp's bound): checked at run time for requires grad */
#define TL_GRAD_CHECK 2
/* differentiable scalar math on floats, `x.exp()`, `max(a, b)` (tl_sema_grad_math): its
 * operands are a METHOD's lhs and args, a CALL's first two args */
#define TL_GRAD_MATH 4

/* `x: T`, `mut x: T`, `x: &mut T`, `self`, `&self`, `&mut self` (a receiver: by_ref
 * for `&`, is_mut for `&mut`) */
typedef struct tl_param {
  int line, col;
  const char *name; /* "self" for a receiver */
  tl_type *type;    /* NULL for self */
  bool is_mut, by_ref, is_self;
  struct tl_param *next;
} tl_param;

typedef struct tl_field {
  int line, col;
  const char *name;
  tl_type *type;
  struct tl_field *next;
} tl_field;

/* an enum's variant: `A`, `B(i64, f32)` (fields named "0", "1"...), `C { x: f32 }` (named) */
typedef struct tl_variant {
  int line, col;
  const char *name;
  tl_field *fields;
  bool named;
  struct tl_variant *next;
} tl_variant;

/* a type parameter `T`, `T: Shape + Ord` of a generic fn, struct, enum or impl
 * (sema_generic.c): bounds are trait names, linked by next */
typedef struct tl_tparam {
  int line, col;
  const char *name;
  tl_type *bounds;
  struct tl_tparam *next;
} tl_tparam;

typedef struct tl_fn {
  int line, col;
  const char *name;
  tl_tparam *tparams; /* `fn f<T: Ord>`: a generic fn, checked and generated per use */
  tl_param *params;
  tl_type *ret; /* NULL: no `->` */
  tl_node *body; /* NULL: a trait's required method `fn area(&self) -> f64;` */
  bool broken;  /* a syntax or lexical error inside: its failed statements are ERROR nodes */
  bool partial; /* parsing it was given up: only its start is known (name, some params) */
  bool script;  /* the `main` made of a file's statements outside functions (parse.c) */
  int unit;     /* the file it is in (tl_program.units) */
  struct tl_type *assoc; /* a method of an impl or trait: its associated types (tl_ast_item.assoc) */
  struct tl_fn *next;
} tl_fn;

typedef enum {
  TL_ITEM_FN, TL_ITEM_STRUCT, TL_ITEM_IMPL,
  TL_ITEM_ENUM,     /* name, variants */
  TL_ITEM_FACT,     /* atom: a LOGIC ATOM */
  TL_ITEM_RULE,     /* atom: the head; body: literals (LOGIC ATOMs, comparisons) */
  TL_ITEM_RELATION, /* name; atom: a LOGIC ATOM whose args are IDENTs `entity` / `i64` */
  TL_ITEM_MOD,      /* name: `mod name;`; module: the file's items, once read (lang.c) */
  TL_ITEM_USE,      /* name: `use name::*;` */
  TL_ITEM_TRAIT,    /* name, methods (required ones have no body) */
  TL_ITEM_CONST,    /* `const NAME: type = value;` (or `static`, is_static; `static mut`, is_mut) */
  TL_ITEM_IO,       /* `.input edge(..)` / `.output path(..)`: name the relation; atom: name
                       "input"/"output", args IDENTs named by the options, str their values */
} tl_item_kind;

/* TL_N_LOGIC kinds */
enum { TL_LOGIC_ATOM, TL_LOGIC_QUERY, TL_LOGIC_CALL, TL_LOGIC_FACT, TL_LOGIC_ENTITY_NAME };

typedef struct tl_ast_item {
  tl_item_kind kind;
  int line, col;
  const char *name;
  tl_fn *fn;         /* FN */
  tl_field *fields;  /* STRUCT */
  tl_variant *variants; /* ENUM */
  tl_fn *methods;    /* IMPL, TRAIT */
  tl_tparam *tparams; /* STRUCT, ENUM, IMPL: `struct Pair<A, B>`, `impl<T> Stack<T>` */
  const char *trait;  /* IMPL: `impl Shape for Circle` (name "Circle") */
  tl_type *self_type; /* IMPL: the type after `impl` (or after `for`) as written */
  tl_type *assoc;     /* IMPL, TRAIT: `type Output = V;` (name "Output", elems V; a trait's
                         `type Output;` has none), linked by next */
  tl_node *atom, *body; /* FACT, RULE, RELATION */
  tl_type *type;        /* CONST: the written type */
  tl_node *value;       /* CONST: the value, an expression of constants */
  bool is_static, is_mut; /* CONST */
  struct tl_program *module; /* MOD */
  int unit;          /* the file it is in: 0 the program's, 1.. its modules (lang.c) */
  struct tl_ast_item *next;
} tl_ast_item;

/* a file of the program: its path, its diagnostics, the `mod` item that brought it in
 * (NULL for the program's own file) and its text (modules: freed with them) */
typedef struct tl_unit {
  const char *path;
  tl_diag *diag;
  struct tl_ast_item *mod;
  char *src;
  tl_arena *strings; /* its lexer's arena: the text of its string literals and names,
                        which the tree points into (freed with the modules) */
} tl_unit;

typedef struct tl_program {
  tl_ast_item *items;
  /* items whose parse was given up, as far as they got (a name, some fields or
   * methods): the checker declares them so that what uses them is not an error too */
  tl_ast_item *broken;
  /* the files: unit 0 the program's, then its modules (module.c), whose items are
   * spliced in after their `mod` line; NULL/0 without modules */
  tl_unit *units;
  int nunits;
} tl_program;

/* the first node of n's subtree (n first, then its children: args, stmts, lhs, rhs,
 * cond, then, els, body, value) for which pred holds, or NULL. A pred that only
 * records what it sees and returns false visits every node. */
tl_node *tl_ast_find(tl_node *n, bool (*pred)(tl_node *n, void *arg), void *arg);
/* the length of a node list linked by next (arguments, items) */
int tl_ast_count(const tl_node *list);

#endif
