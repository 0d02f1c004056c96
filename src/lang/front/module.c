/* module.c — modules (module.h): read, parse and splice in each `mod name;` file. */
#include "lang/front/module.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/strbuf.h"
#include "lang/front/parse.h"

/* the text, NUL-terminated */
char *tl_lang_read_file(const char *path, size_t *len, FILE *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(err, "tl: cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  /* a directory opens fine and then reads as an error: say what it is */
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fprintf(err, "tl: %s is a directory, not a program file\n", path);
    fclose(f);
    return NULL;
  }
  tl_strbuf text = {0};
  int read_error = tl_strbuf_read(&text, f) ? 0 : errno;
  fclose(f);
  size_t n = text.len;
  char *buf = tl_strbuf_take(&text); /* NULL: out of memory */
  if (!buf) {
    fprintf(err, "tl: out of memory reading %s\n", path);
    return NULL;
  }
  if (read_error) {
    fprintf(err, "tl: cannot read %s: %s\n", path, strerror(read_error));
    free(buf);
    return NULL;
  }
  if (memchr(buf, 0, n)) {
    fprintf(err, "tl: %s is not a text file (it holds a NUL byte)\n", path);
    free(buf);
    return NULL;
  }
  *len = n;
  return buf;
}

/* dir of `of` (up to its last '/') + name + ".tl" (malloc'd) */
static char *module_path(const char *of, const char *name) {
  const char *slash = strrchr(of, '/');
  size_t dir = slash ? (size_t)(slash - of) + 1 : 0;
  char *p = malloc(dir + strlen(name) + 4);
  if (p) {
    memcpy(p, of, dir);
    strcpy(p + dir, name);
    strcat(p, ".tl");
  }
  return p;
}

static void mark_unit(tl_ast_item *items, int unit) {
  for (tl_ast_item *it = items; it; it = it->next) {
    it->unit = unit;
    if (it->fn) it->fn->unit = unit;
    for (tl_fn *m = it->methods; m; m = m->next) m->unit = unit;
  }
}

tl_program *tl_modules_parse_unit(tl_program *prog, int u, tl_arena *arena) {
  tl_unit *m = &prog->units[u];
  tl_lexer lx = {.arena = arena};
  tl_program *mp = NULL;
  tl_lex(&lx, m->diag);
  tl_parse(lx.tokens, lx.ntokens, m->diag, arena, &mp);
  free(lx.tokens); /* the tokens go; their text stays, for the tree points into it */
  m->strings = lx.arena;
  if (mp) {
    mark_unit(mp->items, u);
    mark_unit(mp->broken, u);
  }
  return mp;
}

/* reads and parses unit u's file; false (and an error at the `mod`) when it cannot */
static bool load_unit(tl_program *prog, int u, tl_ast_item *mod, tl_arena *arena) {
  tl_unit *parent = &prog->units[mod->unit];
  tl_unit *m = &prog->units[u];
  struct stat st;
  if (stat(m->path, &st) != 0 || S_ISDIR(st.st_mode)) {
    tl_diag_error(parent->diag, mod->line, mod->col, "cannot find module `%s`: there is no file %s", mod->name, m->path);
    tl_diag_hint(parent->diag, "`mod %s;` reads %s.tl from the directory of %s", mod->name, mod->name, parent->path);
    return false;
  }
  char *why = NULL;
  size_t nwhy = 0, len = 0;
  FILE *msg = open_memstream(&why, &nwhy);
  m->src = msg ? tl_lang_read_file(m->path, &len, msg) : NULL;
  if (msg) fclose(msg);
  if (!m->src) {
    if (!why) parent->diag->oom = true;
    size_t n = why ? strlen(why) : 0;
    while (n && why[n - 1] == '\n') why[--n] = '\0';
    tl_diag_error(parent->diag, mod->line, mod->col, "cannot read module `%s`: %s", mod->name,
                  why && n ? why : "out of memory");
    free(why);
    return false;
  }
  free(why);
  m->diag = calloc(1, sizeof *m->diag);
  if (!m->diag) return false;
  tl_diag_init(m->diag, m->path, m->src, len);
  tl_program *mp = tl_modules_parse_unit(prog, u, arena);
  if (!mp) return false;
  for (tl_ast_item **it = &mp->items; *it;) /* a module's statements would make a second `main` */
    if ((*it)->kind == TL_ITEM_FN && (*it)->fn->script) {
      tl_diag_error(m->diag, (*it)->line, (*it)->col, "a module holds items only: statements outside functions go in the program's file");
      *it = (*it)->next;
    } else {
      it = &(*it)->next;
    }
  mod->module = mp;
  /* its items follow the `mod` line; its half-parsed ones join the program's */
  if (mp->items) {
    tl_ast_item *last = mp->items;
    while (last->next) last = last->next;
    last->next = mod->next;
    mod->next = mp->items;
  }
  if (mp->broken) {
    tl_ast_item **tail = &prog->broken;
    while (*tail) tail = &(*tail)->next;
    *tail = mp->broken;
  }
  return true;
}

int tl_modules_load(tl_program *prog, const char *path, tl_diag *diag, tl_arena *arena) {
  prog->units = calloc(TL_MAX_MODULES + 1, sizeof *prog->units);
  if (!prog->units) {
    tl_diag_oom(diag, 1, 1, "out of memory reading the modules");
    return 1;
  }
  prog->units[0] = (tl_unit){.path = path, .diag = diag};
  prog->nunits = 1;
  int errors = 0;
  /* the list grows as modules are spliced in: their own `mod` lines come up in turn */
  for (tl_ast_item *it = prog->items; it; it = it->next) {
    if (it->kind != TL_ITEM_MOD) continue;
    tl_unit *parent = &prog->units[it->unit];
    char *p = module_path(parent->path, it->name);
    if (!p) return errors + 1;
    bool again = false;
    for (int u = 0; u < prog->nunits && !again; u++) again = !strcmp(prog->units[u].path, p);
    if (again || prog->nunits > TL_MAX_MODULES) {
      if (again) tl_diag_error(parent->diag, it->line, it->col, "module `%s` (%s) is already part of the program", it->name, p);
      else tl_diag_error(parent->diag, it->line, it->col, "more than %d modules", TL_MAX_MODULES);
      free(p);
      errors++;
      continue;
    }
    int u = prog->nunits++;
    prog->units[u] = (tl_unit){.path = p, .mod = it};
    if (!load_unit(prog, u, it, arena)) errors++;
  }
  /* `use name::*;` names a module of the program */
  for (tl_ast_item *it = prog->items; it; it = it->next) {
    if (it->kind != TL_ITEM_USE) continue;
    bool found = false;
    for (int u = 1; u < prog->nunits && !found; u++) found = prog->units[u].mod && !strcmp(prog->units[u].mod->name, it->name);
    if (!found) {
      tl_diag *d = prog->units[it->unit].diag;
      tl_diag_error(d, it->line, it->col, "unknown module `%s`", it->name);
      tl_diag_hint(d, "declare it first: `mod %s;` reads %s.tl", it->name, it->name);
      errors++;
    }
  }
  return errors;
}

int tl_modules_errors(const tl_program *prog) {
  int n = 0;
  for (int u = 1; prog && u < prog->nunits; u++)
    if (prog->units[u].diag) n += prog->units[u].diag->errors;
  return n;
}

void tl_modules_print(tl_program *prog, FILE *err) {
  for (int u = 1; prog && u < prog->nunits; u++) {
    tl_diag *d = prog->units[u].diag;
    if (!d || !(d->errors || d->warnings)) continue;
    tl_diag_sort(d);
    tl_diag_limit(d, TL_DIAG_MAX_SHOWN);
    if (d->text.data) fputs(d->text.data, err);
  }
}

void tl_modules_free(tl_program *prog) {
  if (!prog || !prog->units) return;
  for (int u = 1; u < prog->nunits; u++) {
    if (prog->units[u].diag) tl_diag_free(prog->units[u].diag);
    free(prog->units[u].diag);
    free(prog->units[u].src);
    if (prog->units[u].strings) tl_arena_destroy(prog->units[u].strings);
    free((char *)prog->units[u].path);
  }
  free(prog->units);
  prog->units = NULL;
  prog->nunits = 0;
}
