/* strbuf.h — the library's one growable string, for source text, reports and printed
 * arrays. An append that runs out of memory is dropped and remembered: take says so. */
#ifndef TL_CORE_STRBUF_H
#define TL_CORE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/error.h"

typedef struct {
  char *data;
  size_t len, cap;
  bool oom;
} tl_strbuf;

void tl_strbuf_printf(tl_strbuf *s, const char *fmt, ...) TL_PRINTF(2, 3);
void tl_strbuf_puts(tl_strbuf *s, const char *text);
void tl_strbuf_putn(tl_strbuf *s, const char *text, size_t n); /* the first n bytes of text */
void tl_strbuf_repeat(tl_strbuf *s, char c, size_t n);            /* n copies of c */
/* appends the rest of stream f (a whole file's text); false on a read error (errno
 * says which). Running out of memory is the buffer's oom, as for any append. */
bool tl_strbuf_read(tl_strbuf *s, FILE *f);
/* hands the string over (caller frees); NULL if any append ran out of memory */
char *tl_strbuf_take(tl_strbuf *s);
void tl_strbuf_free(tl_strbuf *s);

#endif
