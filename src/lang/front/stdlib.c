/* stdlib.c — the library types written in TL itself (the files of src/lang/std, embedded by the
 * Makefile): a program's text in, the library's items joined to the program out.
 * A file's header says what it is and when it is wanted:
 *   `// std: Name`       the type (or trait) it declares (the first line);
 *   `// when: A::b`      wanted when a unit's text says `A::b` (or `impl Error`...);
 *                        without a `when` line, when a unit names the type at all;
 *   `// needs: Other`    another library file it uses.
 * A wanted file whose type the program declares itself is left out: the program's own
 * `struct Path` wins. Each file is lexed and parsed as a `mod` file is, into a unit of
 * its own named `<std>/FILE`, so a message inside it points at the library's line. */
#include "lang/front/stdlib.h"

#include <stdlib.h>
#include <string.h>


typedef struct {
  const char *file, *text;
} std_file;

static const std_file files[] = {
#include "tl_stdlib.inc" /* {"file.tl", "text"} rows (Makefile) */
};
enum { NFILES = sizeof files / sizeof files[0] };

static bool ident_char(char c) { return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* the identifier after `prefix` at the start of a header line of text, copied to out */
static const char *header_word(const char *text, const char *prefix, const char *from, char *out, size_t cap) {
  size_t n = strlen(prefix);
  out[0] = 0;
  for (const char *p = strstr(from, prefix); p; p = strstr(p + 1, prefix)) {
    if (p != text && p[-1] != '\n') continue;
    size_t k = 0;
    const char *q = p + n;
    while (q[k] && q[k] != '\n' && k + 1 < cap) k++;
    memcpy(out, q, k);
    out[k] = 0;
    return q + k;
  }
  return NULL;
}

/* does t (up to end) say pattern, as tokens: `File::open` or `impl Error`, spaces
 * between the pieces allowed, each word whole? */
static bool says_at(const char *t, const char *end, const char *pat) {
  while (*pat) {
    bool gap = *pat == ' ';
    while (*pat == ' ') pat++;
    const char *t0 = t;
    while (t < end && (*t == ' ' || *t == '\t' || *t == '\n')) t++;
    if (gap && t == t0) return false; /* `implError` is not `impl Error` */
    const char *w = pat;
    while (ident_char(*pat)) pat++;
    size_t n = (size_t)(pat - w);
    if (n) {
      if ((size_t)(end - t) < n || memcmp(t, w, n) || (t + n < end && ident_char(t[n]))) return false;
      t += n;
    } else if (*pat) { /* punctuation: `::` */
      if (t == end || *t != *pat) return false;
      t++, pat++;
    }
  }
  return true;
}

/* text holds len bytes (a program's text need not end in NUL) */
static bool says(const char *text, size_t len, const char *pat) {
  for (const char *p = text, *end = text + len; p < end; p++)
    if ((p == text || !ident_char(p[-1])) && says_at(p, end, pat)) return true;
  return false;
}

/* does the program's text (src, then its `mod` units) say pat? */
static bool program_says(const tl_program *prog, int nunits, const char *src, size_t len, const char *pat) {
  if (src && says(src, len, pat)) return true;
  for (int u = 1; u < nunits; u++)
    if (prog->units[u].src && says(prog->units[u].src, strlen(prog->units[u].src), pat)) return true;
  return false;
}

/* is file i wanted by the program? */
static bool wanted(const tl_program *prog, int nunits, const char *src, size_t len, int i) {
  char name[64], pat[64];
  header_word(files[i].text, "// std: ", files[i].text, name, sizeof name);
  bool any_when = false;
  for (const char *at = files[i].text; (at = header_word(files[i].text, "// when: ", at, pat, sizeof pat));) {
    any_when = true;
    if (program_says(prog, nunits, src, len, pat)) return true;
  }
  return !any_when && program_says(prog, nunits, src, len, name);
}

static bool declared(const tl_program *prog, const char *text) {
  char name[64];
  header_word(text, "// std: ", text, name, sizeof name);
  for (const tl_ast_item *it = prog->items; it; it = it->next)
    if ((it->kind == TL_ITEM_STRUCT || it->kind == TL_ITEM_ENUM || it->kind == TL_ITEM_TRAIT) && it->name &&
        !strcmp(it->name, name))
      return true;
  return false;
}

/* file i's `needs` are wanted too */
static void mark_needs(int i, bool *use) {
  char need[64], name[64];
  for (const char *at = files[i].text; (at = header_word(files[i].text, "// needs: ", at, need, sizeof need));)
    for (int j = 0; j < NFILES; j++) {
      header_word(files[j].text, "// std: ", files[j].text, name, sizeof name);
      if (!strcmp(name, need) && !use[j]) {
        use[j] = true;
        mark_needs(j, use);
      }
    }
}

static char *dup(const char *s) {
  char *d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

/* parses file i into a new unit and puts its items at the program's end (the program's
 * own text keeps its entity ids) */
static bool splice(tl_program *prog, int i, tl_arena *arena) {
  if (!prog->units || prog->nunits > TL_MAX_MODULES) return false;
  int u = prog->nunits++;
  tl_unit *unit = &prog->units[u];
  char path[80];
  snprintf(path, sizeof path, "<std>/%s", files[i].file);
  *unit = (tl_unit){.path = dup(path), .src = dup(files[i].text)};
  unit->diag = calloc(1, sizeof *unit->diag);
  if (!unit->path || !unit->src || !unit->diag) return false;
  tl_diag_init(unit->diag, unit->path, unit->src, strlen(unit->src));
  tl_program *mp = tl_modules_parse_unit(prog, u, arena);
  if (!mp || !mp->items || unit->diag->errors) return false;
  tl_ast_item **tail = &prog->items;
  while (*tail) tail = &(*tail)->next;
  *tail = mp->items;
  return true;
}

int tl_stdlib_load(tl_program *prog, const char *src, size_t len, tl_diag *diag, tl_arena *arena) {
  bool use[NFILES > 0 ? NFILES : 1] = {false};
  int nunits = prog->units ? prog->nunits : 0; /* the program's own, not the library's */
  for (int i = 0; i < NFILES; i++)
    if (!use[i] && wanted(prog, nunits, src, len, i)) {
      use[i] = true;
      mark_needs(i, use);
    }
  int errors = 0;
  for (int i = 0; i < NFILES; i++)
    if (use[i] && !declared(prog, files[i].text) && !splice(prog, i, arena)) {
      tl_diag_error(diag, 1, 1, "cannot load the library file <std>/%s", files[i].file);
      errors++;
    }
  return errors;
}
