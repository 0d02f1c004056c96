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
  switch (d) {
  case TL_F32: s.f = (double)(float)v; break;
  case TL_F64: s.f = v; break;
  case TL_F16: s.f = tl_f16_to_f32(tl_f64_to_f16(v)); break; /* rounded once, from the double */
  case TL_BF16: s.f = tl_bf16_to_f32(tl_f64_to_bf16(v)); break;
  case TL_BOOL: s.i = v != 0; break;
  case TL_I32: s.i = tl_f64_to_i32(v); break; /* saturating, NaN 0: the kernels' rule */
  case TL_I64: s.i = tl_f64_to_i64(v); break;
  case TL_U64: s.i = (int64_t)tl_f64_to_u64(v); break;
  default: s.i = tl_f64_to_int(v, tl_dtype_min(d), tl_dtype_max(d)); break;
  }
  return s;
}

/* an integer value wrapped to d: the narrow ones sign- or zero-extended, u64 as its
 * bits (the tl_value convention, core/dtype.h) */
static tl_value wrap_int(tl_dtype d, int64_t v) {
  tl_value s;
  switch (d) {
  case TL_BOOL: s.i = v != 0; break;
  case TL_I8: s.i = (int8_t)(uint8_t)(uint64_t)v; break;
  case TL_U8: s.i = (uint8_t)(uint64_t)v; break;
  case TL_I16: s.i = (int16_t)(uint16_t)(uint64_t)v; break;
  case TL_U16: s.i = (uint16_t)(uint64_t)v; break;
  case TL_I32: s.i = (int32_t)(uint32_t)(uint64_t)v; break;
  case TL_U32: s.i = (uint32_t)(uint64_t)v; break;
  default: s.i = v; break;
  }
  return s;
}

/* an integer's value as a double: u64 from its bits */
static double int_value(tl_dtype d, int64_t v) { return d == TL_U64 ? (double)(uint64_t)v : (double)v; }

static tl_value cast(tl_dtype out, tl_dtype in, tl_value a) {
  if (tl_dtype_is_float(in)) return tl_value_from_double(out, a.f);
  /* from an integer as C converts it in a kernel: wrapping to a narrower integer,
   * rounded once to a float (through double, an i64 to f32 could round twice) */
  if (out == TL_F32) return (tl_value){.f = in == TL_U64 ? (double)(float)(uint64_t)a.i : (double)(float)a.i};
  if (out == TL_F64) return (tl_value){.f = int_value(in, a.i)};
  if (tl_dtype_is_float(out)) return tl_value_from_double(out, tl_int_to_f64_odd(a.i, in == TL_U64)); /* f16, bf16 */
  return wrap_int(out, a.i);
}

/* u64's ops whose answer depends on reading the bits unsigned */
static bool u64_apply(int op, tl_value a, tl_value b, int64_t *r) {
  uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
  switch (op) {
  case TL_OP_CMPLT: *r = x < y; return true;
  case TL_OP_CMPLE: *r = x <= y; return true;
  case TL_OP_CMPGT: *r = x > y; return true;
  case TL_OP_CMPGE: *r = x >= y; return true;
  case TL_OP_MAX: *r = (int64_t)(x > y ? x : y); return true;
  case TL_OP_MIN: *r = (int64_t)(x < y ? x : y); return true;
  case TL_OP_IDIV: case TL_OP_DIV: *r = (int64_t)tl_idiv_u64(x, y); return true;
  case TL_OP_MOD: *r = (int64_t)tl_mod_u64(x, y); return true;
  case TL_OP_ABS: case TL_OP_RELU: *r = a.i; return true;
  default: return false;
  }
}

tl_value tl_value_apply(int op, tl_dtype out, tl_dtype in, tl_value a, tl_value b, tl_value c) {
  if (op == TL_OP_CAST) return cast(out, in, a);
  if (op == TL_OP_WHERE) return a.i ? b : c;
  if (op < 0 || op >= TL_NOPS) return (tl_value){0};
  const tl_op_row *r = &tl_optab[op];
  int64_t u;
  if (in == TL_U64 && u64_apply(op, a, b, &u)) return wrap_int(out, u);
  if (!tl_dtype_is_float(in)) return wrap_int(out, r->eval_i(a.i, b.i));
  double v = r->eval_f(out, a.f, b.f, c.f);
  return tl_dtype_is_float(out) ? tl_value_from_double(out, v) : wrap_int(out, (int64_t)v); /* comparisons: 0 or 1 */
}
