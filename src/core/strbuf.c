#include "strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

static bool reserve(tl_strbuf *s, size_t extra) {
  if (s->oom) return false;
  if (extra < s->cap - s->len) return true; /* room for the text and its NUL */
  size_t need = s->len + extra + 1;
  if (need < 64) need = 64; /* most texts are lines and short kernels: start at 64 bytes */
  if (extra > SIZE_MAX - 1 - s->len || !tl_vec_grow(&s->data, &s->cap, need, 1)) {
    s->oom = true;
    return false;
  }
  return true;
}

void tl_strbuf_printf(tl_strbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || !reserve(s, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  s->len += (size_t)n;
}

void tl_strbuf_puts(tl_strbuf *s, const char *text) { tl_strbuf_putn(s, text, strlen(text)); }

void tl_strbuf_putn(tl_strbuf *s, const char *text, size_t n) {
  if (!reserve(s, n)) return;
  memcpy(s->data + s->len, text, n);
  s->len += n;
  s->data[s->len] = 0;
}

void tl_strbuf_repeat(tl_strbuf *s, char c, size_t n) {
  if (!reserve(s, n)) return;
  memset(s->data + s->len, c, n);
  s->len += n;
  s->data[s->len] = 0;
}

bool tl_strbuf_read(tl_strbuf *s, FILE *f) {
  for (;;) {
    if (!reserve(s, 4096)) return true; /* reads a block at a time, at least 4 KiB */
    size_t got = fread(s->data + s->len, 1, s->cap - s->len - 1, f);
    s->len += got;
    s->data[s->len] = 0;
    if (!got) return !ferror(f);
  }
}

char *tl_strbuf_take(tl_strbuf *s) {
  if (s->oom || !reserve(s, 0)) {
    tl_strbuf_free(s);
    return NULL;
  }
  char *d = s->data;
  d[s->len] = 0;
  s->data = NULL;
  s->len = s->cap = 0;
  return d;
}

void tl_strbuf_free(tl_strbuf *s) {
  free(s->data);
  s->data = NULL;
  s->len = s->cap = 0;
  s->oom = false;
}
