/* test_scalar_host.c — tier-1 kernels (libtcc) call the library's builds of
 * core/scalar.h's costly functions (runtime/scalar_host.c) and use plain selects for
 * tl_where/tl_max (scalar.h under __TINYC__). Both must give, bit for bit, what
 * libtcc's own build of the prelude gives, and what the library's inline versions
 * (constant folding, the interpreter) give: the three are compared on special values
 * (NaN payloads, signed zeros, infinities, subnormals, the saturation and overflow
 * bounds) and on a sweep of bit patterns. A few results are also checked against
 * values known by hand (IEEE and Rust's saturating `as`). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/scalar.h"
#include "runtime/compiler_internal.h"
#include "runtime/scalar_host.h"
#include "test.h"

/* the text every kernel starts with (build/gen, from scalar.h and kernel_prelude.h) */
static const char prelude[] =
#include "kernel_prelude.inc"
    ;

/* compiled by libtcc after the prelude, with the prelude's own definitions: a
 * tier-1 state defines TL_SCALAR_HOST, undone here */
static const char wrappers[] =
    "tl_i32 w_f32_to_i32(float x) { return tl_f32_to_i32(x); }\n"
    "tl_i32 w_f64_to_i32(double x) { return tl_f64_to_i32(x); }\n"
    "tl_i64 w_f32_to_i64(float x) { return tl_f32_to_i64(x); }\n"
    "tl_i64 w_f64_to_i64(double x) { return tl_f64_to_i64(x); }\n"
    "float w_expf(float x) { return tl_expf(x); }\n"
    "float w_erff(float x) { return tl_erff(x); }\n"
    "float w_uniform_f32(tl_u64 s, tl_u64 t, tl_i64 i) { return tl_uniform_f32(s, t, i); }\n"
    "double w_uniform_f64(tl_u64 s, tl_u64 t, tl_i64 i) { return tl_uniform_f64(s, t, i); }\n"
    "float w_where_f32(int c, float a, float b) { return tl_where_f32(c, a, b); }\n"
    "double w_where_f64(int c, double a, double b) { return tl_where_f64(c, a, b); }\n"
    "float w_max_f32(float a, float b) { return tl_max_f32(a, b); }\n"
    "double w_max_f64(double a, double b) { return tl_max_f64(a, b); }\n";

typedef tl_i32 (*f32_i32)(float);
typedef tl_i32 (*f64_i32)(double);
typedef tl_i64 (*f32_i64)(float);
typedef tl_i64 (*f64_i64)(double);
typedef float (*f32_f32)(float);
typedef float (*unif32)(tl_u64, tl_u64, tl_i64);
typedef double (*unif64)(tl_u64, tl_u64, tl_i64);
typedef float (*where32)(int, float, float);
typedef double (*where64)(int, double, double);
typedef float (*max32)(float, float);
typedef double (*max64)(double, double);

/* one implementation of each: libtcc's build of the prelude, or the host table's */
typedef struct {
  f32_i32 f32_to_i32;
  f64_i32 f64_to_i32;
  f32_i64 f32_to_i64;
  f64_i64 f64_to_i64;
  f32_f32 expf_, erff_;
  unif32 uniform_f32;
  unif64 uniform_f64;
} scalar_fns;

static const void *host_fn(const char *name) {
  size_t n;
  const tl_scalar_host_fn *t = tl_scalar_host_fns(&n);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(t[i].name, name)) return t[i].fn;
  return NULL;
}

/* a symbol as a function pointer (POSIX: they convert) */
#define SET(dst, ptr)                  \
  do {                                 \
    const void *p_ = (ptr);            \
    CHECK(p_ != NULL);                 \
    memcpy(&(dst), &p_, sizeof(dst)); \
  } while (0)

static void host_fns(scalar_fns *h) {
  SET(h->f32_to_i32, host_fn("tl_f32_to_i32"));
  SET(h->f64_to_i32, host_fn("tl_f64_to_i32"));
  SET(h->f32_to_i64, host_fn("tl_f32_to_i64"));
  SET(h->f64_to_i64, host_fn("tl_f64_to_i64"));
  SET(h->expf_, host_fn("tl_expf"));
  SET(h->erff_, host_fn("tl_erff"));
  SET(h->uniform_f32, host_fn("tl_uniform_f32"));
  SET(h->uniform_f64, host_fn("tl_uniform_f64"));
}

static uint32_t bits32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float f32_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint64_t bits64(double f) {
  uint64_t u;
  memcpy(&u, &f, 8);
  return u;
}
static double f64_of(uint64_t u) {
  double f;
  memcpy(&f, &u, 8);
  return f;
}

/* special f32 inputs: zeros, infinities, NaNs with payloads, subnormals, the bounds
 * of the saturating casts, of tl_expf's range and of tl_erff's two parts */
static const uint32_t special32[] = {
    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fc12345, 0xff812345,
    0x7fa00001, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x3f800000, 0xbf800000,
    0x4f000000, 0xcf000000, 0x4effffff, 0xceffffff, 0x5f000000, 0xdf000000, 0x5effffff, 0xdeffffff,
    0x42b17218, 0x42b17217, 0x42b20000, 0xc2d00000, 0xc2cff8a0, 0xc2ce8ed0, 0x42b00000, 0x3f666666,
    0x3f666667, 0xbf666666, 0x40800000, 0xc0800000, 0x407ae148, 0x7f7fffff, 0xff7fffff, 0x3eb33333,
};
static const uint64_t special64[] = {
    0x0000000000000000, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000,
    0x7ff8000000000000, 0xfff8000000000001, 0x7ff4000000000001, 0x0000000000000001,
    0x41e0000000000000, 0xc1e0000000000000, 0x41dfffffffffffff, 0xc1e0000000200000,
    0x43e0000000000000, 0xc3e0000000000000, 0x43dfffffffffffff, 0xc3dfffffffffffff,
    0x3ff8000000000000, 0xbff8000000000000, 0x7fefffffffffffff, 0xffefffffffffffff,
};

/* bit-for-bit comparison of two implementations on f32 input x; 1 when they differ */
static int differ32(const scalar_fns *a, const scalar_fns *b, float x, char *why, size_t n) {
  uint32_t ea = bits32(a->expf_(x)), eb = bits32(b->expf_(x));
  uint32_t ra = bits32(a->erff_(x)), rb = bits32(b->erff_(x));
  tl_i32 ia = a->f32_to_i32(x), ib = b->f32_to_i32(x);
  tl_i64 la = a->f32_to_i64(x), lb = b->f32_to_i64(x);
  if (ea != eb) snprintf(why, n, "tl_expf(0x%08x): 0x%08x vs 0x%08x", bits32(x), ea, eb);
  else if (ra != rb) snprintf(why, n, "tl_erff(0x%08x): 0x%08x vs 0x%08x", bits32(x), ra, rb);
  else if (ia != ib) snprintf(why, n, "tl_f32_to_i32(0x%08x): %d vs %d", bits32(x), ia, ib);
  else if (la != lb) snprintf(why, n, "tl_f32_to_i64(0x%08x): %lld vs %lld", bits32(x), la, lb);
  else return 0;
  return 1;
}

static int differ64(const scalar_fns *a, const scalar_fns *b, double x, char *why, size_t n) {
  tl_i32 ia = a->f64_to_i32(x), ib = b->f64_to_i32(x);
  tl_i64 la = a->f64_to_i64(x), lb = b->f64_to_i64(x);
  if (ia != ib) snprintf(why, n, "tl_f64_to_i32(0x%016llx): %d vs %d", (unsigned long long)bits64(x), ia, ib);
  else if (la != lb) snprintf(why, n, "tl_f64_to_i64(0x%016llx): %lld vs %lld", (unsigned long long)bits64(x), la, lb);
  else return 0;
  return 1;
}

/* the whole comparison of two implementations; the first difference in why */
static int compare_fns(const scalar_fns *a, const scalar_fns *b, char *why, size_t n) {
  for (size_t i = 0; i < sizeof special32 / sizeof special32[0]; i++)
    if (differ32(a, b, f32_of(special32[i]), why, n)) return 1;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 65521) /* a sweep over every exponent */
    if (differ32(a, b, f32_of((uint32_t)u), why, n)) return 1;
  for (size_t i = 0; i < sizeof special64 / sizeof special64[0]; i++)
    if (differ64(a, b, f64_of(special64[i]), why, n)) return 1;
  uint64_t r = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 20000; i++) {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    if (differ64(a, b, f64_of(r), why, n)) return 1;
  }
  for (tl_u64 seed = 0; seed < 4; seed++)
    for (tl_i64 i = 0; i < 2000; i += 7) {
      tl_u64 seed_w = seed * 0x123456789abcdefULL, stream = seed + 3;
      if (bits32(a->uniform_f32(seed_w, stream, i)) != bits32(b->uniform_f32(seed_w, stream, i)) ||
          bits64(a->uniform_f64(seed_w, stream, i)) != bits64(b->uniform_f64(seed_w, stream, i))) {
        snprintf(why, n, "tl_uniform(seed %llu, index %lld) differs", (unsigned long long)seed_w, (long long)i);
        return 1;
      }
    }
  return 0;
}

/* the library's inline versions (what constant folding and the interpreter run) */
static tl_i32 lib_f32_to_i32(float x) { return tl_f32_to_i32(x); }
static tl_i32 lib_f64_to_i32(double x) { return tl_f64_to_i32(x); }
static tl_i64 lib_f32_to_i64(float x) { return tl_f32_to_i64(x); }
static tl_i64 lib_f64_to_i64(double x) { return tl_f64_to_i64(x); }
static float lib_expf(float x) { return tl_expf(x); }
static float lib_erff(float x) { return tl_erff(x); }
static float lib_uniform_f32(tl_u64 s, tl_u64 t, tl_i64 i) { return tl_uniform_f32(s, t, i); }
static double lib_uniform_f64(tl_u64 s, tl_u64 t, tl_i64 i) { return tl_uniform_f64(s, t, i); }

/* libtcc's build of the prelude and the wrappers: the state (delete it under
 * tl_tcc_mutex), or NULL when this program has no libtcc */
static void *tcc_build_state(tl_compiler **cp, char **dirp) {
  tl_error err = {0};
  *dirp = tl_test_tmpdir();
  *cp = *dirp ? tl_compiler_create("tcc", NULL, *dirp, &err) : NULL;
  if (!*cp) {
    printf("  no libtcc in this program: nothing to compare\n");
    return NULL;
  }
  size_t np = strlen(prelude), nw = strlen(wrappers);
  static const char undef[] = "#undef TL_SCALAR_HOST\n";
  char *src = malloc(sizeof undef + np + nw);
  CHECK(src != NULL);
  if (!src) return NULL;
  memcpy(src, undef, sizeof undef - 1);
  memcpy(src + sizeof undef - 1, prelude, np);
  memcpy(src + sizeof undef - 1 + np, wrappers, nw + 1);
  pthread_mutex_lock(&tl_tcc_mutex);
  void *s = tl_compiler_tcc_state(*cp);
  int ok = s && (*cp)->tcc.compile_string(s, src) >= 0 && (*cp)->tcc.relocate(s, (void *)1) >= 0;
  if (!ok) printf("  libtcc: %s\n", (*cp)->log);
  CHECK(ok);
  if (!ok && s) (*cp)->tcc.delete_state(s);
  pthread_mutex_unlock(&tl_tcc_mutex);
  free(src);
  return ok ? s : NULL;
}

static void tcc_release(tl_compiler *c, void *s, char *dir) {
  if (s) {
    pthread_mutex_lock(&tl_tcc_mutex);
    c->tcc.delete_state(s);
    pthread_mutex_unlock(&tl_tcc_mutex);
  }
  tl_compiler_destroy(c);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* the prelude and wrappers compiled by libtcc, or NULL with the compiler and its
 * directory already released (no libtcc, or a failed build, which CHECK records) */
static void *tcc_build(tl_compiler **cp, char **dirp) {
  void *s = tcc_build_state(cp, dirp);
  if (!s) {
    if (*cp) tl_compiler_destroy(*cp);
    if (*dirp) tl_test_rm_tree(*dirp);
  }
  return s;
}

#define SYM(c, s, name) ((c)->tcc.get_symbol((s), (name)))

TEST(tier1_scalar_host_matches_tcc) {
  scalar_fns host, lib = {lib_f32_to_i32, lib_f64_to_i32, lib_f32_to_i64, lib_f64_to_i64,
                          lib_expf,       lib_erff,       lib_uniform_f32, lib_uniform_f64};
  host_fns(&host);
  char why[160];
  /* values known without the prelude */
  CHECK_INT(host.f32_to_i32(f32_of(0x7fc00000)), 0);
  CHECK_INT(host.f32_to_i32(3e9f), 2147483647);
  CHECK_INT(host.f32_to_i32(-3e9f), -2147483647 - 1);
  CHECK_INT(host.f64_to_i64(1e300), 9223372036854775807LL);
  CHECK_INT(host.f32_to_i64(-2.9f), -2);
  CHECK_INT(bits32(host.expf_(0.0f)), 0x3f800000);
  CHECK_INT(bits32(host.expf_(f32_of(0xff800000))), 0);
  CHECK_INT(bits32(host.expf_(f32_of(0x7f800000))), 0x7f800000);
  CHECK_INT(bits32(host.erff_(f32_of(0x7f800000))), 0x3f800000);
  CHECK_INT(bits32(host.erff_(f32_of(0xff800000))), 0xbf800000);
  CHECK_INT(bits32(host.erff_(-0.0f)), 0x80000000);
  CHECK(host.expf_(f32_of(0x7fc00000)) != host.expf_(f32_of(0x7fc00000))); /* NaN */
  CHECK_NEAR(host.expf_(1.0f), 2.718281828, 3e-7);
  CHECK_NEAR(host.erff_(0.5f), 0.520499878, 2e-7);
  float u = host.uniform_f32(42, 7, 3);
  CHECK(u >= 0.0f && u < 1.0f);
  /* the host build is the library's inline code */
  if (compare_fns(&host, &lib, why, sizeof why)) tl_test_fail(__FILE__, __LINE__, "host vs library: %s", why);
  tl_compiler *c;
  char *dir;
  void *s = tcc_build(&c, &dir);
  if (!s) return;
  scalar_fns tcc;
  SET(tcc.f32_to_i32, SYM(c, s, "w_f32_to_i32"));
  SET(tcc.f64_to_i32, SYM(c, s, "w_f64_to_i32"));
  SET(tcc.f32_to_i64, SYM(c, s, "w_f32_to_i64"));
  SET(tcc.f64_to_i64, SYM(c, s, "w_f64_to_i64"));
  SET(tcc.expf_, SYM(c, s, "w_expf"));
  SET(tcc.erff_, SYM(c, s, "w_erff"));
  SET(tcc.uniform_f32, SYM(c, s, "w_uniform_f32"));
  SET(tcc.uniform_f64, SYM(c, s, "w_uniform_f64"));
  if (compare_fns(&host, &tcc, why, sizeof why)) tl_test_fail(__FILE__, __LINE__, "host vs libtcc: %s", why);
  tcc_release(c, s, dir);
}

/* under tcc, tl_where and tl_max are ?: selects, not the bit blends cc vectorizes:
 * the same bits, NaN payloads and signed zeros included */
TEST(tier1_selects_match_blends) {
  tl_compiler *c;
  char *dir;
  void *s = tcc_build(&c, &dir);
  if (!s) return;
  where32 w32;
  where64 w64;
  max32 m32;
  max64 m64;
  SET(w32, SYM(c, s, "w_where_f32"));
  SET(w64, SYM(c, s, "w_where_f64"));
  SET(m32, SYM(c, s, "w_max_f32"));
  SET(m64, SYM(c, s, "w_max_f64"));
  size_t n = sizeof special32 / sizeof special32[0], n64 = sizeof special64 / sizeof special64[0];
  int bad = 0;
  for (size_t i = 0; i < n && !bad; i++)
    for (size_t j = 0; j < n && !bad; j++) {
      float a = f32_of(special32[i]), b = f32_of(special32[j]);
      double da = f64_of(special64[i % n64]), db = f64_of(special64[j % n64]);
      for (int k = -1; k <= 2 && !bad; k++) {
        bad = bits32(w32(k, a, b)) != bits32(tl_where_f32(k, a, b)) ||
              bits64(w64(k, da, db)) != bits64(tl_where_f64(k, da, db));
        if (bad) printf("  where(%d, 0x%08x, 0x%08x)\n", k, special32[i], special32[j]);
      }
      bad = bad || bits32(m32(a, b)) != bits32(tl_max_f32(a, b)) || bits64(m64(da, db)) != bits64(tl_max_f64(da, db));
      if (bad) printf("  max(0x%08x, 0x%08x)\n", special32[i], special32[j]);
    }
  CHECK_INT(bad, 0);
  /* the rule itself: a NaN in b gives NaN, a NaN in a gives b; where picks a's bits */
  CHECK_INT(bits32(m32(1.0f, f32_of(0x7fc12345))), 0x7fc12345);
  CHECK_INT(bits32(m32(f32_of(0x7fc12345), 1.0f)), 0x3f800000);
  CHECK_INT(bits32(m32(0.0f, -0.0f)), 0x80000000); /* 0 > -0 is false: b */
  CHECK_INT(bits32(w32(5, -0.0f, 1.0f)), 0x80000000);
  tcc_release(c, s, dir);
}
