/* test_half_agree.c — the rounding to f16 and bf16 (core/scalar.h: bit manipulation
 * of the double; core/half.h, the language's, calls it) against a reference written
 * apart here: scaling by powers of two and one nearbyint. Ties to even, subnormals,
 * overflow to inf and integers past 2^53 (rounded to odd first) are where they could
 * part. The reference was the language's own rounding until the two were merged. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/half.h"
#include "core/scalar.h"
#include "test.h"

/* x rounded to a binary format of p significant bits whose normal numbers start at
 * 2^emin and whose largest finite value is max. Scaling by a power of two is exact, so
 * one nearbyint (ties to even, the default mode) is the only rounding: the quantum is
 * the place of x's last kept bit, and no finer than a subnormal's. */
static double ref_round_binary(double x, int p, int emin, double max) {
  if (x != x || x == 0 || isinf(x)) return x;
  int e;
  (void)frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
  int q = e - p > emin - p + 1 ? e - p : emin - p + 1;
  double r = ldexp(nearbyint(ldexp(x, -q)), q);
  return fabs(r) > max ? (x < 0 ? -INFINITY : INFINITY) : r;
}
static float ref_round_f16(double x) { return (float)ref_round_binary(x, 11, -14, 65504.0); }
static float ref_round_bf16(double x) { return (float)ref_round_binary(x, 8, -126, 0x1.fep127); }
/* an integer as a double rounded to odd, by frexp/ldexp */
static double ref_u64_odd(uint64_t m) {
  if (!(m >> 53)) return (double)m;
  int s = 11 - __builtin_clzll(m); /* bits past the 53 kept: 64 - 53 - leading zeros */
  return ldexp((double)((m >> s) | ((m & ((UINT64_C(1) << s) - 1)) != 0)), s);
}
static double ref_i64_odd(int64_t v) { return v < 0 ? -ref_u64_odd(0 - (uint64_t)v) : ref_u64_odd((uint64_t)v); }

static uint64_t half_rng(uint64_t *s) { /* splitmix64: a fixed stream */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int same_float(float a, float b) { return (a != a && b != b) || memcmp(&a, &b, sizeof a) == 0; }

/* x of every magnitude the formats see, and the midpoints between neighbours (ties) */
static double half_sample(uint64_t *s, int bf) {
  uint64_t r = half_rng(s);
  int e = (int)(r % (bf ? 280 : 60)) - (bf ? 140 : 30);
  double m = ldexp((double)(half_rng(s) >> 11), -53) + 1.0; /* [1, 2) */
  if (r & 0x100) { /* a tie: a neighbour's significand plus half its quantum */
    int p = bf ? 8 : 11;
    m = 1.0 + ldexp(floor(ldexp(m - 1.0, p - 1)) + 0.5, -(p - 1));
  }
  double x = ldexp(m, e);
  return r & 0x200 ? -x : x;
}

TEST(half_roundings_agree_on_doubles) {
  uint64_t s = 7;
  int bad16 = 0, bad16bf = 0;
  for (int i = 0; i < 200000; i++) {
    double x = half_sample(&s, 0), y = half_sample(&s, 1);
    bad16 += !same_float(ref_round_f16(x), tl_round_f16(x));
    bad16bf += !same_float(ref_round_bf16(y), tl_round_bf16(y));
  }
  const double edge[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 65504.0, 65519.99, 65520.0, 5.960464477539063e-8,
                         2.9802322387695312e-8, 2.98023223876953125e-8 * 1.0000001, 0x1.fep127, 0x1.ff8p127, 1e-45};
  for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
    bad16 += !same_float(ref_round_f16(edge[i]), tl_round_f16(edge[i]));
    bad16bf += !same_float(ref_round_bf16(edge[i]), tl_round_bf16(edge[i]));
  }
  CHECK_INT(bad16, 0);
  CHECK_INT(bad16bf, 0);
  /* the checks can fail: the two differ where one of them is wrong */
  CHECK(!same_float(ref_round_f16(2049.0), 2049.0f));
  CHECK_INT((int)tl_round_f16(2049.0), 2048); /* a tie goes to the even neighbour */
  CHECK_INT((int)tl_round_f16(2051.0), 2052);
}

TEST(half_roundings_agree_on_big_integers) {
  uint64_t s = 11;
  int bad = 0;
  for (int i = 0; i < 100000; i++) {
    uint64_t u = half_rng(&s) >> (half_rng(&s) % 40);
    int64_t v = (int64_t)half_rng(&s) >> (half_rng(&s) % 40);
    bad += ref_u64_odd(u) != tl_u64_odd(u);
    bad += ref_i64_odd(v) != tl_i64_odd(v);
    bad += !same_float(ref_round_bf16(ref_u64_odd(u)), tl_round_bf16(tl_u64_odd(u)));
  }
  CHECK_INT(bad, 0);
  /* 2^53 + 1 rounds to odd (2^53 + 2), not to even (2^53) */
  CHECK(tl_u64_odd((UINT64_C(1) << 53) + 1) == 9007199254740994.0);
  CHECK(ref_u64_odd((UINT64_C(1) << 53) + 1) == 9007199254740994.0);
}
