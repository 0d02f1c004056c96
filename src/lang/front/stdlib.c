/* stdlib.c — the library types written in TL itself (stdlib.h): a file handle
 * (`File::open`), `Path`, `StringBuilder` and the trait `Error`. Each is the text of a small module,
 * parsed and spliced into the program as a `mod` file is (module.c) when the program
 * names one of its constructors and declares no item of that name itself. Their bodies
 * call the run-time helpers of the checker's table (`File::append`, `Path::is_dir`...,
 * sema_sys.c), so nothing here needs code of its own below the language. */
#include "lang/front/stdlib.h"

#include <stdlib.h>
#include <string.h>

#include "lang/front/parse.h"

typedef struct {
  const char *name;           /* the type the module declares */
  const char *const *ctors;   /* `Name::ctor` in the program loads it; NULL-ended */
  const char *const *before;  /* or `word Name` (`impl Error`); NULL-ended */
  const char *path;           /* the unit's name in errors and `#line` */
  const char *text;
} std_module;

static const char *const file_ctors[] = {"open", NULL};
static const char *const path_ctors[] = {"new", NULL};
static const char *const sb_ctors[] = {"new", "with_capacity", NULL};
static const char *const none[] = {NULL};
static const char *const regex_ctors[] = {"new", NULL};
static const char *const error_before[] = {"impl", "dyn", NULL};

/* A handle remembers its file and mode; nothing stays open between calls, so a handle
 * needs no closing (`close` is accepted) and one dropped without it leaks nothing. "w"
 * empties the file at open and each write appends, "a" appends, "r" reads the whole
 * file as it is now. */
static const char file_text[] =
    "struct File { path: String, mode: String }\n"
    "impl File {\n"
    "  fn open(path: String, mode: String) -> File {\n"
    "    File::check_handle(path, mode, \"open\");\n"
    "    File { path: path, mode: mode }\n"
    "  }\n"
    "  fn read_string(&self) -> String {\n"
    "    File::check_handle(self.path, self.mode, \"read\");\n"
    "    File::read_string(self.path)\n"
    "  }\n"
    "  fn write_string(&self, text: String) {\n"
    "    File::check_handle(self.path, self.mode, \"write\");\n"
    "    File::append(self.path, text);\n"
    "  }\n"
    "  fn close(&self) {}\n"
    "}\n";

static const char path_text[] =
    "struct Path { path: String }\n"
    "impl Path {\n"
    "  fn new(path: String) -> Path { Path { path: path } }\n"
    "  fn to_string(&self) -> String { self.path }\n"
    "  fn exists(&self) -> bool { Path::exists(self.path) }\n"
    "  fn is_dir(&self) -> bool { Path::is_dir(self.path) }\n"
    "  fn is_file(&self) -> bool { Path::is_file(self.path) }\n"
    "  fn join(&self, part: String) -> Path {\n"
    "    if part.starts_with(\"/\") || self.path == \"\" { return Path { path: part }; }\n"
    "    if self.path.ends_with(\"/\") { return Path { path: self.path + part }; }\n"
    "    Path { path: self.path + \"/\" + part }\n"
    "  }\n"
    "  fn free(&self) {}\n"
    "}\n";

/* the pieces are joined once, by `build`: appending n pieces costs O(n) in all */
static const char sb_text[] =
    "struct StringBuilder { parts: Vec<String>, bytes: i64 }\n"
    "impl StringBuilder {\n"
    "  fn new() -> StringBuilder { StringBuilder { parts: Vec::new(), bytes: 0 } }\n"
    "  fn with_capacity(capacity: i64) -> StringBuilder { StringBuilder::new() }\n"
    "  fn append(&mut self, text: String) { self.bytes += text.len(); self.parts.push(text); }\n"
    "  fn append_i64(&mut self, n: i64) { self.append(n.to_string()); }\n"
    "  fn append_char(&mut self, c: char) { self.append(c.to_string()); }\n"
    "  fn len(&self) -> i64 { self.bytes }\n"
    "  fn is_empty(&self) -> bool { self.bytes == 0 }\n"
    "  fn clear(&mut self) { self.parts.clear(); self.bytes = 0; }\n"
    "  fn build(&self) -> String { self.parts.join(\"\") }\n"
    "  fn to_string(&self) -> String { self.parts.join(\"\") }\n"
    "}\n";

/* the seed's Regex: `new` keeps the pattern and whether it compiles; each call compiles
 * it again (rt_regex.c: a Pike VM, linear in the text). `replace` is every match, as the
 * seed's is (Rust's regex crate calls that `replace_all`, also here) */
static const char regex_text[] =
    "struct Regex { pattern: String, valid: bool }\n"
    "impl Regex {\n"
    "  fn new(pattern: String) -> Regex { Regex { pattern: pattern, valid: Regex::check(pattern) } }\n"
    "  fn is_valid(&self) -> bool { self.valid }\n"
    "  fn as_str(&self) -> String { self.pattern }\n"
    "  fn is_match(&self, text: String) -> bool { Regex::matches(self.pattern, text) }\n"
    "  fn replace(&self, text: String, with: String) -> String { Regex::replace_all(self.pattern, text, with) }\n"
    "  fn replace_all(&self, text: String, with: String) -> String { Regex::replace_all(self.pattern, text, with) }\n"
    "  fn release(&self) {}\n"
    "}\n";

/* Rust's std::error::Error, without its supertraits Debug and Display */
static const char error_text[] =
    "trait Error {\n"
    "  fn source(&self) -> Option<dyn Error> { None }\n"
    "}\n";

static const std_module modules[] = {
    {"File", file_ctors, none, "<std>/file.tl", file_text},
    {"Path", path_ctors, none, "<std>/path.tl", path_text},
    {"StringBuilder", sb_ctors, none, "<std>/string_builder.tl", sb_text},
    {"Error", none, error_before, "<std>/error.tl", error_text},
    {"Regex", regex_ctors, none, "<std>/regex.tl", regex_text},
};

static bool tok_is(const tl_token *t, const char *src, const char *word) {
  size_t n = strlen(word);
  return t->kind == TL_TOK_IDENT && t->len == n && !memcmp(src + t->offset, word, n);
}

/* a keyword or a name spelled word */
static bool tok_text(const tl_token *t, const char *src, const char *word) {
  size_t n = strlen(word);
  return t->len == n && !memcmp(src + t->offset, word, n);
}

/* does the program say `Name::ctor` for one of m's constructors? */
static bool named(const std_module *m, const tl_token *toks, int ntoks, const char *src) {
  for (int i = 0; i < ntoks; i++) {
    if (!tok_is(&toks[i], src, m->name)) continue;
    for (const char *const *b = m->before; i > 0 && *b; b++)
      if (tok_text(&toks[i - 1], src, *b)) return true;
    if (i + 2 >= ntoks || toks[i + 1].kind != TL_TOK_COLONCOLON) continue;
    for (const char *const *c = m->ctors; *c; c++)
      if (tok_is(&toks[i + 2], src, *c)) return true;
  }
  return false;
}

static bool declared(const tl_program *prog, const char *name) {
  for (const tl_ast_item *it = prog->items; it; it = it->next)
    if ((it->kind == TL_ITEM_STRUCT || it->kind == TL_ITEM_ENUM || it->kind == TL_ITEM_TRAIT) && it->name &&
        !strcmp(it->name, name))
      return true;
  return false;
}

static char *dup(const char *s) {
  char *d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

/* parses m into a new unit and puts its items at the program's end */
static bool splice(tl_program *prog, const std_module *m, tl_arena *arena) {
  if (prog->nunits > TL_MAX_MODULES) return false;
  int u = prog->nunits++;
  tl_unit *unit = &prog->units[u];
  *unit = (tl_unit){.path = dup(m->path), .src = dup(m->text)};
  unit->diag = calloc(1, sizeof *unit->diag);
  if (!unit->path || !unit->src || !unit->diag) return false;
  tl_diag_init(unit->diag, unit->path, unit->src, strlen(unit->src));
  tl_lexer lx = {.arena = arena};
  tl_program *mp = NULL;
  tl_lex(&lx, unit->diag);
  tl_parse(lx.tokens, lx.ntokens, unit->diag, arena, &mp);
  unit->lex_arena = lx.arena; /* string literals point into it (module.c) */
  lx.arena = NULL;
  tl_lex_free(&lx);
  if (!mp || unit->diag->errors) return false;
  for (tl_ast_item *it = mp->items; it; it = it->next) {
    it->unit = u;
    if (it->fn) it->fn->unit = u;
    for (tl_fn *f = it->methods; f; f = f->next) f->unit = u;
  }
  tl_ast_item **tail = &prog->items;
  while (*tail) tail = &(*tail)->next;
  *tail = mp->items;
  return true;
}

int tl_modules_std(tl_program *prog, const tl_token *toks, int ntoks, const char *src, tl_diag *diag, tl_arena *arena) {
  int errors = 0;
  for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
    const std_module *m = &modules[i];
    if (!named(m, toks, ntoks, src) || declared(prog, m->name)) continue;
    if (!prog->units) return errors + 1; /* tl_modules_load ran out of memory */
    if (!splice(prog, m, arena)) {
      tl_diag_error(diag, 1, 1, "cannot load the library's `%s` (%s)", m->name, m->path);
      errors++;
    }
  }
  return errors;
}
