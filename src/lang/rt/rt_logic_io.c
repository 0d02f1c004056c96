/* rt_logic_io.c — Soufflé's `.input edge` and `.output path` in compiled programs
 * (docs/logic.md, Files): a relation's tuples read from a delimited file before `main`
 * (all of a file or none: it is parsed whole before a tuple goes in, and a malformed
 * line is a run-time error naming the file, line and column), and written after it,
 * one tuple a line, fields joined by the delimiter, entities as their names. Fields
 * are raw text: no quoting (Soufflé's default). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/rt/rt.h"
#include "logic/logic.h" /* the relations' column types */

/* the file's bytes, NUL-terminated (*len without it); NULL with errno set */
static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *b = malloc(cap);
  for (size_t got; b && (got = fread(b + n, 1, cap - n - 1, f)) > 0;) {
    n += got;
    if (cap - n - 1 == 0) {
      char *nb = cap < ((size_t)1 << 40) ? realloc(b, cap * 2) : NULL;
      if (!nb) free(b), b = NULL, errno = ENOMEM;
      else b = nb, cap *= 2;
    }
  }
  if (b && ferror(f)) free(b), b = NULL, errno = EIO;
  fclose(f);
  if (b) b[n] = 0, *len = n;
  return b;
}

typedef struct {
  int64_t *vals;   /* rows; an entity column holds the offset of its name in the text */
  size_t n, cap;
} rows;

static bool push(rows *r, int64_t v) {
  if (r->n == r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 256;
    int64_t *nv = realloc(r->vals, cap * sizeof *nv);
    if (!nv) return false;
    r->vals = nv, r->cap = cap;
  }
  r->vals[r->n++] = v;
  return true;
}

/* a field that must be a whole i64 */
static bool parse_int(const char *s, int64_t *out) {
  if (!*s) return false;
  errno = 0;
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*end || errno == ERANGE || s[0] == ' ' || s[0] == '\t') return false;
  *out = v;
  return true;
}

/* parses text (modified: fields NUL-terminated in place) into r; 0, or the 1-based
 * line and column of the first error with its message in msg */
static int parse_rows(char *text, size_t len, char delim, const tl_logic_rel *rel, rows *r, int64_t *line, int64_t *col,
                      char *msg, size_t cap) {
  int64_t ln = 1;
  for (char *p = text; p < text + len; ln++) {
    char *eol = memchr(p, '\n', (size_t)(text + len - p));
    if (!eol) eol = text + len;
    char *end = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
    *end = 0;
    if (end == p && rel->arity > 0) { /* an empty line holds no tuple */
      p = eol + 1;
      continue;
    }
    char *f = p;
    for (int c = 0; c < rel->arity; c++) {
      char *d = c + 1 < rel->arity ? strchr(f, delim) : NULL;
      if (c + 1 < rel->arity && !d) {
        *line = ln, *col = (int64_t)(end - p) + 1;
        snprintf(msg, cap, "`%s` has %d columns, and this line ends after %d", rel->name, rel->arity, c + 1);
        return 1;
      }
      if (d) *d = 0;
      if (c + 1 == rel->arity && strchr(f, delim)) {
        *line = ln, *col = (int64_t)(strchr(f, delim) - p) + 1;
        snprintf(msg, cap, "`%s` has %d column%s, and this line has more", rel->name, rel->arity, rel->arity == 1 ? "" : "s");
        return 1;
      }
      int64_t v;
      if (rel->type[c] == TL_KB_INT) {
        if (!parse_int(f, &v)) {
          *line = ln, *col = (int64_t)(f - p) + 1;
          snprintf(msg, cap, "column %d of `%s` holds integers, not `%.40s`", c + 1, rel->name, f);
          return 1;
        }
      } else v = f - text;
      if (!push(r, v)) {
        *line = ln, *col = 1;
        snprintf(msg, cap, "out of memory");
        return 1;
      }
      f = d ? d + 1 : f;
    }
    if (rel->arity == 0 && !push(r, 0)) return snprintf(msg, cap, "out of memory"), *line = ln, *col = 1, 1;
    p = eol + 1;
  }
  return 0;
}

void tlrt_logic_input(tlrt *R, const tlrt_lio *io) {
  tl_kb *kb = R->kb;
  int r = tl_logic_find_rel(kb, io->rel);
  const tl_logic_rel *rel = &kb->rels[r];
  size_t len = 0;
  char *text = slurp(io->path, &len);
  if (!text) tlrt_fail(R, io->line, io->col, "`.input %s`: cannot read %s: %s", io->rel, io->path, strerror(errno));
  rows rw = {0};
  int64_t line = 0, col = 0;
  char msg[300];
  bool bad = parse_rows(text, len, io->delim[0], rel, &rw, &line, &col, msg, sizeof msg);
  /* the entities' names, once the whole file is good */
  for (size_t i = 0; !bad && rel->arity && i < rw.n; i++)
    if (rel->type[i % (size_t)rel->arity] == TL_KB_ENTITY && (rw.vals[i] = tl_kb_entity(kb, text + rw.vals[i])) < 0)
      bad = true, line = 0, snprintf(msg, sizeof msg, "out of memory");
  int64_t nrows = rel->arity ? (int64_t)(rw.n / (size_t)rel->arity) : (int64_t)(rw.n > 0);
  if (!bad && nrows && tl_kb_facts(kb, io->rel, nrows, rw.vals) != TL_OK)
    bad = true, line = 0, snprintf(msg, sizeof msg, "%s", tl_last_error(R->ctx));
  free(text);
  free(rw.vals);
  if (bad && line)
    tlrt_fail(R, io->line, io->col, "`.input %s`: %s:%lld:%lld: %s (nothing of it was loaded)", io->rel, io->path,
              (long long)line, (long long)col, msg);
  if (bad) tlrt_fail(R, io->line, io->col, "`.input %s`: %s: %s", io->rel, io->path, msg);
}

/* one relation's tuples, ascending, to f */
static bool write_rel(tlrt *R, const tlrt_lio *io, FILE *f) {
  tl_kb *kb = R->kb;
  const tl_logic_rel *rel = &kb->rels[tl_logic_find_rel(kb, io->rel)];
  tl_kb_term vars[TL_KB_MAX_ARITY];
  char names[TL_KB_MAX_ARITY][8];
  for (int c = 0; c < rel->arity; c++) snprintf(names[c], sizeof names[c], "c%d", c), vars[c] = tl_kb_var(names[c]);
  tl_tensor *t = tl_kb_query(kb, io->rel, rel->arity, vars);
  if (!t) return false;
  if (rel->arity == 0) {
    if (*(const float *)tl_data(t) != 0) fputc('\n', f);
  } else {
    const int64_t *d = tl_data(t);
    for (int64_t i = 0; d && i < tl_dim(t, 0); i++)
      for (int c = 0; c < rel->arity; c++) {
        int64_t v = d[i * rel->arity + c];
        if (rel->type[c] == TL_KB_ENTITY) fputs(tl_kb_entity_name(kb, v), f);
        else fprintf(f, "%lld", (long long)v);
        fputc(c + 1 < rel->arity ? io->delim[0] : '\n', f);
      }
  }
  tl_release(t);
  return true;
}

void tlrt_logic_output(tlrt *R, const tlrt_lprog *P) {
  for (int i = 0; i < P->nio; i++) {
    const tlrt_lio *io = &P->io[i];
    if (!io->output) continue;
    if (!io->path) {
      if (!write_rel(R, io, R->out)) tlrt_fail(R, io->line, io->col, "`.output %s`: %s", io->rel, tl_last_error(R->ctx));
      continue;
    }
    FILE *f = fopen(io->path, "w");
    if (!f) tlrt_fail(R, io->line, io->col, "`.output %s`: cannot write %s: %s", io->rel, io->path, strerror(errno));
    bool ok = write_rel(R, io, f);
    if (fclose(f) != 0 && ok) tlrt_fail(R, io->line, io->col, "`.output %s`: cannot write %s: %s", io->rel, io->path, strerror(errno));
    if (!ok) tlrt_fail(R, io->line, io->col, "`.output %s`: %s", io->rel, tl_last_error(R->ctx));
  }
}
