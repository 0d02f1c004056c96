/* half.h — rounding to the 16-bit float formats, IEEE binary16 (f16) and bfloat16
 * (bf16), to nearest with ties to even, overflow to infinity (Rust's `as`). Header
 * only: the language's checker (constants), its run time and every compiled program
 * (the prelude pastes it) share this one source. A value of either format is held in
 * a float, which holds all of them exactly. */
#ifndef TL_CORE_HALF_H
#define TL_CORE_HALF_H

#include <math.h>
#include <stdint.h>

/* x rounded to a binary format of p significant bits whose normal numbers start at
 * 2^emin and whose largest finite value is max. Scaling by a power of two is exact, so
 * one nearbyint (ties to even, the default mode) is the only rounding: the quantum is
 * the place of x's last kept bit, and no finer than a subnormal's. */
static inline double tl_round_binary(double x, int p, int emin, double max) {
  if (x != x || x == 0 || isinf(x)) return x;
  int e;
  (void)frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
  int q = e - p > emin - p + 1 ? e - p : emin - p + 1;
  double r = ldexp(nearbyint(ldexp(x, -q)), q);
  return fabs(r) > max ? (x < 0 ? -INFINITY : INFINITY) : r;
}
static inline float tl_round_f16(double x) { return (float)tl_round_binary(x, 11, -14, 65504.0); }
static inline float tl_round_bf16(double x) { return (float)tl_round_binary(x, 8, -126, 0x1.fep127); }

/* an integer as a double rounded to odd (its dropped bits ORed into the last kept
 * one): rounding that again to 51 bits or fewer gives what rounding the integer once
 * would, where plain (double) could round twice to a wrong tie */
static inline double tl_u64_odd(uint64_t m) {
  if (!(m >> 53)) return (double)m;
  int s = 11 - __builtin_clzll(m); /* bits past the 53 kept: 64 - 53 - leading zeros */
  return ldexp((double)((m >> s) | ((m & ((UINT64_C(1) << s) - 1)) != 0)), s);
}
static inline double tl_i64_odd(int64_t v) { return v < 0 ? -tl_u64_odd(0 - (uint64_t)v) : tl_u64_odd((uint64_t)v); }

#endif
