/* test_rt.c — the run-time library of compiled programs (src/lang/rt/rt.h): run-time
 * errors and their exact text, counted objects and copy-on-write, strings, formatting,
 * tensor element access, slices and stores. Every test ends with no live object. */
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>

#include "lang/rt/rt.h"
#include "lang/rt/rt_ops.h"
#include "lang/rt/rt_vec.h"
#include "test.h"

/* A run state whose errors come back to the test: the statement must fail with
 * exactly msg. The jmp_buf lives in this block, so each use has its own. */
#define CHECK_FAILS(R, stmt, msg)                                                    \
  do {                                                                               \
    jmp_buf jb_;                                                                     \
    jmp_buf *prev_ = (R)->on_error;                                                  \
    (R)->on_error = &jb_;                                                            \
    if (setjmp(jb_) == 0) {                                                          \
      stmt;                                                                          \
      tl_test_fail(__FILE__, __LINE__, "no run-time error from %s", #stmt);          \
    } else {                                                                         \
      CHECK_STR((R)->error, (msg));                                                  \
    }                                                                                \
    (R)->on_error = prev_;                                                           \
  } while (0)

static jmp_buf unexpected;

/* a context and a run state; an error nobody expected fails the test at the end */
static void rt_open(tlrt *R) {
  tlrt_init(R, tl_init(), "t.tl", NULL);
  R->on_error = &unexpected;
}

#define RT_BEGIN(R)                                                                  \
  tlrt R##_s, *R = &R##_s;                                                           \
  rt_open(R);                                                                        \
  if (setjmp(unexpected)) {                                                          \
    tl_test_fail(__FILE__, __LINE__, "unexpected run-time error: %s", R->error);     \
    tlrt_free_all(R);                                                                \
    tl_shutdown(R->ctx);                                                             \
    return;                                                                          \
  }

static void rt_close(tlrt *R, const char *file, int line) {
  if (R->stats.objects_live != 0)
    tl_test_fail(file, line, "%llu object(s) live at the end", (unsigned long long)R->stats.objects_live);
  if (R->stats.retains != R->stats.releases)
    tl_test_fail(file, line, "object retains %llu != releases %llu", (unsigned long long)R->stats.retains,
                 (unsigned long long)R->stats.releases);
  tlrt_free_all(R);
  tl_test_shutdown(R->ctx, file, line);
}
#define RT_END(R) rt_close(R, __FILE__, __LINE__)

static tl_tensor *mat(tlrt *R, tl_dtype dt, int64_t rows, int64_t cols) { /* 0, 1, 2, ... */
  double v[64];
  for (int i = 0; i < rows * cols; i++) v[i] = i;
  return tlrt_from_f64(R, dt, 2, (int64_t[]){rows, cols}, v);
}

static void check_values(tl_tensor *t, int n, const double *want) {
  double got[64];
  tl_tensor *d = tl_cast(t, TL_F64);
  CHECK_INT(tl_numel(t), n);
  CHECK_INT(tl_to_host(d, got, sizeof(double) * (size_t)n), TL_OK);
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) tl_test_fail(__FILE__, __LINE__, "element %d is %g, expected %g", i, got[i], want[i]);
  tl_release(d);
}
#define CHECK_VALUES(t, ...)                                                         \
  check_values((t), (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double)), (double[]){__VA_ARGS__})

/* ---- errors -------------------------------------------------------------------------- */
TEST(tlrt_fail_jumps_with_the_located_message) {
  RT_BEGIN(R);
  CHECK_FAILS(R, tlrt_fail(R, 3, 7, "bad value %d", 5), "t.tl:3:7: runtime error: bad value 5");
  /* the checked integer division compiled programs inline (rt_ops.h) */
  CHECK_FAILS(R, tl__div64(R, 1, 0, 10, 2), "t.tl:10:2: runtime error: integer division by zero");
  CHECK_FAILS(R, tl__mod64(R, 1, 0, 11, 4), "t.tl:11:4: runtime error: integer remainder by zero");
  CHECK_INT(tl__div64(R, -7, 2, 1, 1), -3); /* toward zero, like the engine */
  CHECK_INT(tl__mod64(R, -7, 3, 1, 1), -1);
  CHECK(tl__div64(R, INT64_MIN, -1, 1, 1) == INT64_MIN);
  CHECK_INT(tl__mod64(R, INT64_MIN, -1, 1, 1), 0);
  RT_END(R);
}

TEST(tlrt_check_carries_and_clears_the_engine_message) {
  RT_BEGIN(R);
  tl_tensor *t = mat(R, TL_F32, 2, 3);
  CHECK(tlrt_check(R, t, 1, 1) == t);
  CHECK_FAILS(R, tlrt_check(R, tl_reshape(t, 1, (int64_t[]){5}), 4, 9),
              "t.tl:4:9: runtime error: reshape: cannot reshape 6 elements into a shape of 5 elements");
  CHECK_INT(tl_last_status(R->ctx), TL_OK);
  CHECK_FAILS(R, tlrt_check_status(R, tl_to_host(t, NULL, 3), 2, 2),
              "t.tl:2:2: runtime error: to_host: destination has 3 bytes, the tensor needs 24");
  tlrt_check_status(R, TL_OK, 1, 1);
  RT_END(R);
}

/* ---- objects ------------------------------------------------------------------------- */
typedef struct {
  tlrt_obj h;
  tlrt_str *name;
  int64_t n;
} pair;

static int drops;
static void pair_drop(tlrt *R, tlrt_obj *o) {
  drops++;
  tlrt_release(R, ((pair *)o)->name);
}
static void pair_retain_fields(tlrt *R, void *o) { tlrt_retain(R, ((pair *)o)->name); }

TEST(tlrt_objects_count_and_drop_at_zero) {
  RT_BEGIN(R);
  drops = 0;
  pair *p = tlrt_obj_new(R, sizeof *p, pair_drop);
  p->name = tlrt_str_new(R, "x", -1);
  CHECK_INT(R->stats.objects_live, 2);
  CHECK(tlrt_retain(R, p) == p);
  CHECK_INT(p->h.rc, 2);
  tlrt_release(R, p);
  CHECK_INT(drops, 0);
  tlrt_release(R, p);
  CHECK_INT(drops, 1);
  CHECK_INT(R->stats.objects_created, 2);
  CHECK_INT(R->stats.objects_freed, 2);
  CHECK_INT(R->stats.retains, 3); /* two creations and one retain */
  CHECK_INT(R->stats.releases, 3);
  CHECK(tlrt_retain(R, NULL) == NULL);
  tlrt_release(R, NULL);
  RT_END(R);
}

TEST(tlrt_free_all_frees_without_drop) {
  RT_BEGIN(R);
  drops = 0;
  for (int i = 0; i < 3; i++) {
    pair *p = tlrt_obj_new(R, sizeof *p, pair_drop);
    p->name = tlrt_str_new(R, "half-built", -1);
  }
  CHECK_INT(R->stats.objects_live, 6);
  tlrt_fmt_begin(R);
  tlrt_fmt_text(R, "pending", 7);
  tlrt_free_all(R);
  CHECK_INT(drops, 0);
  CHECK_INT(R->stats.objects_live, 0);
  CHECK(R->objs.next == &R->objs && R->objs.prev == &R->objs);
  CHECK(R->fmt == NULL);
  R->stats.releases = R->stats.retains; /* freed, not released */
  RT_END(R);
}

TEST(tlrt_make_unique_copies_only_a_shared_object) {
  RT_BEGIN(R);
  drops = 0;
  pair *a = tlrt_obj_new(R, sizeof *a, pair_drop);
  a->name = tlrt_str_new(R, "a", 1);
  a->n = 1;
  void *p = a;
  tlrt_make_unique(R, &p, sizeof *a, pair_retain_fields);
  CHECK(p == a);
  CHECK_INT(R->stats.cow_clones, 0);
  pair *b = tlrt_retain(R, a); /* let b = a */
  p = b;
  tlrt_make_unique(R, &p, sizeof *a, pair_retain_fields);
  b = p;
  CHECK(b != a);
  CHECK_INT(R->stats.cow_clones, 1);
  CHECK_INT(a->h.rc, 1);
  CHECK_INT(b->h.rc, 1);
  CHECK(b->name == a->name);
  CHECK_INT(a->name->h.rc, 2);
  b->n = 2; /* the write a must not see */
  CHECK_INT(a->n, 1);
  CHECK_INT(R->stats.objects_live, 3);
  tlrt_release(R, a);
  CHECK_INT(b->name->h.rc, 1);
  tlrt_release(R, b);
  CHECK_INT(drops, 2);
  RT_END(R);
}

/* ---- strings ------------------------------------------------------------------------- */
TEST(tlrt_strings_concat_compare) {
  RT_BEGIN(R);
  tlrt_str *a = tlrt_str_new(R, "tensor", -1), *b = tlrt_str_new(R, " logic", 6);
  tlrt_str *c = tlrt_str_concat(R, a, b, 1, 1), *d = tlrt_str_new(R, "tensor logic", -1);
  CHECK_STR(c->data, "tensor logic");
  CHECK_INT(c->len, 12);
  CHECK(tlrt_str_eq(c, d));
  CHECK(!tlrt_str_eq(a, c));
  CHECK_INT(tlrt_str_cmp(a, c), -1); /* a prefix first */
  CHECK_INT(tlrt_str_cmp(c, a), 1);
  CHECK_INT(tlrt_str_cmp(c, d), 0);
  CHECK_INT(tlrt_str_cmp(b, a), -1); /* ' ' < 't' */
  tlrt_str *z = tlrt_str_new(R, "a\0b", 3), *z2 = tlrt_str_new(R, "a\0c", 3);
  CHECK_INT(z->len, 3);
  CHECK(!tlrt_str_eq(z, z2));
  CHECK_INT(tlrt_str_cmp(z, z2), -1);
  tlrt_str *e = tlrt_str_new(R, "", 0), *f = tlrt_str_concat(R, e, e, 1, 1);
  CHECK_INT(f->len, 0);
  CHECK_STR(f->data, "");
  tlrt_str *all[] = {a, b, c, d, z, z2, e, f};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) tlrt_release(R, all[i]);
  RT_END(R);
}

/* a Vec, HashMap or String that cannot be allocated is an error at the program's place
 * that says what asked and why, before any memory is asked for (issue 22) */
TEST(tlrt_vec_and_string_allocation_errors_are_located) {
  RT_BEGIN(R);
  CHECK_FAILS(R, tlrt_vec_new(R, 8, TLRT_EK_PLAIN, -3, "vec![x; n]", 4, 19),
              "t.tl:4:19: runtime error: vec![x; n]: length -3 is negative");
  CHECK_FAILS(R, tlrt_vec_new(R, 4, TLRT_EK_PLAIN, -1, "Vec::with_capacity", 2, 7),
              "t.tl:2:7: runtime error: Vec::with_capacity: capacity -1 is negative");
  CHECK_FAILS(R, tlrt_vec_new(R, 8, TLRT_EK_PLAIN, (int64_t)1 << 37 | 1, "vec![x; n]", 5, 3),
              "t.tl:5:3: runtime error: vec![x; n]: 137438953473 elements of 8 bytes are more than a Vec or HashMap may "
              "hold, 2^40 bytes (1099511627776)");
  CHECK_INT(R->stats.objects_live, 0); /* the check comes before the object */
  tlrt_vec *v = tlrt_vec_new(R, 16, TLRT_EK_PLAIN, 0, "Vec::new", 1, 1);
  CHECK_FAILS(R, tlrt_vec_grow(R, v, INT64_MAX, 9, 2),
              "t.tl:9:2: runtime error: a Vec growing: 9223372036854775807 elements of 16 bytes are more than a Vec or "
              "HashMap may hold, 2^40 bytes (1099511627776)");
  CHECK_INT(v->cap, 0); /* unchanged by the failed growth */
  tlrt_release(R, v);
  /* Strings: a join longer than 2^40 bytes (the lengths made so, never read) */
  tlrt_str *a = tlrt_str_new(R, "ab", 2);
  int64_t real = a->len;
  a->len = (int64_t)1 << 39 | 1;
  CHECK_FAILS(R, tlrt_str_concat(R, a, a, 3, 14),
              "t.tl:3:14: runtime error: joining Strings of 549755813889 and 549755813889 bytes: the most a String may "
              "hold is 2^40 bytes (1099511627776)");
  a->len = real;
  tlrt_release(R, a);
  RT_END(R);
}

/* ---- formatting ---------------------------------------------------------------------- */
static const char *f64s(tlrt *R, double v, int prec) {
  tlrt_fmt_begin(R);
  tlrt_fmt_f64(R, v, prec);
  return R->fmt;
}
static const char *f32s(tlrt *R, float v, int prec) {
  tlrt_fmt_begin(R);
  tlrt_fmt_f32(R, v, prec);
  return R->fmt;
}

TEST(tlrt_fmt_f64_shortest_round_trip) {
  RT_BEGIN(R);
  static const struct {
    double v;
    const char *s;
  } cases[] = {
      {1.0, "1.0"},
      {0.1, "0.1"},
      {0.30000000000000004, "0.30000000000000004"},
      {2.5, "2.5"},
      {-3.0, "-3.0"},
      {100000000.0, "100000000.0"},
      {1e-7, "1e-07"},
      {1e-5, "1e-05"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {1e16, "1e+16"},
      {9999999999999998.0, "9999999999999998.0"},
      {1.5e300, "1.5e+300"},
      {-2.5e-10, "-2.5e-10"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {123.456, "123.456"},
      {1.0 / 3.0, "0.3333333333333333"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {12345678.9, "12345678.9"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) CHECK_STR(f64s(R, cases[i].v, -1), cases[i].s);
  CHECK_STR(f64s(R, 0.1 + 0.2, -1), "0.30000000000000004");
  CHECK_STR(f64s(R, NAN, -1), "NaN");
  CHECK_STR(f64s(R, -NAN, -1), "NaN");
  CHECK_STR(f64s(R, INFINITY, -1), "inf");
  CHECK_STR(f64s(R, -INFINITY, -1), "-inf");
  CHECK_STR(f64s(R, 3.14159265, 3), "3.142");
  CHECK_STR(f64s(R, 2.5, 0), "2");
  CHECK_STR(f64s(R, -1.0, 2), "-1.00");
  CHECK_STR(f64s(R, INFINITY, 2), "inf");
  RT_END(R);
}

TEST(tlrt_fmt_f32_shortest_as_a_float) {
  RT_BEGIN(R);
  CHECK_STR(f32s(R, 0.1f, -1), "0.1");
  CHECK_STR(f32s(R, 1.0f, -1), "1.0");
  CHECK_STR(f32s(R, 1e-7f, -1), "1e-07");
  CHECK_STR(f32s(R, 1.0f / 3.0f, -1), "0.33333334");
  CHECK_STR(f32s(R, 0.1f + 0.2f, -1), "0.3");
  CHECK_STR(f32s(R, 16777216.0f, -1), "16777216.0");
  CHECK_STR(f32s(R, 3.4028235e38f, -1), "3.4028235e+38");
  CHECK_STR(f32s(R, 1e16f, -1), "1e+16");
  CHECK_STR(f32s(R, -2.5f, -1), "-2.5");
  CHECK_STR(f32s(R, NAN, -1), "NaN");
  CHECK_STR(f32s(R, -INFINITY, -1), "-inf");
  CHECK_STR(f32s(R, 3.14159265f, 3), "3.142");
  RT_END(R);
}

TEST(tlrt_fmt_scalars_text_and_print) {
  RT_BEGIN(R);
  char *out = NULL;
  size_t len = 0;
  R->out = open_memstream(&out, &len);
  tlrt_fmt_begin(R);
  tlrt_fmt_text(R, "n=", 2);
  tlrt_fmt_i64(R, -42, 3); /* prec ignored */
  tlrt_fmt_text(R, " ", 1);
  tlrt_fmt_i64(R, INT64_MIN, -1);
  tlrt_fmt_text(R, " ", 1);
  tlrt_fmt_bool(R, true);
  tlrt_fmt_bool(R, false);
  tlrt_fmt_text(R, " ", 1);
  tlrt_fmt_char(R, 'a');
  tlrt_fmt_char(R, 0xE9);    /* é */
  tlrt_fmt_char(R, 0x20AC);  /* € */
  tlrt_fmt_char(R, 0x1F600); /* an emoji */
  tlrt_fmt_char(R, 0xD800);  /* a surrogate: U+FFFD */
  CHECK_STR(R->fmt, "n=-42 -9223372036854775808 truefalse a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xEF\xBF\xBD");
  tlrt_fmt_print(R, true);
  tlrt_fmt_begin(R);
  tlrt_fmt_f64(R, 1.5, -1);
  tlrt_fmt_print(R, false);
  tlrt_fmt_begin(R);
  tlrt_fmt_print(R, true);
  fclose(R->out);
  CHECK_STR(out, "n=-42 -9223372036854775808 truefalse a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xEF\xBF\xBD\n1.5\n");
  free(out);
  /* take: the text as a String; a long one grows the buffer */
  tlrt_str *s = tlrt_str_new(R, "x", 1);
  tlrt_fmt_begin(R);
  for (int i = 0; i < 1000; i++) tlrt_fmt_str(R, s);
  tlrt_str *t = tlrt_fmt_take(R);
  CHECK_INT(t->len, 1000);
  CHECK_INT(t->data[999], 'x');
  CHECK_INT(t->data[1000], 0);
  tlrt_release(R, s);
  tlrt_release(R, t);
  RT_END(R);
}

/* `{:?}` of strings and chars, Rust's escape_debug (issue 22): the escapes, the quote of
 * each kind, \u{hex} for controls and invisible characters, other characters as they
 * are; bytes that are not UTF-8 (a file's text) as \xNN; dbg false writes them plain */
TEST(tlrt_fmt_debug_escapes_strings_and_chars) {
  RT_BEGIN(R);
  static const char text[] = "a\"b'\\\t\r\n\0\x1b\x7f\xC2\x85\xC2\xA0\xE2\x80\x8B\xC3\xA9\xF0\x9F\x98\x80";
  tlrt_str *s = tlrt_str_new(R, text, (int64_t)sizeof text - 1);
  tlrt_fmt_begin(R);
  tlrt_fmt_str_as(R, s, true);
  CHECK_STR(R->fmt, "\"a\\\"b'\\\\\\t\\r\\n\\0\\u{1b}\\u{7f}\\u{85}\\u{a0}\\u{200b}\xC3\xA9\xF0\x9F\x98\x80\"");
  tlrt_fmt_begin(R);
  tlrt_fmt_str_as(R, s, false);
  CHECK_INT((long long)R->fmt_len, (long long)sizeof text - 1);
  CHECK(memcmp(R->fmt, text, sizeof text - 1) == 0);
  tlrt_release(R, s);
  /* a stray continuation byte, a cut sequence, an overlong '/', a surrogate, 0xFF */
  static const char bad[] = "x\x80y\xE2\x82z\xC0\xAF\xED\xA0\x80\xFF";
  s = tlrt_str_new(R, bad, (int64_t)sizeof bad - 1);
  tlrt_fmt_begin(R);
  tlrt_fmt_str_as(R, s, true);
  CHECK_STR(R->fmt, "\"x\\x80y\\xe2\\x82z\\xc0\\xaf\\xed\\xa0\\x80\\xff\"");
  tlrt_release(R, s);
  tlrt_fmt_begin(R);
  const uint32_t cs[] = {'a', '\'', '"', '\n', 0, 0x1F, 0xE9, 0x2028, 0x1F600};
  for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) tlrt_fmt_char_as(R, cs[i], true);
  CHECK_STR(R->fmt, "'a''\\'''\"''\\n''\\0''\\u{1f}''\xC3\xA9''\\u{2028}''\xF0\x9F\x98\x80'");
  tlrt_fmt_begin(R);
  tlrt_fmt_char_as(R, '\n', false);
  CHECK_STR(R->fmt, "\n");
  RT_END(R);
}

TEST(tlrt_fmt_tensor_is_the_engine_format) {
  RT_BEGIN(R);
  tl_tensor *t = mat(R, TL_F32, 2, 2);
  char *want = tl_format(t);
  tlrt_fmt_begin(R);
  tlrt_fmt_text(R, "t = ", 4);
  tlrt_fmt_tensor(R, t, 2, 1, 1);
  char expect[256];
  snprintf(expect, sizeof expect, "t = %s", want);
  CHECK_STR(R->fmt, expect);
  CHECK_CONTAINS(R->fmt, "[[0. 1.]");
  tl_free(want);
  tl_release(t);
  CHECK_FAILS(R, tlrt_fmt_tensor(R, t, -1, 6, 1),
              "t.tl:6:1: runtime error: format: use after release: the tensor behind this handle was released");
  RT_END(R);
}

/* ---- elements ------------------------------------------------------------------------ */
TEST(tlrt_get_set_with_bounds_errors) {
  RT_BEGIN(R);
  tl_tensor *t = mat(R, TL_F32, 2, 3);
  CHECK_NEAR(tlrt_get(R, t, 2, (int64_t[]){1, 2}, 1, 1), 5, 0);
  CHECK_NEAR(tlrt_get(R, t, 2, (int64_t[]){-1, -3}, 1, 1), 3, 0);
  CHECK_FAILS(R, tlrt_get(R, t, 2, (int64_t[]){2, 0}, 4, 5),
              "t.tl:4:5: runtime error: index 2 is out of range for axis 0 of size 2");
  CHECK_FAILS(R, tlrt_get(R, t, 2, (int64_t[]){0, -4}, 4, 5),
              "t.tl:4:5: runtime error: index -4 is out of range for axis 1 of size 3");
  CHECK_FAILS(R, tlrt_get(R, t, 1, (int64_t[]){0}, 4, 6), "t.tl:4:6: runtime error: tensor has 2 axes, indexed with 1");
  CHECK_FAILS(R, tlrt_set(R, &t, 3, (int64_t[]){0, 0, 0}, 1, 4, 7),
              "t.tl:4:7: runtime error: tensor has 2 axes, indexed with 3");
  CHECK_FAILS(R, tlrt_set(R, &t, 2, (int64_t[]){0, 3}, 1, 4, 8),
              "t.tl:4:8: runtime error: index 3 is out of range for axis 1 of size 3");
  tl_tensor *before = t;
  tlrt_set(R, &t, 2, (int64_t[]){0, 1}, 7.5, 1, 1);
  tlrt_set(R, &t, 2, (int64_t[]){-1, -1}, -1, 1, 1);
  CHECK(t == before); /* unique: written in place */
  CHECK_INT(R->stats.tensor_clones, 0);
  CHECK_VALUES(t, 0, 7.5, 2, 3, 4, -1);
  /* dtypes: integers truncate, bool is nonzero */
  tl_tensor *i = mat(R, TL_I64, 1, 2), *b = mat(R, TL_BOOL, 1, 2), *one = tlrt_scalar(R, TL_I32, 4);
  tlrt_set(R, &i, 2, (int64_t[]){0, 1}, 3.9, 1, 1);
  tlrt_set(R, &b, 2, (int64_t[]){0, 0}, 0.5, 1, 1);
  CHECK_NEAR(tlrt_get(R, i, 2, (int64_t[]){0, 1}, 1, 1), 3, 0);
  CHECK_NEAR(tlrt_get(R, b, 2, (int64_t[]){0, 0}, 1, 1), 1, 0);
  CHECK_NEAR(tlrt_get(R, one, 0, NULL, 1, 1), 4, 0);
  tlrt_set(R, &one, 0, NULL, -2, 1, 1);
  CHECK_NEAR(tlrt_get(R, one, 0, NULL, 1, 1), -2, 0);
  RT_END(R);
}

/* let b = a; b[i] = v: the copy is a retain of one handle, so the write splits it */
TEST(tlrt_set_on_a_shared_tensor_does_not_show_through) {
  RT_BEGIN(R);
  tl_tensor *a = mat(R, TL_F32, 1, 3);
  tl_tensor *b = tlrt_tensor_retain(R, a);
  CHECK(b == a);
  tlrt_set(R, &b, 2, (int64_t[]){0, 0}, 9, 1, 1);
  CHECK(b != a);
  CHECK_INT(R->stats.tensor_clones, 1);
  CHECK_VALUES(a, 0, 1, 2);
  CHECK_VALUES(b, 9, 1, 2);
  CHECK_INT(tl_handle_refs(a), 1);
  tlrt_set(R, &b, 2, (int64_t[]){0, 1}, 8, 1, 1); /* alone now: no copy */
  CHECK_INT(R->stats.tensor_clones, 1);
  /* a view of a (a slice as a value) and a itself: a write to either side clones */
  tl_tensor *row = tlrt_index(R, a, 1, (tlrt_ix[]){{.lo = 0}}, 1, 1);
  tlrt_set(R, &row, 1, (int64_t[]){2}, -5, 1, 1);
  CHECK_VALUES(row, 0, 1, -5);
  CHECK_VALUES(a, 0, 1, 2);
  tl_tensor *col = tlrt_index(R, a, 2, (tlrt_ix[]){{.is_range = true}, {.lo = 1}}, 1, 1);
  tlrt_set(R, &a, 2, (int64_t[]){0, 1}, 100, 1, 1);
  CHECK_VALUES(col, 1);
  CHECK_VALUES(a, 0, 100, 2);
  CHECK_VALUES(b, 9, 8, 2);
  tlrt_tensor_release(R, b);
  tlrt_tensor_release(R, a); /* each value lets go of its reference */
  tlrt_tensor_release(R, NULL);
  CHECK(tlrt_tensor_retain(R, NULL) == NULL);
  RT_END(R);
}

TEST(tlrt_writes_refuse_a_tensor_requiring_grad) {
  RT_BEGIN(R);
  tl_tensor *w = mat(R, TL_F32, 1, 2);
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  tl_tensor *w2 = tlrt_tensor_retain(R, w);
  CHECK_FAILS(R, tlrt_set(R, &w2, 2, (int64_t[]){0, 0}, 1, 3, 3),
              "t.tl:3:3: runtime error: cannot write into a tensor that requires grad (detach() it first)");
  CHECK(w2 == w); /* not split */
  CHECK_FAILS(R, tlrt_tensor_make_unique(R, &w2, 3, 4),
              "t.tl:3:4: runtime error: cannot write into a tensor that requires grad (detach() it first)");
  tlrt_tensor_release(R, w2);
  tlrt_tensor_release(R, w);
  RT_END(R);
}

TEST(tlrt_tensor_make_unique_splits_only_when_shared) {
  RT_BEGIN(R);
  tl_tensor *a = mat(R, TL_F64, 2, 2), *keep = a;
  tlrt_tensor_make_unique(R, &a, 1, 1);
  CHECK(a == keep);
  CHECK_INT(R->stats.tensor_clones, 0);
  tl_tensor *b = tlrt_tensor_retain(R, a);
  tlrt_tensor_make_unique(R, &b, 1, 1);
  CHECK(b != a);
  CHECK_INT(R->stats.tensor_clones, 1);
  CHECK(tl_data(a) != tl_data(b));
  CHECK_INT(tl_set_requires_grad(b, 1), TL_OK); /* enable_grad on b only */
  CHECK(!tl_requires_grad(a));
  CHECK_VALUES(b, 0, 1, 2, 3);
  tlrt_tensor_release(R, a);
  RT_END(R);
}

/* ---- slices ------------------------------------------------------------------------- */
static const tlrt_ix ALL = {.is_range = true};
static tlrt_ix IX(int64_t i) { return (tlrt_ix){.lo = i}; }
static tlrt_ix RG(int64_t lo, int64_t hi) { return (tlrt_ix){.is_range = true, .has_lo = true, .has_hi = true, .lo = lo, .hi = hi}; }

static void check_shape(tl_tensor *t, int nd, const int64_t *shape) {
  CHECK_INT(tl_ndim(t), nd);
  for (int a = 0; a < nd && a < tl_ndim(t); a++) CHECK_INT(tl_dim(t, a), shape[a]);
}

TEST(tlrt_index_views_and_range_errors) {
  RT_BEGIN(R);
  tl_tensor *t = mat(R, TL_I64, 3, 4);
  uint64_t live = tl_get_stats(R->ctx).live_tensors;
  tl_tensor *row = tlrt_index(R, t, 1, (tlrt_ix[]){IX(1)}, 1, 1);
  check_shape(row, 1, (int64_t[]){4});
  CHECK_VALUES(row, 4, 5, 6, 7);
  tl_tensor *part = tlrt_index(R, t, 2, (tlrt_ix[]){RG(1, 3), IX(-1)}, 1, 1);
  check_shape(part, 1, (int64_t[]){2});
  CHECK_VALUES(part, 7, 11);
  tl_tensor *open = tlrt_index(R, t, 2, (tlrt_ix[]){{.is_range = true, .has_hi = true, .hi = 2}, {.is_range = true, .has_lo = true, .lo = -2}}, 1, 1);
  check_shape(open, 2, (int64_t[]){2, 2});
  CHECK_VALUES(open, 2, 3, 6, 7);
  tl_tensor *el = tlrt_index(R, t, 2, (tlrt_ix[]){IX(2), IX(3)}, 1, 1);
  check_shape(el, 0, NULL);
  CHECK_VALUES(el, 11);
  tl_tensor *whole = tlrt_index(R, t, 0, NULL, 1, 1), *empty = tlrt_index(R, t, 1, (tlrt_ix[]){RG(2, 2)}, 1, 1);
  CHECK(whole != t);
  check_shape(empty, 2, (int64_t[]){0, 4});
  CHECK_INT(tl_get_stats(R->ctx).live_tensors, live + 6); /* nothing in between kept */
  CHECK_FAILS(R, tlrt_index(R, t, 1, (tlrt_ix[]){IX(3)}, 2, 3),
              "t.tl:2:3: runtime error: index 3 is out of range for axis 0 of size 3");
  CHECK_FAILS(R, tlrt_index(R, t, 2, (tlrt_ix[]){ALL, RG(2, 5)}, 2, 3),
              "t.tl:2:3: runtime error: range 2..5 is out of range for axis 1 of size 4");
  CHECK_FAILS(R, tlrt_index(R, t, 1, (tlrt_ix[]){{.is_range = true, .has_lo = true, .lo = -4}}, 2, 3),
              "t.tl:2:3: runtime error: range -4.. is out of range for axis 0 of size 3");
  CHECK_FAILS(R, tlrt_index(R, t, 1, (tlrt_ix[]){RG(2, 1)}, 2, 3),
              "t.tl:2:3: runtime error: range 2..1 starts after it ends for axis 0 of size 3");
  CHECK_FAILS(R, tlrt_index(R, t, 3, (tlrt_ix[]){ALL, ALL, ALL}, 2, 4),
              "t.tl:2:4: runtime error: tensor has 2 axes, indexed with 3");
  CHECK_INT(tl_get_stats(R->ctx).live_tensors, live + 6);
  RT_END(R);
}

TEST(tlrt_index_keeps_autograd_history) {
  RT_BEGIN(R);
  tl_tensor *w = mat(R, TL_F32, 2, 2);
  CHECK_INT(tl_set_requires_grad(w, 1), TL_OK);
  tl_tensor *r = tlrt_index(R, w, 1, (tlrt_ix[]){IX(1)}, 1, 1);
  CHECK_INT(tl_backward(tl_sum(r, 0, NULL, 0), NULL), TL_OK);
  tl_tensor *g = tlrt_grad(R, w, 1, 1);
  CHECK_VALUES(g, 0, 0, 1, 1);
  tl_release(g);
  RT_END(R);
}

TEST(tlrt_store_broadcasts_and_converts) {
  RT_BEGIN(R);
  tl_tensor *t = tl_zeros(R->ctx, TL_F32, 2, (int64_t[]){3, 4});
  tl_tensor *row = tlrt_from_f64(R, TL_F64, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
  tlrt_store(R, &t, 1, (tlrt_ix[]){IX(1)}, row, 1, 1);
  CHECK_VALUES(t, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0);
  tl_tensor *five = tlrt_scalar(R, TL_I64, 5);
  tlrt_store(R, &t, 2, (tlrt_ix[]){RG(0, 2), RG(1, 3)}, five, 1, 1);
  CHECK_VALUES(t, 0, 5, 5, 0, 1, 5, 5, 4, 0, 0, 0, 0);
  tl_tensor *col = tlrt_from_f64(R, TL_I32, 1, (int64_t[]){3}, (double[]){-1, -2, -3});
  tlrt_store(R, &t, 2, (tlrt_ix[]){ALL, IX(-1)}, col, 1, 1);
  CHECK_VALUES(t, 0, 5, 5, -1, 1, 5, 5, -2, 0, 0, 0, -3);
  tl_tensor *c2 = tlrt_from_f64(R, TL_F32, 2, (int64_t[]){2, 1}, (double[]){7, 8}); /* [2,1] over [2,4] */
  tlrt_store(R, &t, 1, (tlrt_ix[]){RG(1, 3)}, c2, 1, 1);
  CHECK_VALUES(t, 0, 5, 5, -1, 7, 7, 7, 7, 8, 8, 8, 8);
  tl_tensor *lead = tlrt_from_f64(R, TL_F32, 3, (int64_t[]){1, 1, 4}, (double[]){9, 9, 9, 9}); /* leading 1s */
  tlrt_store(R, &t, 1, (tlrt_ix[]){IX(0)}, lead, 1, 1);
  CHECK_VALUES(t, 9, 9, 9, 9, 7, 7, 7, 7, 8, 8, 8, 8);
  CHECK_FAILS(R, tlrt_store(R, &t, 2, (tlrt_ix[]){RG(0, 2), RG(0, 2)}, col, 5, 6),
              "t.tl:5:6: runtime error: cannot store a tensor of shape [3] into a selection of shape [2, 2]");
  CHECK_FAILS(R, tlrt_store(R, &t, 1, (tlrt_ix[]){IX(0)}, c2, 5, 7),
              "t.tl:5:7: runtime error: cannot store a tensor of shape [2, 1] into a selection of shape [4]");
  CHECK_FAILS(R, tlrt_store(R, &t, 1, (tlrt_ix[]){IX(4)}, five, 5, 8),
              "t.tl:5:8: runtime error: index 4 is out of range for axis 0 of size 3");
  CHECK_INT(R->stats.tensor_clones, 0);
  /* an empty selection writes nothing */
  tlrt_store(R, &t, 1, (tlrt_ix[]){RG(1, 1)}, five, 1, 1);
  CHECK_VALUES(t, 9, 9, 9, 9, 7, 7, 7, 7, 8, 8, 8, 8);
  RT_END(R);
}

TEST(tlrt_store_into_shared_and_from_itself) {
  RT_BEGIN(R);
  tl_tensor *a = mat(R, TL_I64, 2, 3), *b = tlrt_tensor_retain(R, a);
  tlrt_store(R, &b, 1, (tlrt_ix[]){IX(0)}, tlrt_scalar(R, TL_I64, -1), 1, 1);
  CHECK(b != a);
  CHECK_VALUES(a, 0, 1, 2, 3, 4, 5);
  CHECK_VALUES(b, -1, -1, -1, 3, 4, 5);
  /* a row of b into b: the view is read before b is written */
  tl_tensor *r1 = tlrt_index(R, b, 1, (tlrt_ix[]){IX(1)}, 1, 1);
  tlrt_store(R, &b, 1, (tlrt_ix[]){IX(0)}, r1, 1, 1);
  CHECK_VALUES(b, 3, 4, 5, 3, 4, 5);
  CHECK_VALUES(r1, 3, 4, 5);
  /* b into itself, whole */
  tl_tensor *same = b;
  tlrt_store(R, &b, 0, NULL, b, 1, 1);
  CHECK(b == same);
  CHECK_VALUES(b, 3, 4, 5, 3, 4, 5);
  tlrt_tensor_release(R, b);
  tlrt_tensor_release(R, a);
  RT_END(R);
}

/* ---- construction, shapes, item, grad -------------------------------------------------- */
TEST(tlrt_from_f64_and_scalar) {
  RT_BEGIN(R);
  tl_tensor *t = tlrt_check(R, tlrt_from_f64(R, TL_I32, 2, (int64_t[]){1, 3}, (double[]){1.9, -2.9, 3e10}), 1, 1);
  CHECK_INT(tl_get_dtype(t), TL_I32);
  CHECK_VALUES(t, 1, -2, 2147483647);
  tl_tensor *s = tlrt_scalar(R, TL_F64, 0.25), *z = tlrt_from_f64(R, TL_F32, 1, (int64_t[]){0}, NULL);
  CHECK_INT(tl_ndim(s), 0);
  CHECK_NEAR(tlrt_item(R, s, 1, 1), 0.25, 0);
  CHECK_INT(tl_numel(z), 0);
  /* 0-d data, not a compiled constant: a new value compiles no new kernel */
  tl_tensor *u = tlrt_from_f64(R, TL_I32, 1, (int64_t[]){3}, (double[]){1, 2, 3});
  tl_tensor *x = tl_add(u, tlrt_scalar(R, TL_I32, 1));
  CHECK_VALUES(x, 2, 3, 4);
  uint64_t compiled = tl_get_stats(R->ctx).kernels_compiled;
  tl_tensor *y = tl_add(u, tlrt_scalar(R, TL_I32, 2));
  CHECK_VALUES(y, 3, 4, 5);
  CHECK_INT(tl_get_stats(R->ctx).kernels_compiled, compiled);
  RT_END(R);
}

TEST(tlrt_shape_argument) {
  RT_BEGIN(R);
  int64_t dims[TL_MAX_DIMS];
  tl_tensor *s = tlrt_from_f64(R, TL_I64, 1, (int64_t[]){2}, (double[]){2, 3});
  CHECK_INT(tlrt_shape(R, s, dims, 1, 1), 2);
  CHECK_INT(dims[0], 2);
  CHECK_INT(dims[1], 3);
  CHECK_INT(tlrt_shape(R, tlrt_scalar(R, TL_I32, 7), dims, 1, 1), 1);
  CHECK_INT(dims[0], 7);
  CHECK_INT(tlrt_shape(R, tlrt_from_f64(R, TL_I64, 1, (int64_t[]){0}, NULL), dims, 1, 1), 0);
  /* a float tensor of whole numbers (the seed's spelling) */
  CHECK_INT(tlrt_shape(R, tlrt_from_f64(R, TL_F32, 1, (int64_t[]){2}, (double[]){4, 1}), dims, 1, 1), 2);
  CHECK_INT(dims[0], 4);
  CHECK_INT(dims[1], 1);
  CHECK_FAILS(R, tlrt_shape(R, tlrt_from_f64(R, TL_F64, 1, (int64_t[]){1}, (double[]){2.5}), dims, 2, 1),
              "t.tl:2:1: runtime error: a shape's sizes are whole numbers, not 2.5");
  CHECK_FAILS(R, tlrt_shape(R, tlrt_from_f64(R, TL_BOOL, 1, (int64_t[]){1}, (double[]){1}), dims, 2, 1),
              "t.tl:2:1: runtime error: a shape must be a 1-D integer tensor");
  CHECK_FAILS(R, tlrt_shape(R, mat(R, TL_I64, 1, 2), dims, 2, 2),
              "t.tl:2:2: runtime error: a shape must be a 1-D integer tensor");
  CHECK_FAILS(R, tlrt_shape(R, tlrt_from_f64(R, TL_I64, 1, (int64_t[]){2}, (double[]){2, -3}), dims, 2, 3),
              "t.tl:2:3: runtime error: a shape cannot have a negative size: [2, -3]");
  double nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK_FAILS(R, tlrt_shape(R, tlrt_from_f64(R, TL_I64, 1, (int64_t[]){9}, nine), dims, 2, 4),
              "t.tl:2:4: runtime error: a shape has at most 8 dims, this one has 9");
  RT_END(R);
}

TEST(tlrt_item_and_grad_errors) {
  RT_BEGIN(R);
  tl_tensor *t = mat(R, TL_F32, 2, 3);
  CHECK_FAILS(R, tlrt_item(R, t, 7, 1),
              "t.tl:7:1: runtime error: item() needs a tensor with one element, this one has shape [2, 3]");
  CHECK_NEAR(tlrt_item(R, mat(R, TL_I64, 1, 1), 1, 1), 0, 0);
  CHECK_FAILS(R, tlrt_grad(R, t, 8, 2),
              "t.tl:8:2: runtime error: this tensor has no gradient (did backward() run, and does it require grad?)");
  CHECK_INT(tl_last_status(R->ctx), TL_OK);
  CHECK_INT(tl_set_requires_grad(t, 1), TL_OK);
  tl_tensor *y = tl_mul(t, t);
  tl_tensor *gy = tlrt_grad(R, y, 8, 3); /* a non-leaf no backward reached: zeros */
  CHECK_VALUES(gy, 0, 0, 0, 0, 0, 0);
  tlrt_tensor_release(R, gy);
  tlrt_check_status(R, tl_backward(tl_sum(y, 0, NULL, 0), NULL), 1, 1);
  tl_tensor *g = tlrt_grad(R, t, 1, 1);
  CHECK_VALUES(g, 0, 2, 4, 6, 8, 10);
  tlrt_tensor_release(R, g);
  gy = tlrt_grad(R, y, 1, 1); /* y, held, kept its gradient: d sum(y) / dy = 1 */
  CHECK_VALUES(gy, 1, 1, 1, 1, 1, 1);
  tlrt_tensor_release(R, gy);
  RT_END(R);
}

TEST(tlrt_mem_stats_lines) {
  RT_BEGIN(R);
  tlrt_str *s = tlrt_str_new(R, "s", 1);
  tlrt_release(R, s);
  tl_tensor *t = tl_retain(mat(R, TL_F32, 1, 2));
  tl_release(t);
  tl_release(t);
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  tlrt_print_mem_stats(R, f);
  fclose(f);
  CHECK_CONTAINS(out, "mem: tensors live=0 created=1 retains=2 releases=2 cow_clones=0\n");
  CHECK_CONTAINS(out, "mem: objects live=0 created=1 retains=1 releases=1 cow_clones=0\n");
  CHECK_CONTAINS(out, "mem: bytes live=0 peak=");
  free(out);
  RT_END(R);
}


/* Tensor::rand/randn are the very numbers the engine's tl_rand/tl_randn give for the
 * same stream in another context */
TEST(tlrt_random_matches_the_engine) {
  RT_BEGIN(R);
  tl_ctx *other = tl_init();
  int64_t dims[2] = {37, 5};
  for (int k = 0; k < 2; k++) { /* stream 0: randn; stream 1: rand */
    tl_tensor *host = tlrt_new(R, k ? TLRT_NEW_RAND : TLRT_NEW_RANDN, 2, dims, 0, false, 1, 1);
    tl_tensor *lazy = k ? tl_rand(other, TL_F32, 2, dims) : tl_randn(other, TL_F32, 2, dims);
    float a[185], b[185];
    CHECK_INT(tl_to_host(host, a, sizeof a), TL_OK);
    CHECK_INT(tl_to_host(lazy, b, sizeof b), TL_OK);
    double worst = 0;
    for (int i = 0; i < 185; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
    CHECK(worst < 1e-5);
    CHECK(a[0] != a[1]);
    tlrt_tensor_release(R, host);
  }
  TEST_SHUTDOWN(other);
  RT_END(R);
}

/* p.adam_step(grad, m, v, step, lr, beta1, beta2, eps, weight_decay) (tlrt_adam_step):
 * three steps of given gradients against torch.optim.AdamW run in f64 (the numbers were
 * printed by /usr/bin/python3 with torch 2, not by TL): p, and m and v against AdamW's
 * exp_avg and exp_avg_sq. step counts from 0 (bias correction with step + 1). */
typedef struct {
  double p[3], m[3], v[3];
} adam_state;

static void check_adam_run(tl_dtype dt, double lr, double b1, double b2, double eps, double wd, const adam_state *want,
                           double tol) {
  static const double grads[3][3] = {{0.3, -1.5, 2.0}, {0.1, 0.4, -0.7}, {-0.2, 0.0, 1.1}};
  RT_BEGIN(R);
  int64_t n = 3;
  tl_tensor *p = tlrt_from_f64(R, dt, 1, &n, (double[]){1.0, -2.0, 0.5});
  tl_tensor *m = tl_zeros(R->ctx, dt, 1, &n), *v = tl_zeros(R->ctx, dt, 1, &n);
  CHECK_INT(tl_set_requires_grad(p, 1), TL_OK);
  for (int s = 0; s < 3; s++) {
    tl_tensor *g = tlrt_from_f64(R, TL_F64, 1, &n, grads[s]); /* an f64 gradient for either parameter dtype */
    tlrt_adam_step(R, &p, g, &m, &v, s, lr, b1, b2, eps, wd, 1, 1);
    tl_release(g);
    CHECK(tl_requires_grad(p) && !tl_requires_grad(m) && !tl_requires_grad(v));
    CHECK(tl_get_dtype(p) == dt && tl_get_dtype(m) == dt && tl_get_dtype(v) == dt);
    tl_tensor *got[3] = {p, m, v};
    const double *exp[3] = {want[s].p, want[s].m, want[s].v};
    for (int k = 0; k < 3; k++) {
      double h[3];
      tl_tensor *d = tl_cast(got[k], TL_F64);
      CHECK_INT(tl_to_host(d, h, sizeof h), TL_OK);
      tl_release(d);
      for (int i = 0; i < 3; i++)
        if (!(fabs(h[i] - exp[k][i]) <= tol * (1 + fabs(exp[k][i]))))
          tl_test_fail(__FILE__, __LINE__, "%s step %d, %s[%d] = %.17g, torch gives %.17g", tl_dtype_name(dt), s,
                       k == 0 ? "p" : k == 1 ? "m" : "v", i, h[i], exp[k][i]);
    }
  }
  tl_release(p);
  tl_release(m);
  tl_release(v);
  RT_END(R);
}

static const adam_state adamw_decay[3] = { /* lr 0.01, betas (0.9, 0.999), eps 1e-8, weight_decay 0.1 */
    {{0.98900000033333335, -1.9880000000666667, 0.48950000004999999},
     {0.029999999999999992, -0.14999999999999997, 0.19999999999999996},
     {9.0000000000000073e-05, 0.002250000000000002, 0.0040000000000000036}},
    {{0.97930036121538633, -1.9814561365861554, 0.48514579954638914},
     {0.036999999999999991, -0.094999999999999987, 0.10999999999999999},
     {9.9910000000000092e-05, 0.0024077500000000019, 0.0044860000000000039}},
    {{0.9760488087394944, -1.9759529847820945, 0.47906428230434811},
     {0.013299999999999999, -0.085499999999999993, 0.20899999999999996},
     {0.00013981009000000013, 0.002405342250000002, 0.0056915140000000052}},
};
static const adam_state adam_big_eps[3] = { /* lr 0.1, betas (0.8, 0.99), eps 1e-3, no weight decay */
    {{0.90033222591362128, -1.9000666222518321, 0.40004997501249373},
     {0.059999999999999984, -0.29999999999999993, 0.39999999999999991},
     {0.00090000000000000073, 0.02250000000000002, 0.040000000000000036}},
    {{0.81606584723603315, -1.8595273437999482, 0.36663614866632221},
     {0.067999999999999977, -0.15999999999999998, 0.17999999999999999},
     {0.00099100000000000078, 0.023875000000000021, 0.04450000000000004}},
    {{0.80244488233192757, -1.830157621837966, 0.31242892677378392},
     {0.014399999999999989, -0.12799999999999997, 0.36399999999999993},
     {0.0013810900000000013, 0.023636250000000022, 0.056155000000000052}},
};

TEST(tlrt_adam_step_matches_torch_adamw) {
  check_adam_run(TL_F64, 0.01, 0.9, 0.999, 1e-8, 0.1, adamw_decay, 1e-13);
  check_adam_run(TL_F64, 0.1, 0.8, 0.99, 1e-3, 0.0, adam_big_eps, 1e-13);
  check_adam_run(TL_F32, 0.01, 0.9, 0.999, 1e-8, 0.1, adamw_decay, 2e-6);
}

/* The bias correction changes every step: it is data (0-d tensors), not constants
 * compiled into the kernels, so steps after the first compile nothing (with constants,
 * every step compiled its kernels anew: 575 kernels where 100 do in
 * bench/cold_transformer.tl). */
TEST(tlrt_adam_steps_reuse_their_kernels) {
  RT_BEGIN(R);
  int64_t n = 5;
  tl_tensor *p = tlrt_from_f64(R, TL_F32, 1, &n, (double[]){1, -2, 0.5, 3, -1});
  tl_tensor *m = tl_zeros(R->ctx, TL_F32, 1, &n), *v = tl_zeros(R->ctx, TL_F32, 1, &n);
  uint64_t loaded = 0;
  for (int s = 0; s < 6; s++) {
    tl_tensor *g = tlrt_from_f64(R, TL_F32, 1, &n, (double[]){0.3, -1.5, 2.0, 0.1 * s, -0.7});
    tlrt_adam_step(R, &p, g, &m, &v, s, 0.01, 0.9, 0.999, 1e-8, 0.0, 1, 1);
    tl_release(g);
    CHECK_INT(tl_realize(p), TL_OK);
    tl_stats st = tl_get_stats(R->ctx);
    if (s == 1) loaded = st.kernels_compiled + st.disk_cache_hits;
    if (s > 1) CHECK_INT(st.kernels_compiled + st.disk_cache_hits, loaded);
  }
  tl_release(p), tl_release(m), tl_release(v);
  RT_END(R);
}
