/* prelude.c — library types written in TL itself (src/lang/prelude/NAME.tl), for the seed
 * language's programs: KVCache, NpyFile, NpzFile, SafeTensorsFile. A library's
 * `// needs: Name` line joins Name with it. A type's text is lexed, parsed and joined to
 * the program as a module's items are (a unit of its own, so a message inside it names
 * `<prelude KVCache>`), when the program names the type and declares no item of that
 * name itself. */
#include "lang/front/prelude.h"

#include <stdlib.h>
#include <string.h>

#include "lang/front/lex.h"
#include "lang/front/module.h"
#include "lang/front/parse.h"

static const struct {
  const char *name, *text;
} libs[] = {
#include "tl_prelude.inc" /* the files of src/lang/prelude (Makefile) */
};

static bool is_ident_char(char c) { return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* name appears in text as a whole identifier */
static bool names(const char *text, const char *name) {
  size_t n = strlen(name);
  for (const char *p = text ? strstr(text, name) : NULL; p; p = strstr(p + 1, name))
    if ((p == text || !is_ident_char(p[-1])) && !is_ident_char(p[n])) return true;
  return false;
}

static bool declared(const tl_program *prog, const char *name) {
  for (const tl_ast_item *it = prog->items; it; it = it->next)
    if (it->name && !strcmp(it->name, name) && it->kind != TL_ITEM_IMPL) return true;
  return false;
}

static bool load(tl_program *prog, int i, tl_arena *arena) {
  if (prog->nunits > TL_MAX_MODULES) return false;
  int u = prog->nunits;
  size_t len = strlen(libs[i].text);
  char *path = malloc(strlen(libs[i].name) + 12), *src = malloc(len + 1);
  tl_diag *d = calloc(1, sizeof *d);
  if (!path || !src || !d) {
    free(path), free(src), free(d);
    return false;
  }
  sprintf(path, "<prelude %s>", libs[i].name);
  memcpy(src, libs[i].text, len + 1);
  tl_diag_init(d, path, src, len);
  prog->units[u] = (tl_unit){.path = path, .diag = d, .src = src};
  prog->nunits++;
  tl_lexer lx = {.arena = arena};
  tl_program *mp = NULL;
  tl_lex(&lx, d);
  tl_parse(lx.tokens, lx.ntokens, d, arena, &mp);
  free(lx.tokens); /* the text of its strings stays: the tree points into it */
  prog->units[u].strings = lx.arena;
  if (!mp || !mp->items) return false;
  for (tl_ast_item *it = mp->items; it; it = it->next) {
    it->unit = u;
    if (it->fn) it->fn->unit = u;
    for (tl_fn *m = it->methods; m; m = m->next) m->unit = u;
  }
  tl_ast_item **tail = &prog->items;
  while (*tail) tail = &(*tail)->next;
  *tail = mp->items; /* at the end: the program's own text keeps its entity ids */
  return true;
}

/* lib i's text says `// needs: Name` for each library type it uses */
static void mark_needs(size_t i, bool *used) {
  for (const char *p = strstr(libs[i].text, "// needs: "); p; p = strstr(p + 1, "// needs: "))
    for (size_t j = 0; j < sizeof libs / sizeof libs[0]; j++) {
      size_t n = strlen(libs[j].name);
      if (!strncmp(p + 10, libs[j].name, n) && !is_ident_char(p[10 + n])) used[j] = true;
    }
}

int tl_prelude_load(tl_program *prog, const char *src, tl_arena *arena) {
  enum { NLIBS = sizeof libs / sizeof libs[0] };
  bool used[NLIBS] = {false};
  for (size_t i = 0; i < NLIBS; i++) {
    used[i] = names(src, libs[i].name);
    for (int u = 1; u < prog->nunits && !used[i]; u++) used[i] = names(prog->units[u].src, libs[i].name);
  }
  for (size_t i = 0; i < NLIBS; i++) /* a library's needs come first in the table, or are marked again below */
    if (used[i]) mark_needs(i, used);
  for (size_t i = NLIBS; i-- > 0;)
    if (used[i]) mark_needs(i, used);
  int errors = 0;
  for (size_t i = 0; i < NLIBS; i++)
    if (used[i] && !declared(prog, libs[i].name) && !load(prog, (int)i, arena)) errors++;
  return errors;
}
