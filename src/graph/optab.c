/* optab.c — the op table's rows (optab.def) as data: names, kinds, flags, the scalar
 * semantics as functions, the C text, and what each derivative reads, worked out from
 * the derivative itself, so a record can never save less than its rule reads. */
#include "graph/optab.h"

#include <math.h>
#include <stddef.h>

#include "core/scalar.h"

/* integer arithmetic wraps, as the kernels' (two's complement) */
static inline int64_t wrapping_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t wrapping_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t wrapping_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static inline int64_t wrapping_neg(int64_t a) { return (int64_t)(0 - (uint64_t)a); }

/* ---- the scalar semantics of each row, as a pair of functions ---- */
#define OP(name, kind, flags, fsem, isem, ...)                                     \
  static double eval_f_##name(tl_dtype out, double a, double b, double c) {        \
    (void)out, (void)a, (void)b, (void)c;                                          \
    return (fsem);                                                                 \
  }                                                                                \
  static int64_t eval_i_##name(int64_t a, int64_t b) {                             \
    (void)a, (void)b;                                                              \
    return (isem);                                                                 \
  }
#include "graph/optab.def"
#undef OP

/* ---- what a derivative reads: its expression, read as a mask of the values it names
 * (G: bit 4, every derivative is linear in the output's gradient) ---- */
#define G 16
#define A TL_READS_IN0
#define B TL_READS_IN1
#define C TL_READS_IN0
#define OUT TL_READS_OUT
#define K(v) 0
#define NONE 0
#define NEG(x) (x)
#define EXP(x) (x)
#define LOG(x) (x)
#define SIN(x) (x)
#define COS(x) (x)
#define TANH(x) (x)
#define ERF(x) (x)
#define ADD(x, y) ((x) | (y))
#define SUB(x, y) ((x) | (y))
#define MUL(x, y) ((x) | (y))
#define DIV(x, y) ((x) | (y))
#define POW(x, y) ((x) | (y))
#define CMPGT(x, y) ((x) | (y))
#define CMPLT(x, y) ((x) | (y))
#define WHERE(x, y, z) ((x) | (y) | (z))
#define FLOWS(d, i) (((d) >> 4 & 1) << (i))

const tl_op_row tl_optab[TL_NOPS] = {
#define OP(name, kind, flags, fsem, isem, c32, c64, cint, d0, d1, d2)                             \
  [TL_OP_##name] = {#name, kind, flags, ((d0) | (d1) | (d2)) & 15, FLOWS(d0, 0) | FLOWS(d1, 1) | FLOWS(d2, 2), \
                    eval_f_##name, eval_i_##name, {c32, c64, cint}},
#include "graph/optab.def"
#undef OP
};

#include "graph/optab_undef.h"
#undef FLOWS

const char *tl_op_name(int op) { return op >= 0 && op < TL_NOPS ? tl_optab[op].name : "?"; }
char tl_op_kind(int op) { return op >= 0 && op < TL_NOPS ? tl_optab[op].kind : '?'; }
bool tl_op_is_fused(int op) { return op >= 0 && op < TL_NOPS && (tl_optab[op].flags & TL_OPF_FUSED); }
bool tl_op_is_elementwise(int op) {
  char k = tl_op_kind(op);
  return k == 'U' || k == 'B' || k == 'T';
}
int tl_op_arity(int op) {
  char k = tl_op_kind(op);
  return k == 'U' ? 1 : k == 'B' ? 2 : k == 'T' ? 3 : 0;
}

/* ---- scalar semantics ---------------------------------------------------------- */
tl_value tl_value_from_double(tl_dtype d, double v) {
  tl_value s;
  if (tl_dtype_is_float(d)) s.f = d == TL_F32 ? (double)(float)v : v;
  else if (d == TL_BOOL) s.i = v != 0;
  else if (d == TL_I32) s.i = tl_f64_to_i32(v); /* saturating, NaN 0: the kernels' rule */
  else s.i = tl_f64_to_i64(v);
  return s;
}

static tl_value wrap_int(tl_dtype d, int64_t v) {
  tl_value s;
  s.i = d == TL_I32 ? (int32_t)(uint32_t)(uint64_t)v : d == TL_BOOL ? (v != 0) : v;
  return s;
}

static tl_value round_float(tl_dtype d, double v) {
  tl_value s;
  s.f = d == TL_F32 ? (double)(float)v : v;
  return s;
}

static tl_value cast(tl_dtype out, tl_dtype in, tl_value a) {
  if (tl_dtype_is_float(in)) return tl_value_from_double(out, a.f);
  /* from an integer as C converts it in a kernel: wrapping to a narrower integer,
   * rounded once to a float (through double, an i64 to f32 could round twice) */
  if (tl_dtype_is_float(out)) return (tl_value){.f = out == TL_F32 ? (double)(float)a.i : (double)a.i};
  return wrap_int(out, a.i);
}

tl_value tl_value_apply(int op, tl_dtype out, tl_dtype in, tl_value a, tl_value b, tl_value c) {
  if (op == TL_OP_CAST) return cast(out, in, a);
  if (op == TL_OP_WHERE) return a.i ? b : c;
  if (op < 0 || op >= TL_NOPS) return (tl_value){0};
  const tl_op_row *r = &tl_optab[op];
  if (!tl_dtype_is_float(in)) return wrap_int(out, r->eval_i(a.i, b.i));
  double v = r->eval_f(out, a.f, b.f, c.f);
  return tl_dtype_is_float(out) ? round_float(out, v) : wrap_int(out, (int64_t)v); /* comparisons: 0 or 1 */
}
