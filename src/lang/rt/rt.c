/* rt.c — the run-time library of compiled TL programs (the contract is rt.h): errors
 * that longjmp to the driver, counted objects and strings, formatting, and tensor
 * element access with copy-on-write. Nothing here exits or aborts a correct driver. */
#include "lang/rt/rt.h"
#include "lang/rt/rt_vec.h"
#include "lang/rt/rt_ml.h" /* tlrt_varbuilder_end */

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/dtype.h"  /* elements of every dtype */
#include "core/format.h" /* tl_format_shape */
#include "core/vec.h"    /* the text being formatted grows as a tl_vec */
#include "core/half.h"   /* f16 and bf16 printed in their own shortest digits */

/* ---- set-up, errors ---------------------------------------------------------------- */

/* The lowest stack address the program's functions may reach on this thread (stacks
 * grow down): the stack's end plus a quarter of its size (at least 256 KB) for what a
 * TL function calls below its frame (the engine, the C compiler driver, printf). */
static uintptr_t stack_limit(void) {
  uintptr_t sp = (uintptr_t)__builtin_frame_address(0), lo = 0; /* the real stack, even under ASan */
  size_t size = 0;
#ifdef __GLIBC__
  pthread_attr_t attr; /* the main thread's too: glibc reads its mapping and the rlimit */
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *addr;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && (uintptr_t)addr < sp) lo = (uintptr_t)addr;
    pthread_attr_destroy(&attr);
  }
  /* The main thread's stack grows on demand up to the rlimit, but glibc may report only
   * what is mapped so far (20 KB in a forked child under valgrind): count the rlimit
   * down from the stack's top instead. */
  struct rlimit rl;
  if (lo && getpid() == (pid_t)syscall(SYS_gettid) && getrlimit(RLIMIT_STACK, &rl) == 0 &&
      rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > size && lo + size > rl.rlim_cur) {
    lo = lo + size - (uintptr_t)rl.rlim_cur;
    size = (size_t)rl.rlim_cur;
  }
#endif
  if (!lo) { /* elsewhere: the rlimit, counted from here (the driver is not deep) */
    struct rlimit rl;
    size = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) size = (size_t)rl.rlim_cur;
    lo = sp > size ? sp - size : 0;
  }
  size_t margin = size / 4 > (256u << 10) ? size / 4 : 256u << 10;
  if (lo + margin >= sp) return lo + (sp - lo) / 2; /* already deep: keep half of what is left */
  return lo + margin;
}

void tlrt_init(tlrt *R, tl_ctx *ctx, const char *file, FILE *out) {
  memset(R, 0, sizeof *R);
  R->ctx = ctx;
  R->file = file ? file : "<program>";
  R->out = out ? out : stdout;
  R->objs.prev = R->objs.next = &R->objs;
  R->stack_limit = stack_limit();
}

_Noreturn void tlrt_fail(tlrt *R, int line, int col, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (line > 0) /* 0: a failure of the run time itself (out of memory), with no place */
    snprintf(R->error, sizeof R->error, "%s:%d:%d: runtime error: %.*s", R->file, line, col, (int)sizeof msg, msg);
  else
    snprintf(R->error, sizeof R->error, "%s: runtime error: %.*s", R->file, (int)sizeof msg, msg);
  if (!R->on_error) { /* a driver bug: there is nowhere to go back to */
    fprintf(stderr, "%s\n(no error handler set: aborting)\n", R->error);
    abort();
  }
  longjmp(*R->on_error, 1);
}

/* the engine's message, taken (copied, then cleared) so the next call starts clean */
static _Noreturn void engine_fail(tlrt *R, int line, int col) {
  char msg[768];
  const char *e = tl_last_error(R->ctx);
  snprintf(msg, sizeof msg, "%s", e && *e ? e : "the tensor engine failed (no message)");
  tl_clear_error(R->ctx);
  tlrt_fail(R, line, col, "%s", msg);
}

static _Noreturn void out_of_memory(tlrt *R, size_t bytes) {
  tlrt_fail(R, 0, 0, "out of memory (asking for %zu bytes)", bytes);
}

tl_tensor *tlrt_check(tlrt *R, tl_tensor *t, int line, int col) {
  if (!t) engine_fail(R, line, col);
  return t;
}

void tlrt_check_status(tlrt *R, tl_status st, int line, int col) {
  if (st != TL_OK) engine_fail(R, line, col);
}

/* Integer division truncates toward zero, as C, Rust and the engine do. */
/* ---- objects ------------------------------------------------------------------------- */
static void obj_link(tlrt *R, tlrt_obj *o) {
  o->prev = R->objs.prev;
  o->next = &R->objs;
  R->objs.prev->next = o;
  R->objs.prev = o;
}

static void obj_unlink(tlrt_obj *o) {
  o->prev->next = o->next;
  o->next->prev = o->prev;
}

static void count_new(tlrt *R) { /* a creation counts as a retain, as in the engine */
  R->stats.objects_created++;
  R->stats.objects_live++;
  R->stats.retains++;
}

static void count_freed(tlrt *R) {
  R->stats.objects_freed++;
  R->stats.objects_live--;
}

/* what, line, col: who asked, named in the error when the memory runs out (line 0: the
 * run time itself, with no place) */
static void *obj_new_at(tlrt *R, size_t size, void (*drop)(tlrt *R, tlrt_obj *o), const char *what, int line, int col) {
  if (size < sizeof(tlrt_obj)) size = sizeof(tlrt_obj);
  tlrt_obj *o = calloc(1, size);
  if (!o && line > 0) tlrt_fail(R, line, col, "%s: out of memory (asking for %zu bytes)", what, size);
  if (!o) out_of_memory(R, size);
  o->rc = 1;
  o->drop = drop;
  obj_link(R, o);
  count_new(R);
  return o;
}

void *tlrt_obj_new(tlrt *R, size_t size, void (*drop)(tlrt *R, tlrt_obj *o)) { return obj_new_at(R, size, drop, NULL, 0, 0); }

void *tlrt_retain(tlrt *R, void *p) {
  tlrt_obj *o = p;
  if (o) {
    o->rc++;
    R->stats.retains++;
  }
  return p;
}

/* A drop releases the object's fields, which may free objects whose drops release
 * theirs: a recursive enum a million nodes long would recurse a million frames deep.
 * So a release inside a drop only queues the dead object, and the outermost release
 * drops the queue in a loop: the stack stays flat, whatever the depth. */
void tlrt_release(tlrt *R, void *p) {
  tlrt_obj *o = p;
  if (!o) return;
  R->stats.releases++;
  if (--o->rc > 0) return;
  obj_unlink(o);
  o->next = R->dying;
  R->dying = o;
  if (R->dropping) return;
  R->dropping = true;
  while (R->dying) {
    tlrt_obj *d = R->dying;
    R->dying = d->next;
    if (d->drop) d->drop(R, d);
    free(d);
    count_freed(R);
  }
  R->dropping = false;
}

bool tlrt_str_is(const tlrt_str *s, const char *bytes, int64_t n) {
  return s && s->len == n && memcmp(s->data, bytes, (size_t)n) == 0;
}

/* After an error the objects' fields may be half-built, so no drop runs: memory only
 * (the tensors they hold go with the engine context). */
void tlrt_free_all(tlrt *R) {
  while (R->dying) { /* queued for their drops when the error came */
    tlrt_obj *d = R->dying;
    R->dying = d->next;
    tlrt_vec_free_buffers(d); /* a Vec's or HashMap's own buffers (rt_vec.c) */
    free(d);
    count_freed(R);
  }
  R->dropping = false;
  while (R->objs.next != &R->objs) {
    tlrt_obj *o = R->objs.next;
    obj_unlink(o);
    tlrt_vec_free_buffers(o);
    free(o);
    count_freed(R);
  }
  free(R->fmt);
  R->fmt = NULL;
  R->fmt_len = R->fmt_cap = 0;
  tlrt_logic_end(R); /* after an error: main did not end it */
  tlrt_varbuilder_end(R);
}

void tlrt_make_unique(tlrt *R, void **o, size_t size, void (*retain_fields)(tlrt *R, void *o)) {
  tlrt_obj *old = *o;
  if (!old || old->rc <= 1) return;
  tlrt_obj *copy = malloc(size);
  if (!copy) out_of_memory(R, size);
  memcpy(copy, old, size);
  copy->rc = 1;
  obj_link(R, copy);
  count_new(R);
  R->stats.cow_clones++;
  if (retain_fields) retain_fields(R, copy); /* the copy holds the fields too */
  tlrt_release(R, old);
  *o = copy;
}

/* ---- tensors as owned values ------------------------------------------------------ */
tl_tensor *tlrt_tensor_retain(tlrt *R, tl_tensor *t) {
  (void)R;
  return t ? tl_retain(t) : NULL;
}

void tlrt_tensor_release(tlrt *R, tl_tensor *t) {
  (void)R;
  if (t) tl_release(t);
}

/* ---- strings ------------------------------------------------------------------------- */
tlrt_str *tlrt_str_new(tlrt *R, const char *s, int64_t len) {
  if (len < 0) len = (int64_t)strlen(s);
  tlrt_str *r = tlrt_obj_new(R, sizeof *r + (size_t)len + 1, NULL);
  r->len = len;
  if (len) memcpy(r->data, s, (size_t)len);
  r->data[len] = '\0';
  return r;
}

/* a String longer than a Vec may be (2^40 bytes) is an error at line:col, as is the
 * memory for it running out: never a wrapped size */
#define STR_MAX_BYTES ((int64_t)1 << 40)

tlrt_str *tlrt_str_concat(tlrt *R, const tlrt_str *a, const tlrt_str *b, int line, int col) {
  int64_t la = a ? a->len : 0, lb = b ? b->len : 0;
  if (la > STR_MAX_BYTES - lb)
    tlrt_fail(R, line, col, "joining Strings of %" PRId64 " and %" PRId64 " bytes: the most a String may hold is 2^40 bytes (1099511627776)", la, lb);
  tlrt_str *r = obj_new_at(R, sizeof *r + (size_t)(la + lb) + 1, NULL, "joining Strings", line, col);
  r->len = la + lb;
  if (la) memcpy(r->data, a->data, (size_t)la);
  if (lb) memcpy(r->data + la, b->data, (size_t)lb);
  r->data[la + lb] = '\0';
  return r;
}

bool tlrt_str_eq(const tlrt_str *a, const tlrt_str *b) {
  if (a == b) return true;
  if (!a || !b || a->len != b->len) return false;
  return memcmp(a->data, b->data, (size_t)a->len) == 0;
}

/* byte order, which for UTF-8 is code point order; a prefix sorts first */
int tlrt_str_cmp(const tlrt_str *a, const tlrt_str *b) {
  int64_t la = a ? a->len : 0, lb = b ? b->len : 0;
  int c = la && lb ? memcmp(a->data, b->data, (size_t)(la < lb ? la : lb)) : 0;
  if (c) return c < 0 ? -1 : 1;
  return la < lb ? -1 : la > lb;
}

/* ---- formatting ------------------------------------------------------------------- */
static bool fmt_reserve(tlrt *R, size_t extra) {
  if (extra > SIZE_MAX - 1 - R->fmt_len) return false;
  size_t need = R->fmt_len + extra + 1;
  if (need <= R->fmt_cap) return true;
  return tl_vec_grow(&R->fmt, &R->fmt_cap, need < 256 ? 256 : need, 1); /* a line's text: 256 bytes at first */
}

void tlrt_fmt_pad(tlrt *R, size_t from, int width, char align, int fill, int zero) {
  size_t chars = 0;
  for (size_t i = from; i < R->fmt_len; i++) chars += ((unsigned char)R->fmt[i] & 0xC0) != 0x80;
  if (chars >= (size_t)width) return;
  size_t pad = (size_t)width - chars;
  if (!fmt_reserve(R, pad)) out_of_memory(R, R->fmt_len + pad + 1);
  size_t at = from, before = pad; /* where the fill goes, and how much of it before the text */
  char c = zero ? '0' : (char)fill;
  if (zero) at += from < R->fmt_len && (R->fmt[from] == '-' || R->fmt[from] == '+');
  else if (align == '<') before = 0;
  else if (align == '^') before = pad / 2;
  memmove(R->fmt + at + before, R->fmt + at, R->fmt_len - at);
  memset(R->fmt + at, c, before);
  R->fmt_len += before;
  memset(R->fmt + R->fmt_len, c, pad - before);
  R->fmt_len += pad - before;
  R->fmt[R->fmt_len] = '\0';
}

void tlrt_fmt_begin(tlrt *R) {
  R->fmt_len = 0;
  if (R->fmt) R->fmt[0] = '\0';
}

void tlrt_fmt_text(tlrt *R, const char *s, size_t len) {
  if (!fmt_reserve(R, len)) out_of_memory(R, R->fmt_len + len + 1);
  if (len) memcpy(R->fmt + R->fmt_len, s, len);
  R->fmt_len += len;
  R->fmt[R->fmt_len] = '\0';
}

static void fmt_cstr(tlrt *R, const char *s) { tlrt_fmt_text(R, s, strlen(s)); }

static void fmt_printf(tlrt *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fmt_printf(tlrt *R, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  if (!fmt_reserve(R, (size_t)n)) out_of_memory(R, R->fmt_len + (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(R->fmt + R->fmt_len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  R->fmt_len += (size_t)n;
}

void tlrt_fmt_i64(tlrt *R, int64_t v, int prec) {
  (void)prec; /* {:.N} of an integer prints the integer, as Rust does */
  fmt_printf(R, "%" PRId64, v);
}

/* v read back from decimal text in its format: fmt 0 f64, 1 f32, 2 f16, 3 bf16 */
static double read_back(const char *text, int fmt) {
  double d = strtod(text, NULL);
  return fmt == 0 ? d : fmt == 1 ? (double)strtof(text, NULL) : fmt == 2 ? tl_round_f16(d) : tl_round_bf16(d);
}

/* The fewest significant digits of |v| (finite, not zero) that read back as v in its
 * format (fmt, as read_back's): digits without a point into out, the decimal exponent
 * of the first. */
static int shortest_digits(double v, int fmt, char out[24]) {
  char buf[40];
  int maxp = fmt ? 9 : 17;
  for (int p = 1; p <= maxp; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    if (read_back(buf, fmt) == v) break;
  }
  int n = 0;
  const char *s = buf;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9') out[n++] = *s;
  while (n > 1 && out[n - 1] == '0') n--;
  out[n] = '\0';
  return atoi(s + 1);
}

/* Python's repr rules: positional from 1e-4 up to 1e16 (with ".0" when integral),
 * else d.ddde+XX */
static void fmt_float(tlrt *R, double v, int fmt, int prec) {
  if (isnan(v) || isinf(v)) {
    fmt_cstr(R, isnan(v) ? "NaN" : v < 0 ? "-inf" : "inf");
    return;
  }
  if (prec >= 0) {
    fmt_printf(R, "%.*f", prec, v);
    return;
  }
  if (v == 0) {
    fmt_cstr(R, signbit(v) ? "-0.0" : "0.0");
    return;
  }
  char d[24], s[64];
  int e = shortest_digits(fabs(v), fmt, d), n = (int)strlen(d), k = 0;
  if (v < 0) s[k++] = '-';
  if (e < -4 || e >= 16) {
    k += snprintf(s + k, sizeof s - (size_t)k, "%c%s%se%c%02d", d[0], n > 1 ? "." : "", d + 1, e < 0 ? '-' : '+',
                  abs(e));
  } else if (e < 0) {
    s[k++] = '0', s[k++] = '.';
    for (int i = 0; i < -e - 1; i++) s[k++] = '0';
    for (int i = 0; i < n; i++) s[k++] = d[i];
  } else {
    for (int i = 0; i <= e; i++) s[k++] = i < n ? d[i] : '0';
    s[k++] = '.';
    if (n <= e + 1) s[k++] = '0';
    for (int i = e + 1; i < n; i++) s[k++] = d[i];
  }
  tlrt_fmt_text(R, s, (size_t)k);
}

void tlrt_fmt_f32(tlrt *R, float v, int prec) { fmt_float(R, v, 1, prec); }
void tlrt_fmt_f64(tlrt *R, double v, int prec) { fmt_float(R, v, 0, prec); }
void tlrt_fmt_half(tlrt *R, float v, int bf16, int prec) { fmt_float(R, v, bf16 ? 3 : 2, prec); }
void tlrt_fmt_u64(tlrt *R, uint64_t v) { fmt_printf(R, "%" PRIu64, v); }
void tlrt_fmt_bool(tlrt *R, bool v) { fmt_cstr(R, v ? "true" : "false"); }

void tlrt_fmt_number(tlrt *R, double v, int dtype, int prec) {
  switch (dtype) {
  case TL_F32: fmt_float(R, (float)v, 1, prec); break;
  case TL_F64: fmt_float(R, v, 0, prec); break;
  case TL_BOOL: tlrt_fmt_bool(R, v != 0); break;
  default: tlrt_fmt_i64(R, (int64_t)v, prec); break; /* an integer's double: in range */
  }
}

void tlrt_fmt_char(tlrt *R, uint32_t c) {
  unsigned char b[4];
  size_t n;
  if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD; /* not a scalar value */
  if (c < 0x80) {
    b[0] = (unsigned char)c, n = 1;
  } else if (c < 0x800) {
    b[0] = (unsigned char)(0xC0 | c >> 6), b[1] = (unsigned char)(0x80 | (c & 0x3F)), n = 2;
  } else if (c < 0x10000) {
    b[0] = (unsigned char)(0xE0 | c >> 12), b[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
    b[2] = (unsigned char)(0x80 | (c & 0x3F)), n = 3;
  } else {
    b[0] = (unsigned char)(0xF0 | c >> 18), b[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
    b[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F)), b[3] = (unsigned char)(0x80 | (c & 0x3F)), n = 4;
  }
  tlrt_fmt_text(R, (const char *)b, n);
}

void tlrt_fmt_str(tlrt *R, const tlrt_str *s) {
  if (s) tlrt_fmt_text(R, s->data, (size_t)s->len);
}

/* Rust's escape_debug: characters that would not show as themselves in the output
 * (controls, format and separator characters but the space, private use) are written
 * \u{hex}. Rust also escapes unassigned code points and combining marks, which needs
 * the Unicode tables: those are written as they are. */
static bool debug_hidden(uint32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD || c == 0x061C || c == 0x1680 || c == 0x180E ||
         (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F) || c == 0x3000 ||
         (c >= 0xD800 && c <= 0xF8FF) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) || c == 0xFFFE || c == 0xFFFF ||
         (c >= 0xE0000 && c <= 0xE007F) || c >= 0xF0000;
}

/* c inside quotes q: \0 \t \r \n \\ and q itself escaped (a string's '"', a char's '\'') */
static void fmt_escaped(tlrt *R, uint32_t c, char q) {
  const char *e = c == 0 ? "\\0" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : c == '\n' ? "\\n" : c == '\\' ? "\\\\" : NULL;
  if (e) fmt_cstr(R, e);
  else if (c == (uint32_t)q) fmt_printf(R, "\\%c", q);
  else if (debug_hidden(c)) fmt_printf(R, "\\u{%x}", (unsigned)c);
  else tlrt_fmt_char(R, c);
}

void tlrt_fmt_char_as(tlrt *R, uint32_t c, bool dbg) {
  if (!dbg) {
    tlrt_fmt_char(R, c);
    return;
  }
  fmt_cstr(R, "'");
  fmt_escaped(R, c, '\'');
  fmt_cstr(R, "'");
}

/* the length of the UTF-8 sequence at p (at most n bytes) and its code point, or 0 when
 * it is not one (a byte that is then written \xNN) */
static int utf8_next(const unsigned char *p, int64_t n, uint32_t *c) {
  int k = p[0] < 0x80 ? 1 : p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : p[0] >= 0xE0 && p[0] < 0xF0 ? 3 : p[0] >= 0xF0 && p[0] < 0xF5 ? 4 : 0;
  if (!k || k > n) return 0;
  uint32_t v = k == 1 ? p[0] : k == 2 ? p[0] & 0x1Fu : k == 3 ? p[0] & 0x0Fu : p[0] & 0x07u;
  for (int i = 1; i < k; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    v = v << 6 | (p[i] & 0x3Fu);
  }
  static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000}; /* overlong forms are not UTF-8 */
  if (v < least[k] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *c = v;
  return k;
}

void tlrt_fmt_str_as(tlrt *R, const tlrt_str *s, bool dbg) {
  if (!dbg) {
    tlrt_fmt_str(R, s);
    return;
  }
  fmt_cstr(R, "\"");
  const unsigned char *p = s ? (const unsigned char *)s->data : NULL;
  for (int64_t i = 0, n = s ? s->len : 0; i < n;) {
    uint32_t c = 0;
    int k = utf8_next(p + i, n - i, &c);
    if (k) fmt_escaped(R, c, '"');
    else fmt_printf(R, "\\x%02x", p[i]);
    i += k ? k : 1;
  }
  fmt_cstr(R, "\"");
}

/* prec (`{:.N}`) is numpy's print precision: at most N digits after the point, the
 * columns still lined up */
void tlrt_fmt_tensor(tlrt *R, tl_tensor *t, int prec, int line, int col) {
  if (t && prec >= 0 && tl_ndim(t) == 0 && (tl_get_dtype(t) == TL_F32 || tl_get_dtype(t) == TL_F64)) {
    tlrt_fmt_f64(R, tlrt_item(R, t, line, col), prec); /* a 0-d float: as the scalar would print */
    return;
  }
  char *s = t ? tl_format_precision(t, prec < 0 ? 8 : prec) : NULL; /* {:.N}: numpy's precision=N */
  if (!s) engine_fail(R, line, col);
  size_t n = strlen(s);
  bool ok = fmt_reserve(R, n);
  if (ok) tlrt_fmt_text(R, s, n);
  tl_free(s);
  if (!ok) out_of_memory(R, n);
}

void tlrt_fmt_print(tlrt *R, bool newline) {
  if (R->fmt_len) fwrite(R->fmt, 1, R->fmt_len, R->out);
  if (newline) fputc('\n', R->out);
}

tlrt_str *tlrt_fmt_take(tlrt *R) { return tlrt_str_new(R, R->fmt ? R->fmt : "", (int64_t)R->fmt_len); }

/* ---- tensor elements ------------------------------------------------------------- */
static bool dtype_is_int(tl_dtype dt) { return dt == TL_BOOL || tl_dtype_is_int(dt); }

/* every dtype through core/dtype.c (f16 and bf16 are 2 bytes, not a double's 8) */
static double read_f64(const void *p, tl_dtype dt, int64_t i) { return tl_dtype_read(p, dt, i); }

static int64_t read_i64(const void *p, tl_dtype dt, int64_t i) { return tl_dtype_read_int(p, dt, i); }

/* double -> integer saturates (and NaN gives 0): C leaves both undefined */
static int64_t sat_i64(double v, int64_t lo, int64_t hi) {
  if (v != v) return 0;
  if (v <= (double)lo) return lo;
  if (v >= (double)hi) return hi;
  return (int64_t)v;
}

static void write_f64(void *p, tl_dtype dt, int64_t i, double v) {
  switch (dt) {
  case TL_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  case TL_I32: ((int32_t *)p)[i] = (int32_t)sat_i64(v, INT32_MIN, INT32_MAX); break;
  case TL_I64: ((int64_t *)p)[i] = sat_i64(v, INT64_MIN, INT64_MAX); break;
  case TL_F32: ((float *)p)[i] = fabs(v) > FLT_MAX && !isinf(v) ? (float)copysign(INFINITY, v) : (float)v; break;
  case TL_F64: ((double *)p)[i] = v; break;
  default: tl_dtype_write(p, dt, i, v); break; /* saturating to integers, rounding to f16/bf16 */
  }
}

static void write_i64(void *p, tl_dtype dt, int64_t i, int64_t v) {
  switch (dt) {
  case TL_BOOL: ((uint8_t *)p)[i] = v != 0; break;
  case TL_I32: ((int32_t *)p)[i] = (int32_t)(v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : v); break;
  case TL_I64: case TL_U64: ((int64_t *)p)[i] = v; break; /* u64: the bits, as read_i64 gives them */
  default: /* the narrower ones saturate, as i32 */
    tl_dtype_write_int(p, dt, i, v < tl_dtype_min(dt) ? (int64_t)tl_dtype_min(dt) : v > tl_dtype_max(dt) ? (int64_t)tl_dtype_max(dt) : v);
    break;
  }
}

/* one element from src[si] (dtype st) to dst[di] (dtype dt); integers never pass
 * through a double, which would round those above 2^53 */
static void convert_elem(void *dst, tl_dtype dt, int64_t di, const void *src, tl_dtype st, int64_t si) {
  if (dt == st) {
    size_t w = tl_dtype_size(dt);
    memcpy((char *)dst + (size_t)di * w, (const char *)src + (size_t)si * w, w);
  } else if (dtype_is_int(dt) && dtype_is_int(st)) {
    write_i64(dst, dt, di, read_i64(src, st, si));
  } else {
    write_f64(dst, dt, di, read_f64(src, st, si));
  }
}

static int tensor_shape(tl_tensor *t, int64_t *shape) {
  int nd = tl_ndim(t);
  for (int a = 0; a < nd; a++) shape[a] = tl_dim(t, a);
  return nd;
}

static const char *axes_word(int n) { return n == 1 ? "axis" : "axes"; }

/* an index counted from the end when negative, or a run-time error */
static int64_t norm_index(tlrt *R, int64_t i, int axis, int64_t size, int line, int col) {
  int64_t j = i < 0 ? i + size : i;
  if (j < 0 || j >= size)
    tlrt_fail(R, line, col, "index %" PRId64 " is out of range for axis %d of size %" PRId64, i, axis, size);
  return j;
}

/* the row-major element number of a full index into t */
static int64_t element_at(tlrt *R, tl_tensor *t, int n, const int64_t *idx, int line, int col) {
  if (!t) engine_fail(R, line, col);
  int nd = tl_ndim(t);
  if (n != nd) tlrt_fail(R, line, col, "tensor has %d %s, indexed with %d", nd, axes_word(nd), n);
  int64_t off = 0;
  for (int a = 0; a < nd; a++) {
    int64_t size = tl_dim(t, a);
    off = off * size + norm_index(R, idx[a], a, size, line, col);
  }
  return off;
}

/* *t alone, for a write: a handle of its own when other values hold this one (a copy
 * in the language is a retain of the same handle), then storage of its own
 * (tl_data_mut copies when another handle or graph sees it). Returns the data. */
static void *tensor_unique(tlrt *R, tl_tensor **t, int line, int col) {
  if (!*t) engine_fail(R, line, col);
  /* a tensor requiring grad keeps its handle: tl_data_mut refuses it with the message */
  if (tl_handle_refs(*t) > 1 && !tl_requires_grad(*t)) {
    tl_tensor *own = tlrt_check(R, tl_detach(*t), line, col);
    tlrt_tensor_release(R, *t);
    *t = own;
  }
  const void *before = tl_requires_grad(*t) ? NULL : tl_data(*t);
  void *p = tl_data_mut(*t);
  if (!p) engine_fail(R, line, col);
  if (before && p != before) R->stats.tensor_clones++;
  return p;
}

double tlrt_get(tlrt *R, tl_tensor *t, int n, const int64_t *idx, int line, int col) {
  int64_t off = element_at(R, t, n, idx, line, col);
  const void *d = tl_data(t);
  if (!d) engine_fail(R, line, col);
  return read_f64(d, tl_get_dtype(t), off);
}

void tlrt_set(tlrt *R, tl_tensor **t, int n, const int64_t *idx, double v, int line, int col) {
  int64_t off = element_at(R, *t, n, idx, line, col);
  write_f64(tensor_unique(R, t, line, col), tl_get_dtype(*t), off, v);
}

void tlrt_tensor_make_unique(tlrt *R, tl_tensor **t, int line, int col) { tensor_unique(R, t, line, col); }

/* ---- slices ---------------------------------------------------------------------- */
/* what t[spec...] selects: [lo, hi) of every axis of t; indexed axes go (drop) */
typedef struct {
  int ndim, kept;
  int64_t shape[TL_MAX_DIMS], lo[TL_MAX_DIMS], hi[TL_MAX_DIMS];
  bool drop[TL_MAX_DIMS];
  int64_t kshape[TL_MAX_DIMS]; /* the selection's shape: the kept axes */
} tlrt_sel;

static void range_fail(tlrt *R, const tlrt_ix *x, int axis, int64_t size, const char *why, int line, int col) {
  char lo[32] = "", hi[32] = "";
  if (x->has_lo) snprintf(lo, sizeof lo, "%" PRId64, x->lo);
  if (x->has_hi) snprintf(hi, sizeof hi, "%" PRId64, x->hi);
  tlrt_fail(R, line, col, "range %s..%s %s for axis %d of size %" PRId64, lo, hi, why, axis, size);
}

static void select_range(tlrt *R, const tlrt_ix *x, int a, tlrt_sel *s, int line, int col) {
  int64_t size = s->shape[a];
  int64_t lo = x->has_lo ? x->lo : 0, hi = x->has_hi ? x->hi : size;
  if (lo < 0) lo += size; /* negative ends count from the end, as indices do */
  if (hi < 0) hi += size;
  if (lo < 0 || hi > size || lo > size || hi < 0) range_fail(R, x, a, size, "is out of range", line, col);
  if (lo > hi) range_fail(R, x, a, size, "starts after it ends", line, col);
  s->lo[a] = lo;
  s->hi[a] = hi;
}

static void select_parts(tlrt *R, tl_tensor *t, int n, const tlrt_ix *spec, tlrt_sel *s, int line, int col) {
  if (!t) engine_fail(R, line, col);
  memset(s, 0, sizeof *s);
  s->ndim = tensor_shape(t, s->shape);
  if (n > s->ndim) tlrt_fail(R, line, col, "tensor has %d %s, indexed with %d", s->ndim, axes_word(s->ndim), n);
  for (int a = 0; a < s->ndim; a++) {
    s->lo[a] = 0;
    s->hi[a] = s->shape[a];
    if (a < n && !spec[a].is_range) {
      s->lo[a] = norm_index(R, spec[a].lo, a, s->shape[a], line, col);
      s->hi[a] = s->lo[a] + 1;
      s->drop[a] = true;
    } else if (a < n) {
      select_range(R, &spec[a], a, s, line, col);
    }
    if (!s->drop[a]) s->kshape[s->kept++] = s->hi[a] - s->lo[a];
  }
}

/* a row (t[i], `for row in t`) copied out of t's realized data: a view would bake its
 * offset into the kernels that read it, so a loop walking the rows would compile a
 * kernel per row; the copy costs what reading the view costs. Slices (ranges) stay
 * views, as LANGUAGE.md §6 has them. */
static tl_tensor *index_copy(tlrt *R, tl_tensor *t, const tlrt_sel *s, int line, int col) {
  const char *src = tl_data(t);
  if (!src) engine_fail(R, line, col);
  tl_dtype dt = tl_get_dtype(t);
  size_t esize = tl_dtype_size(dt);
  int64_t total = 1, acc = 1, tstride[TL_MAX_DIMS], idx[TL_MAX_DIMS] = {0}, off = 0;
  for (int k = 0; k < s->kept; k++) total *= s->kshape[k];
  for (int a = s->ndim - 1; a >= 0; a--) tstride[a] = acc, acc *= s->shape[a];
  int64_t sstride[TL_MAX_DIMS], sshape[TL_MAX_DIMS];
  int k = 0;
  for (int a = 0; a < s->ndim; a++) {
    off += s->lo[a] * tstride[a];
    if (!s->drop[a]) {
      sstride[k] = tstride[a];
      sshape[k] = s->kshape[k];
      k++;
    }
  }
  char *buf = malloc(esize * (size_t)(total ? total : 1));
  if (!buf) out_of_memory(R, esize * (size_t)total);
  for (int64_t e = 0; e < total; e++) {
    memcpy(buf + (size_t)e * esize, src + (size_t)off * esize, esize);
    for (int j = k - 1; j >= 0; j--) {
      off += sstride[j];
      if (++idx[j] < sshape[j]) break;
      off -= sstride[j] * sshape[j], idx[j] = 0;
    }
  }
  tl_tensor *out = tl_from_data(R->ctx, dt, s->kept, s->kshape, buf);
  free(buf);
  return tlrt_check(R, out, line, col);
}

tl_tensor *tlrt_index(tlrt *R, tl_tensor *t, int n, const tlrt_ix *spec, int line, int col) {
  tlrt_sel s;
  select_parts(R, t, n, spec, &s, line, col);
  bool ranges = false;
  for (int i = 0; i < n; i++) ranges |= spec[i].is_range;
  if (!ranges && !tl_requires_grad(t)) return index_copy(R, t, &s, line, col); /* history needs the view */
  tl_tensor *part = tlrt_check(R, tl_shrink(t, s.lo, s.hi), line, col);
  if (s.kept == s.ndim) return part;
  tl_tensor *out = tl_reshape(part, s.kept, s.kshape); /* the indexed axes (size 1) go */
  tl_release(part);
  return tlrt_check(R, out, line, col);
}

/* v's shape lined up with the selection's from the right (numpy broadcasting; v may
 * have extra leading 1s): v's element stride under each kept axis, 0 where it repeats */
static void broadcast_strides(tlrt *R, tl_tensor *v, const tlrt_sel *s, int64_t *vstride, int line, int col) {
  int64_t vshape[TL_MAX_DIMS], stride[TL_MAX_DIMS], acc = 1;
  int vnd = tensor_shape(v, vshape), skip = 0;
  for (int i = vnd - 1; i >= 0; i--) stride[i] = acc, acc *= vshape[i];
  while (vnd - skip > s->kept && vshape[skip] == 1) skip++;
  bool ok = vnd - skip <= s->kept;
  for (int k = 0; ok && k < s->kept; k++) {
    int j = k - s->kept + vnd; /* v's axis under kept axis k (none when j < skip) */
    vstride[k] = j < skip || vshape[j] == 1 ? 0 : stride[j];
    ok = j < skip || vshape[j] == 1 || vshape[j] == s->kshape[k];
  }
  if (ok) return;
  char vt[TL_SHAPE_TEXT_MAX], st[TL_SHAPE_TEXT_MAX];
  tl_format_shape(vt, sizeof vt, vnd, vshape);
  tl_format_shape(st, sizeof st, s->kept, s->kshape);
  tlrt_fail(R, line, col, "cannot store a tensor of shape %s into a selection of shape %s", vt, st);
}

/* dst[selection] = src broadcast, element by element (an odometer over the kept axes) */
static void strided_copy(void *dst, tl_dtype dt, const tlrt_sel *s, const void *src, tl_dtype st,
                         const int64_t *vstride) {
  int64_t tstride[TL_MAX_DIMS], dstride[TL_MAX_DIMS], idx[TL_MAX_DIMS] = {0}, doff = 0, soff = 0, total = 1, acc = 1;
  for (int a = s->ndim - 1; a >= 0; a--) tstride[a] = acc, acc *= s->shape[a];
  for (int a = 0, k = 0; a < s->ndim; a++) {
    doff += s->lo[a] * tstride[a];
    if (!s->drop[a]) dstride[k++] = tstride[a];
  }
  for (int k = 0; k < s->kept; k++) total *= s->kshape[k];
  for (int64_t e = 0; e < total; e++) {
    convert_elem(dst, dt, doff, src, st, soff);
    for (int k = s->kept - 1; k >= 0; k--) {
      doff += dstride[k], soff += vstride[k];
      if (++idx[k] < s->kshape[k]) break;
      doff -= dstride[k] * s->kshape[k], soff -= vstride[k] * s->kshape[k], idx[k] = 0;
    }
  }
}

void tlrt_store(tlrt *R, tl_tensor **t, int n, const tlrt_ix *spec, tl_tensor *v, int line, int col) {
  tlrt_sel s;
  int64_t vstride[TL_MAX_DIMS];
  select_parts(R, *t, n, spec, &s, line, col);
  if (!v) engine_fail(R, line, col);
  broadcast_strides(R, v, &s, vstride, line, col);
  const void *src = tl_data(v);
  if (!src) engine_fail(R, line, col);
  tl_dtype dt = tl_get_dtype(*t), st = tl_get_dtype(v);
  size_t vbytes = (size_t)tl_numel(v) * tl_dtype_size(st), tbytes = (size_t)tl_numel(*t) * tl_dtype_size(dt);
  char *dst = tensor_unique(R, t, line, col);
  void *tmp = NULL;
  if ((const char *)src < dst + tbytes && dst < (const char *)src + vbytes) { /* t[..] = t: read a copy */
    if (!(tmp = malloc(vbytes))) out_of_memory(R, vbytes);
    src = memcpy(tmp, src, vbytes);
  }
  strided_copy(dst, dt, &s, src, st, vstride);
  free(tmp);
}

/* ---- construction and scalars ----------------------------------------------------- */
tl_tensor *tlrt_from_f64(tlrt *R, tl_dtype dt, int ndim, const int64_t *shape, const double *v) {
  int64_t numel = 1;
  for (int a = 0; a < ndim; a++) numel *= shape[a] > 0 ? shape[a] : 0;
  size_t bytes = (size_t)numel * tl_dtype_size(dt);
  void *data = malloc(bytes ? bytes : 1);
  if (!data) out_of_memory(R, bytes);
  for (int64_t i = 0; i < numel; i++) write_f64(data, dt, i, v[i]);
  tl_tensor *t = tl_from_data(R->ctx, dt, ndim, shape, data);
  free(data);
  return t;
}

/* an array literal of dtype dt (i64): its values as written (through a double, 2^53 + 1
 * would round) */
tl_tensor *tlrt_from_i64(tlrt *R, tl_dtype dt, int ndim, const int64_t *shape, const int64_t *v) {
  int64_t numel = 1;
  for (int a = 0; a < ndim; a++) numel *= shape[a] > 0 ? shape[a] : 0;
  int64_t one = 0;
  return tl_from_data(R->ctx, dt, ndim, shape, numel ? (const void *)v : &one);
}

tl_tensor *tlrt_scalar(tlrt *R, tl_dtype dt, double v) {
  double data[1];
  write_f64(data, dt, 0, v);
  return tl_from_data(R->ctx, dt, 0, NULL, data);
}

int tlrt_shape(tlrt *R, tl_tensor *shape, int64_t *dims, int line, int col) {
  if (!shape) engine_fail(R, line, col);
  tl_dtype dt = tl_get_dtype(shape);
  bool fl = dt == TL_F32 || dt == TL_F64; /* the seed's float shape tensor: whole numbers */
  if ((dt != TL_I64 && dt != TL_I32 && !fl) || tl_ndim(shape) > 1) tlrt_fail(R, line, col, "a shape must be a 1-D integer tensor");
  int64_t n = tl_numel(shape);
  if (n > TL_MAX_DIMS)
    tlrt_fail(R, line, col, "a shape has at most %d dims, this one has %" PRId64, TL_MAX_DIMS, n);
  const void *d = tl_data(shape);
  if (!d) engine_fail(R, line, col);
  for (int i = 0; i < n; i++) {
    double x = fl ? read_f64(d, dt, i) : 0;
    if (fl && (x != floor(x) || fabs(x) > 9e15)) tlrt_fail(R, line, col, "a shape's sizes are whole numbers, not %g", x);
    dims[i] = fl ? (int64_t)x : read_i64(d, dt, i);
  }
  for (int i = 0; i < n; i++)
    if (dims[i] < 0) {
      char st[TL_SHAPE_TEXT_MAX];
      tl_format_shape(st, sizeof st, (int)n, dims);
      tlrt_fail(R, line, col, "a shape cannot have a negative size: %s", st);
    }
  return (int)n;
}

double tlrt_item(tlrt *R, tl_tensor *t, int line, int col) {
  if (!t) engine_fail(R, line, col);
  if (tl_numel(t) != 1) {
    int64_t shape[TL_MAX_DIMS];
    char st[TL_SHAPE_TEXT_MAX];
    tl_format_shape(st, sizeof st, tensor_shape(t, shape), shape);
    tlrt_fail(R, line, col, "item() needs a tensor with one element, this one has shape %s", st);
  }
  double v = 0;
  tlrt_check_status(R, tl_item(t, &v), line, col);
  return v;
}

/* tl_grad's own message is kept for a tensor that requires grad but is no leaf */
tl_tensor *tlrt_grad(tlrt *R, tl_tensor *t, int line, int col) {
  if (!t) engine_fail(R, line, col);
  tl_tensor *g = tl_grad(t); /* a new handle: owned, nothing to retain */
  if (g) return g;
  if (tl_requires_grad(t)) engine_fail(R, line, col);
  tl_clear_error(R->ctx);
  tlrt_fail(R, line, col, "this tensor has no gradient (did backward() run, and does it require grad?)");
}

void tlrt_print_mem_stats(tlrt *R, FILE *out) {
  tl_stats e = tl_get_stats(R->ctx);
  const tlrt_stats *o = &R->stats;
  if (!out) out = stderr;
  fprintf(out, "mem: tensors live=%" PRIu64 " created=%" PRIu64 " retains=%" PRIu64 " releases=%" PRIu64
               " cow_clones=%" PRIu64 "\n",
          e.live_tensors, e.tensors_created, e.retains, e.releases, o->tensor_clones);
  fprintf(out, "mem: objects live=%" PRIu64 " created=%" PRIu64 " retains=%" PRIu64 " releases=%" PRIu64
               " cow_clones=%" PRIu64 "\n",
          o->objects_live, o->objects_created, o->retains, o->releases, o->cow_clones);
  fprintf(out, "mem: bytes live=%" PRIu64 " peak=%" PRIu64 "\n", e.live_bytes, e.peak_bytes);
  if (e.device_allocs) /* a device backend's memory (opencl) */
    fprintf(out, "mem: device buffers=%" PRIu64 " bytes=%" PRIu64 " peak=%" PRIu64 " allocations=%" PRIu64 "\n",
            e.device_buffers, e.device_bytes, e.device_peak_bytes, e.device_allocs);
}
