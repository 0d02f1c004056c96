/* strbuf.h — a growable string for building source text and reports. */
#ifndef TL_CORE_STRBUF_H
#define TL_CORE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef struct {
  char *data;
  size_t len, cap;
  bool oom;
} tl_strbuf;

void tl_strbuf_printf(tl_strbuf *s, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_strbuf_puts(tl_strbuf *s, const char *text);
void tl_strbuf_putn(tl_strbuf *s, const char *text, size_t n); /* the first n bytes of text */
/* hands the string over (caller frees); NULL if any append ran out of memory */
char *tl_strbuf_take(tl_strbuf *s);
void tl_strbuf_free(tl_strbuf *s);

#endif
