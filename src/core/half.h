/* half.h — the language's rounding to the 16-bit float formats, IEEE binary16 (f16)
 * and bfloat16 (bf16): to nearest with ties to even, overflow to infinity (Rust's
 * `as`), a value of either format held in a float, which holds all of them exactly.
 * One rounding for the whole project: these are the engine's (core/scalar.h, which
 * kernels, folding and the interpreter use). The checker (constants), the run time
 * and every compiled program (the prelude pastes scalar.h, then this) share them. */
#ifndef TL_CORE_HALF_H
#define TL_CORE_HALF_H

#include <stdint.h>

#include "core/scalar.h"

static inline float tl_round_f16(double x) { return tl_f16_to_f32(tl_f64_to_f16(x)); }
static inline float tl_round_bf16(double x) { return tl_bf16_to_f32(tl_f64_to_bf16(x)); }

/* an integer as a double rounded to odd (its dropped bits ORed into the last kept
 * one): rounding that again to 51 bits or fewer gives what rounding the integer once
 * would, where plain (double) could round twice to a wrong tie */
static inline double tl_u64_odd(uint64_t m) { return tl_int_to_f64_odd((tl_i64)m, 1); }
static inline double tl_i64_odd(int64_t v) { return tl_int_to_f64_odd(v, 0); }

#endif
