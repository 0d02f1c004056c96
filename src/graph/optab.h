/* optab.h — the op table: each op of the IR is one row of optab.def (name, kind, flags,
 * scalar semantics, C text, derivative), read by the rewrite rules and constant
 * folding, the interpreter, the renderer and autograd instead of a switch each. */
#ifndef TL_GRAPH_OPTAB_H
#define TL_GRAPH_OPTAB_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

typedef enum {
#define OP(name, ...) TL_OP_##name,
#include "graph/optab.def"
#undef OP
  TL_NOPS
} tl_op;

enum { TL_OPF_FUSED = 1, TL_OPF_BOOL = 2 };
/* the values an op's derivative reads (what autograd saves when it records the op) */
enum { TL_READS_IN0 = 1, TL_READS_IN1 = 2, TL_READS_IN2 = 4, TL_READS_OUT = 8 };

/* A scalar: a double, except integers and bool, which travel exactly as int64. */
typedef union {
  double f;
  int64_t i;
} tl_value;

typedef struct {
  const char *name;
  char kind;     /* 'L' 'U' 'B' 'T' 'R' 'V' 'X' 'S' 'K' (optab.def) */
  uint8_t flags; /* TL_OPF_* */
  uint8_t reads; /* TL_READS_*: what its derivative reads */
  uint8_t grads; /* bit i: a gradient flows to operand i */
  double (*eval_f)(tl_dtype out, double a, double b, double c); /* float operands */
  int64_t (*eval_i)(int64_t a, int64_t b);                      /* integer or bool operands */
  const char *c[3]; /* C for an f32, an f64, an integer or bool result (NULL: none) */
} tl_op_row;

extern const tl_op_row tl_optab[TL_NOPS];

const char *tl_op_name(int op);
char tl_op_kind(int op);
int tl_op_arity(int op); /* elementwise ops: 1, 2, 3; others 0 */
bool tl_op_is_fused(int op);
bool tl_op_is_elementwise(int op); /* U, B, T */

/* The scalar semantics of every elementwise op (the rows'), shared by constant folding
 * and the interpreter; `in` is the operands' dtype (WHERE: its values'). */
tl_value tl_value_apply(int op, tl_dtype out, tl_dtype in, tl_value a, tl_value b, tl_value c);
tl_value tl_value_from_double(tl_dtype d, double v);

#endif
