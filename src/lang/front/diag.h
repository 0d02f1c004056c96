/* diag.h — compile diagnostics of the TL language.
 * in: a file name, its source text, errors and warnings at (line, column); out: each
 * as `file:line:col: error: message` (or `warning:`), the source line and a caret
 * under the column, in the order reported (all of them, not only the first). A
 * warning does not fail the compilation. */
#ifndef TL_LANG_DIAG_H
#define TL_LANG_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/strbuf.h"

typedef struct {
  const char *file;
  const char *src;
  size_t len;
  tl_strbuf text; /* the rendered diagnostics */
  int errors, warnings;
  bool oom; /* an allocation failed while checking: the errors after it are its consequences */
  struct tl_diag_at { int line, col; size_t start; bool warning; } *at; /* where each one's text starts */
  int nat;
  size_t capat;
  int seen_line; /* the last line looked up and where it starts: errors mostly come */
  size_t seen_at; /* in order, so finding each line does not read the file from the top */
} tl_diag;

void tl_diag_init(tl_diag *d, const char *file, const char *src, size_t len);
void tl_diag_free(tl_diag *d);
/* line and col count from 1; col is a byte column */
void tl_diag_error(tl_diag *d, int line, int col, const char *fmt, ...) TL_PRINTF(4, 5);
void tl_diag_verror(tl_diag *d, int line, int col, const char *fmt, va_list ap);

/* a warning: `file:line:col: warning: message`, its line and caret; counted in
 * d->warnings, not in d->errors */
void tl_diag_warning(tl_diag *d, int line, int col, const char *fmt, ...) TL_PRINTF(4, 5);

/* an allocation failed: the error msg at (line, col), and d->oom set, so a caller can
 * say that alone (the errors after it are its consequences) */
void tl_diag_oom(tl_diag *d, int line, int col, const char *msg);

/* a hint under the last error or warning: `  hint: message` */
void tl_diag_hint(tl_diag *d, const char *fmt, ...) TL_PRINTF(2, 3);

/* "did you mean `zeros`?" under an error about a name not found: the candidates of
 * that kind (names in scope, builtins...) are offered one by one; the closest by
 * Damerau-Levenshtein distance (transpositions count one edit), at most a third of
 * the name's length away (at least one edit), as rustc does; a candidate that differs
 * only in case wins. */
typedef struct {
  const char *name; /* the name not found */
  const char *best; /* the closest candidate so far, NULL if none is close enough */
  int dist;         /* its distance */
} tl_suggest;
void tl_suggest_init(tl_suggest *g, const char *name);
void tl_suggest_add(tl_suggest *g, const char *candidate);
/* the hint under d's last error, when a candidate was close: prefix (`Tensor::`, or
 * "") is written before it */
void tl_suggest_hint(const tl_suggest *g, tl_diag *d, const char *prefix);

/* puts the errors in source order (phases report in their own order: the lexer's
 * come before the parser's); an error keeps its hints; equal places keep their order */
void tl_diag_sort(tl_diag *d);

/* keeps the first `max` errors and warnings (after sorting: the first in the file) and
 * ends the text with `... and N more errors` (`and M more warnings`): a file of garbage
 * gives a screenful, not thousands */
#define TL_DIAG_MAX_SHOWN 50
void tl_diag_limit(tl_diag *d, int max);

#endif
