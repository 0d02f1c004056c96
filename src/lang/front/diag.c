/* diag.c — rendering compile errors with their source line and a caret. */
#include "lang/front/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

void tl_diag_init(tl_diag *d, const char *file, const char *src, size_t len) {
  memset(d, 0, sizeof *d);
  d->file = file ? file : "<input>";
  d->src = src;
  d->len = len;
}

void tl_diag_free(tl_diag *d) {
  tl_strbuf_free(&d->text);
  free(d->at);
  d->at = NULL;
  d->nat = d->capat = 0;
}

/* the start of line `line` (from 1) and its length, without the newline */
static const char *line_text(tl_diag *d, int line, size_t *n) {
  const char *p = d->src, *end = d->src + d->len;
  int l = 1;
  if (d->seen_line >= 1 && d->seen_line <= line) l = d->seen_line, p += d->seen_at;
  for (; l < line && p < end; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : end;
  }
  d->seen_line = l;
  d->seen_at = (size_t)(p - d->src);
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  *n = (size_t)((nl ? nl : end) - p);
  return p;
}

void tl_diag_error(tl_diag *d, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tl_diag_verror(d, line, col, fmt, ap);
  va_end(ap);
}

/* an error or a warning, with its source line and caret */
static void report(tl_diag *d, bool warning, int line, int col, const char *fmt, va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (warning) d->warnings++;
  else d->errors++;
  if (tl_vec_grow(&d->at, &d->capat, (size_t)d->nat + 1, sizeof *d->at)) d->at[d->nat++] = (struct tl_diag_at){line, col, d->text.len, warning};
  tl_strbuf_printf(&d->text, "%s:%d:%d: %s: %s\n", d->file, line, col, warning ? "warning" : "error", msg);
  size_t n;
  const char *text = line_text(d, line, &n);
  tl_strbuf_printf(&d->text, "%.*s\n", (int)n, text);
  for (int i = 1; i < col; i++) /* tabs stay tabs so the caret lines up */
    tl_strbuf_puts(&d->text, (size_t)(i - 1) < n && text[i - 1] == '\t' ? "\t" : " ");
  tl_strbuf_puts(&d->text, "^\n");
  if (d->text.oom || d->nat < d->errors + d->warnings) d->oom = true;
}

void tl_diag_verror(tl_diag *d, int line, int col, const char *fmt, va_list ap) { report(d, false, line, col, fmt, ap); }

void tl_diag_warning(tl_diag *d, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(d, true, line, col, fmt, ap);
  va_end(ap);
}

void tl_diag_oom(tl_diag *d, int line, int col, const char *msg) {
  d->oom = true;
  tl_diag_error(d, line, col, "%s", msg);
}

void tl_diag_hint(tl_diag *d, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tl_strbuf_printf(&d->text, "  hint: %s\n", msg);
}

typedef struct {
  struct tl_diag_at at;
  int k; /* its index in d->at */
} placed;

static int by_place(const void *a, const void *b) {
  const struct tl_diag_at *x = &((const placed *)a)->at, *y = &((const placed *)b)->at;
  if (x->line != y->line) return x->line < y->line ? -1 : 1;
  if (x->col != y->col) return x->col < y->col ? -1 : 1;
  return x->start < y->start ? -1 : x->start > y->start; /* stable */
}

/* d->at stays in the order of the text (its starts increasing), so an error's text runs
 * to the next one's start */
void tl_diag_sort(tl_diag *d) {
  if (d->nat < 2 || d->text.oom || !d->text.data || d->nat != d->errors + d->warnings) return;
  placed *order = malloc(sizeof *order * (size_t)d->nat);
  char *text = malloc(d->text.len + 1);
  if (order && text) {
    for (int i = 0; i < d->nat; i++) order[i] = (placed){d->at[i], i};
    qsort(order, (size_t)d->nat, sizeof *order, by_place);
    size_t n = 0;
    for (int i = 0; i < d->nat; i++) {
      int k = order[i].k;
      size_t from = d->at[k].start, to = k + 1 < d->nat ? d->at[k + 1].start : d->text.len;
      memcpy(text + n, d->text.data + from, to - from);
      order[i].at.start = n;
      n += to - from;
    }
    memcpy(d->text.data, text, n);
    for (int i = 0; i < d->nat; i++) d->at[i] = order[i].at;
  }
  free(order);
  free(text);
}

void tl_diag_limit(tl_diag *d, int max) {
  if (max < 0 || d->nat <= max || d->text.oom || !d->text.data || d->nat != d->errors + d->warnings) return;
  int errors = 0, warnings = 0; /* of those cut */
  for (int i = max; i < d->nat; i++) d->at[i].warning ? warnings++ : errors++;
  d->text.len = d->at[max].start; /* the text of the diagnostics after the first max */
  d->text.data[d->text.len] = 0;
  if (errors)
    tl_strbuf_printf(&d->text, "... and %d more error%s%s", errors, errors == 1 ? "" : "s", warnings ? " and " : "\n");
  else tl_strbuf_puts(&d->text, "... and ");
  if (warnings) tl_strbuf_printf(&d->text, "%d more warning%s\n", warnings, warnings == 1 ? "" : "s");
}

/* ---- did you mean ---- */

#define SUGGEST_MAX_LEN 64 /* longer names are not compared: no one misspells those */

void tl_suggest_init(tl_suggest *g, const char *name) {
  g->name = name;
  g->best = NULL;
  g->dist = (int)(strlen(name) > 3 ? strlen(name) : 3) / 3 + 1; /* a candidate must come closer */
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* optimal string alignment distance (Damerau-Levenshtein, each substring edited once) */
static int edit_distance(const char *a, size_t n, const char *b, size_t m) {
  int d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int cost = a[i - 1] != b[j - 1], v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[n][m];
}

void tl_suggest_add(tl_suggest *g, const char *candidate) {
  size_t n = strlen(g->name), m = strlen(candidate);
  if (!m || n > SUGGEST_MAX_LEN || m > SUGGEST_MAX_LEN || !strcmp(g->name, candidate)) return;
  bool fold = n == m;
  for (size_t i = 0; fold && i < n; i++) fold = lower((unsigned char)g->name[i]) == lower((unsigned char)candidate[i]);
  int dist = fold ? 0 : (size_t)abs((int)n - (int)m) >= (size_t)g->dist ? g->dist : edit_distance(g->name, n, candidate, m);
  if (dist < g->dist && (fold || (size_t)dist < n)) /* `x` for `z` shares nothing: no hint */
    g->best = candidate, g->dist = dist;
}

void tl_suggest_hint(const tl_suggest *g, tl_diag *d, const char *prefix) {
  if (g->best) tl_diag_hint(d, "did you mean `%s%s`?", prefix ? prefix : "", g->best);
}
