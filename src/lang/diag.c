/* diag.c — rendering compile errors with their source line and a caret. */
#include "lang/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void tl_diag_init(tl_diag *d, const char *file, const char *src, size_t len) {
  memset(d, 0, sizeof *d);
  d->file = file ? file : "<input>";
  d->src = src;
  d->len = len;
}

void tl_diag_free(tl_diag *d) { tl_strbuf_free(&d->text); }

/* the start of line `line` (from 1) and its length, without the newline */
static const char *line_text(const tl_diag *d, int line, size_t *n) {
  const char *p = d->src, *end = d->src + d->len;
  for (int l = 1; l < line && p < end; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : end;
  }
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  *n = (size_t)((nl ? nl : end) - p);
  return p;
}

void tl_diag_error(tl_diag *d, int line, int col, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  d->errors++;
  tl_strbuf_printf(&d->text, "%s:%d:%d: error: %s\n", d->file, line, col, msg);
  size_t n;
  const char *text = line_text(d, line, &n);
  tl_strbuf_printf(&d->text, "%.*s\n", (int)n, text);
  for (int i = 1; i < col; i++) /* tabs stay tabs so the caret lines up */
    tl_strbuf_puts(&d->text, (size_t)(i - 1) < n && text[i - 1] == '\t' ? "\t" : " ");
  tl_strbuf_puts(&d->text, "^\n");
}

void tl_diag_hint(tl_diag *d, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tl_strbuf_printf(&d->text, "  hint: %s\n", msg);
}
