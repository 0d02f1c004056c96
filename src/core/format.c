/* format.c — numpy-compatible text of a host array.
 *
 * Reproduces numpy 1.24 str(array) with the default print options
 * (precision=8, floatmode='maxprec', suppress=False, threshold=1000,
 * edgeitems=3, linewidth=75). The structure follows numpy/core/arrayprint.py:
 *   1. pick the elements that will be shown (all, or the edge items of every
 *      axis once the array has more than 1000 elements),
 *   2. derive one element format from those shown elements only (common
 *      width, fixed or scientific notation, digits),
 *   3. lay the elements out recursively (_formatArray), wrapping long rows.
 * Float digits come from printf, which is exact in glibc: the shortest
 * round-tripping digit count is found by trying %.*e with growing precision,
 * then printf rounds the exact binary value, as numpy's Dragon4 does. */
#include "format.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "scalar.h"
#include "strbuf.h"

enum { PRECISION = 8, THRESHOLD = 1000, EDGEITEMS = 3, LINEWIDTH = 75 };

/* ---- float digits --------------------------------------------------------- */

/* Fewest significant digits that read back as x at the element precision
 * (float for f32: 0.1f is "0.1", not "0.100000001"; f16 and bf16 likewise); *e10 gets the decimal
 * exponent of that rounding and buf (48 chars) its %e text. */
/* x rounded to dt's precision (f16 and bf16 to nearest even, as the casts) */
static double in_dtype(double x, tl_dtype dt) {
  if (dt == TL_F32) return (float)x;
  if (dt == TL_F16) return tl_f16_to_f32(tl_f64_to_f16(x));
  if (dt == TL_BF16) return tl_bf16_to_f32(tl_f64_to_bf16(x));
  return x;
}

static int shortest_sig(double x, tl_dtype dt, int *e10, char *buf) {
  int p = 1;
  for (; p < 17; p++) {
    snprintf(buf, 48, "%.*e", p - 1, x);
    if (dt == TL_F32 ? strtof(buf, NULL) == (float)x : in_dtype(strtod(buf, NULL), dt) == in_dtype(x, dt)) break;
  }
  if (p == 17) snprintf(buf, 48, "%.16e", x);
  *e10 = atoi(strchr(buf, 'e') + 1);
  return p;
}

/* drops trailing zeros after the decimal point, keeping the point itself
 * (numpy's trim='.'); s must contain a '.' */
static void trim_zeros(char *s) {
  char *end = s + strlen(s);
  while (end[-1] == '0') end--;
  *end = '\0';
}

/* positional text with the shortest digits, at most `maxfrac` after the
 * point (maxfrac < 0: no limit); always keeps the '.' ("1.", "-0.").
 * Array elements ask numpy for min_digits=0, so Dragon4 goes on to the units
 * digit and whole numbers print exactly (f32 92713848 -> "92713848."); a
 * scalar stops at the shortest digits and pads with zeros ("92713850."). */
static void positional(double x, tl_dtype dt, int maxfrac, bool exact_whole, char *out, size_t n) {
  char sci[48];
  int e10, sig = shortest_sig(x, dt, &e10, sci);
  int frac = sig - 1 - e10;
  if (frac < 0 && !exact_whole) {
    char digits[48];
    size_t k = 0;
    for (const char *c = sci; *c != 'e'; c++)
      if (*c != '.') digits[k++] = *c;
    while (frac++ < 0 && k + 2 < sizeof digits) digits[k++] = '0';
    digits[k] = '\0';
    snprintf(out, n, "%s.", digits);
    return;
  }
  if (frac < 0) frac = 0;
  if (maxfrac >= 0 && frac > maxfrac) frac = maxfrac;
  snprintf(out, n, "%#.*f", frac, x);
  trim_zeros(out); /* only needed when maxfrac cut the digits */
}

/* scientific text with the shortest mantissa, at most `maxfrac` digits after
 * the point (maxfrac < 0: no limit), e.g. "1.e-05", "1.5e+20" */
static void scientific(double x, tl_dtype dt, int maxfrac, char *out, size_t n) {
  char sci[48];
  int e10, frac = shortest_sig(x, dt, &e10, sci) - 1;
  if (maxfrac >= 0 && frac > maxfrac) frac = maxfrac;
  snprintf(out, n, "%#.*e", frac, x);
  char *e = strchr(out, 'e');
  char exp[8];
  snprintf(exp, sizeof exp, "%s", e);
  *e = '\0';
  trim_zeros(out);
  strcat(out, exp);
}

/* ---- element format ------------------------------------------------------- */

typedef struct {
  tl_dtype dt;
  const void *data;
  int width;      /* ints: common width */
  bool exp_mode;  /* floats: scientific notation */
  int pad_left;   /* floats: chars before the '.' */
  int pad_right;  /* floats: chars after the '.' (fixed) or mantissa+exp */
  int prec;       /* scientific: mantissa digits after the point */
  int exp_size;   /* scientific: exponent digits */
  int precision;  /* numpy's print precision: most digits after the point */
} efmt;

static long long read_int(const efmt *f, int64_t i) { return tl_dtype_read_int(f->data, f->dt, i); }

/* an integer's digits: u64 read unsigned */
static int int_text(const efmt *f, int64_t i, int width, char *out, size_t n) {
  long long v = read_int(f, i);
  return f->dt == TL_U64 ? snprintf(out, n, "%*llu", width, (unsigned long long)v) : snprintf(out, n, "%*lld", width, v);
}

static double read_float(const efmt *f, int64_t i) { return tl_dtype_read(f->data, f->dt, i); }

/* length of the part before '.' and after it (up to 'e' if any) */
static void split_lens(const char *s, int *left, int *right) {
  const char *dot = strchr(s, '.');
  const char *e = strchr(s, 'e');
  *left = (int)(dot - s);
  *right = (int)((e ? e : s + strlen(s)) - dot - 1);
}

/* numpy's FloatingFormat.fillFormat: fixed vs scientific from the finite
 * non-zero magnitudes, then paddings from a first formatting pass */
static void fill_float(efmt *f, const int64_t *idx, int64_t n) {
  bool nonfinite = false, neginf = false, any = false;
  double maxv = 0, minv = 0;
  for (int64_t k = 0; k < n; k++) {
    double v = read_float(f, idx[k]);
    if (!isfinite(v)) {
      nonfinite = true;
      neginf |= isinf(v) && v < 0;
    } else if (v != 0) {
      double a = fabs(v);
      if (!any || a > maxv) maxv = a;
      if (!any || a < minv) minv = a;
      any = true;
    }
  }
  if (any) {
    /* numpy divides in the array's dtype (a float32 quotient can round or
     * overflow differently) */
    double ratio = in_dtype(maxv / minv, f->dt);
    f->exp_mode = maxv >= 1e8 || minv < 1e-4 || ratio > 1000.;
  }
  int left = 0, right = 0, expd = 0;
  for (int64_t k = 0; k < n; k++) {
    double v = read_float(f, idx[k]);
    if (!isfinite(v)) continue;
    char buf[64];
    int l, r;
    if (f->exp_mode) {
      scientific(v, f->dt, f->precision, buf, sizeof buf);
      int ed = (int)strlen(strchr(buf, 'e') + 2);
      if (ed > expd) expd = ed;
    } else {
      positional(v, f->dt, f->precision, true, buf, sizeof buf);
    }
    split_lens(buf, &l, &r);
    if (l > left) left = l;
    if (r > right) right = r;
  }
  f->pad_left = left;
  f->prec = right;
  f->exp_size = expd;
  f->pad_right = f->exp_mode ? expd + 2 + right : right;
  if (nonfinite) { /* "nan" / "inf" / "-inf" must fit in the common width */
    int off = f->pad_right + 1, inflen = 3 + neginf;
    if (3 - off > f->pad_left) f->pad_left = 3 - off;
    if (inflen - off > f->pad_left) f->pad_left = inflen - off;
  }
}

static void fill_format(efmt *f, const int64_t *idx, int64_t n) {
  if (tl_dtype_is_float(f->dt)) {
    fill_float(f, idx, n);
  } else if (tl_dtype_is_int(f->dt)) {
    for (int64_t k = 0; k < n; k++) {
      int l = int_text(f, idx[k], 0, NULL, 0);
      if (l > f->width) f->width = l;
    }
  }
}

/* one float of an array, padded to the common width */
static void format_float(const efmt *f, double v, char *out, size_t n) {
  if (!isfinite(v)) {
    const char *s = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
    snprintf(out, n, "%*s", f->pad_left + f->pad_right + 1, s);
    return;
  }
  char buf[64];
  int l, r;
  if (f->exp_mode) {
    /* every mantissa gets the same digit count; extra digits are the exact
     * digits of the value, as numpy's min_digits does */
    snprintf(buf, sizeof buf, "%#.*e", f->prec, v);
    char *e = strchr(buf, 'e');
    int ev = atoi(e + 1);
    *e = '\0';
    split_lens(buf, &l, &r);
    snprintf(out, n, "%*s%se%c%0*d", f->pad_left - l, "", buf, ev < 0 ? '-' : '+', f->exp_size,
             ev < 0 ? -ev : ev);
    return;
  }
  positional(v, f->dt, f->precision, true, buf, sizeof buf);
  split_lens(buf, &l, &r);
  snprintf(out, n, "%*s%s%*s", f->pad_left - l, "", buf, f->pad_right - r, "");
}

static void format_elem(const efmt *f, int64_t i, char *out, size_t n) {
  if (tl_dtype_is_float(f->dt))
    format_float(f, read_float(f, i), out, n);
  else if (tl_dtype_is_int(f->dt))
    int_text(f, i, f->width, out, n);
  else
    snprintf(out, n, "%s", read_int(f, i) ? " True" : "False");
}

/* a 0-d array prints as its numpy scalar: floats use the shortest digits,
 * positional between 1e-4 and 1e16 ("1.0", "0.5"), else "1e-05" style */
static void format_scalar(const efmt *f, char *out, size_t n) {
  if (!tl_dtype_is_float(f->dt)) {
    if (tl_dtype_is_int(f->dt))
      int_text(f, 0, 0, out, n);
    else
      snprintf(out, n, "%s", read_int(f, 0) ? "True" : "False");
    return;
  }
  double v = read_float(f, 0), a = fabs(v);
  if (!isfinite(v)) {
    snprintf(out, n, "%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
  } else if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    positional(v, f->dt, -1, false, out, n);
    if (out[strlen(out) - 1] == '.') strcat(out, "0"); /* trim '0': "1.0" */
  } else {
    scientific(v, f->dt, -1, out, n);
    char *dot = strchr(out, '.');
    if (dot[1] == 'e') memmove(dot, dot + 1, strlen(dot)); /* trim '-': "1e-05" */
  }
}

/* ---- layout (numpy's _formatArray) ---------------------------------------- */

typedef struct {
  const efmt *f;
  int ndim;
  const int64_t *shape;
  int64_t strides[64];
  bool summarize;
} layout;

/* the indices shown along an axis of length n; -1 marks the "..." slot */
static int64_t axis_items(const layout *L, int64_t n, int64_t k, int64_t *out_count) {
  bool sum = L->summarize && n > 2 * EDGEITEMS;
  *out_count = sum ? 2 * EDGEITEMS + 1 : n;
  if (!sum || k < EDGEITEMS) return k;
  if (k == EDGEITEMS) return -1;
  return n - (2 * EDGEITEMS + 1 - k);
}

/* collects the flat offsets of the shown elements into idx */
static void collect(const layout *L, int axis, int64_t off, int64_t *idx, int64_t *n) {
  if (axis == L->ndim) {
    idx[(*n)++] = off;
    return;
  }
  int64_t cnt;
  axis_items(L, L->shape[axis], 0, &cnt);
  for (int64_t k = 0; k < cnt; k++) {
    int64_t i = axis_items(L, L->shape[axis], k, &cnt);
    if (i >= 0) collect(L, axis + 1, off + i * L->strides[axis], idx, n);
  }
}

/* numpy's _extendLine: wrap before `word` unless the line holds nothing yet */
static void extend_line(tl_strbuf *s, tl_strbuf *line, const char *word, int width, int hang) {
  if ((int)(line->len + strlen(word)) > width && (int)line->len > hang) {
    size_t n = line->len;
    while (n > 0 && line->data[n - 1] == ' ') n--;
    tl_strbuf_putn(s, line->data, n);
    tl_strbuf_puts(s, "\n");
    line->len = 0;
    tl_strbuf_repeat(line, ' ', hang);
  }
  tl_strbuf_puts(line, word);
}

/* the last axis: elements separated by spaces, wrapped at `width` */
static void layout_row(const layout *L, int axis, int64_t off, int hang, int width, tl_strbuf *s) {
  tl_strbuf line = {0};
  tl_strbuf_repeat(&line, ' ', hang);
  int64_t cnt;
  axis_items(L, L->shape[axis], 0, &cnt);
  for (int64_t k = 0; k < cnt; k++) {
    int64_t i = axis_items(L, L->shape[axis], k, &cnt);
    char word[128];
    if (i < 0)
      snprintf(word, sizeof word, "...");
    else
      format_elem(L->f, off + i * L->strides[axis], word, sizeof word);
    extend_line(s, &line, word, width - 1, hang); /* -1 leaves room for ']' */
    if (k + 1 < cnt) tl_strbuf_puts(&line, " ");
  }
  tl_strbuf_putn(s, line.data ? line.data : "", line.len);
  s->oom |= line.oom;
  free(line.data);
}

/* appends "[...]" for the sub-array at `off` starting at `axis`; `hang` is the
 * indentation of continuation lines, `width` the line width left */
static void layout_axis(const layout *L, int axis, int64_t off, int hang, int width, tl_strbuf *out) {
  tl_strbuf s = {0};
  int left = L->ndim - axis;
  if (left == 1) {
    layout_row(L, axis, off, hang, width, &s);
  } else {
    int64_t cnt;
    axis_items(L, L->shape[axis], 0, &cnt);
    for (int64_t k = 0; k < cnt; k++) {
      int64_t i = axis_items(L, L->shape[axis], k, &cnt);
      tl_strbuf_repeat(&s, ' ', hang);
      if (i < 0)
        tl_strbuf_puts(&s, "...");
      else
        layout_axis(L, axis + 1, off + i * L->strides[axis], hang + 1, width - 1, &s);
      /* blocks of rank r are separated by r-1 newlines (blank lines) */
      if (k + 1 < cnt) tl_strbuf_repeat(&s, '\n', left - 1);
    }
  }
  tl_strbuf_puts(out, "[");
  if (s.data) tl_strbuf_puts(out, s.data + hang); /* the first line carries no indent */
  tl_strbuf_puts(out, "]");
  out->oom |= s.oom;
  free(s.data);
}

/* ---- shapes ----------------------------------------------------------------- */

const char *tl_format_shape(char *buf, size_t cap, int ndim, const int64_t *shape) {
  if (!cap) return buf;
  size_t used = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < ndim && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
  return buf;
}

/* ---- entry point ---------------------------------------------------------- */

char *tl_format_array(const void *data, tl_dtype dtype, int ndim, const int64_t *shape) {
  return tl_format_array_precision(data, dtype, ndim, shape, PRECISION);
}

char *tl_format_array_precision(const void *data, tl_dtype dtype, int ndim, const int64_t *shape, int precision) {
  if (precision < 0 || precision > 17) precision = PRECISION;
  if (!tl_dtype_valid(dtype) || ndim < 0 || ndim > 64 || (ndim > 0 && !shape)) return NULL;
  int64_t size = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0) return NULL;
    size *= shape[d];
  }
  if (size == 0) return strdup("[]");
  if (!data) return NULL;

  efmt f = {.dt = dtype, .data = data, .precision = precision};
  if (ndim == 0) {
    char buf[64];
    format_scalar(&f, buf, sizeof buf);
    return strdup(buf);
  }

  layout L = {.f = &f, .ndim = ndim, .shape = shape, .summarize = size > THRESHOLD};
  int64_t shown = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    L.strides[d] = d == ndim - 1 ? 1 : L.strides[d + 1] * shape[d + 1];
    shown *= L.summarize && shape[d] > 2 * EDGEITEMS ? 2 * EDGEITEMS : shape[d];
  }
  int64_t *idx = malloc((size_t)shown * sizeof *idx), n = 0;
  if (!idx) return NULL;
  collect(&L, 0, 0, idx, &n);
  fill_format(&f, idx, n);
  free(idx);

  tl_strbuf out = {0};
  layout_axis(&L, 0, 0, 1, LINEWIDTH, &out); /* hang 1: aligns under the '[' */
  return tl_strbuf_take(&out); /* NULL if an append ran out of memory */
}
