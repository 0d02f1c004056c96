/* test_install.c — `make install` and the library it installs. install_prefix installs
 * into a fresh temporary prefix (what the build directory of this test binary holds), builds
 * a C program with `pkg-config --cflags --libs tl` against libtl.so and against libtl.a
 * and runs both, then `tl build` and `tl run` from the installed tl; install_destdir
 * checks DESTDIR. install_exports compares libtl.so's dynamic symbols (nm -D) with the
 * functions declared in the run-time headers (tl.h and the others the Makefile pastes
 * into the language prelude): each must carry TL_API, and libtl.so must export exactly
 * those. The tests run from the repository root (they need the Makefile there) and
 * need make, cc, pkg-config and nm. Commands are fixed strings and tl_test_tmpdir paths. */
#include <ctype.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* runs cmd with sh -c, stderr with stdout; the exit status (or 128 + signal, -1 when
 * it could not run); *out (may be NULL) gets the output, malloc'd */
static int sh(const char *cmd, char **out) {
  char *full = malloc(strlen(cmd) + 16);
  if (!full) return -1;
  sprintf(full, "(%s) 2>&1", cmd);
  fflush(stdout);
  FILE *p = popen(full, "r");
  free(full);
  if (!p) return -1;
  char *s = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&s, &n);
  char buf[4096];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, p)) > 0)
    if (m) fwrite(buf, 1, k, m);
  if (m) fclose(m);
  int ws = pclose(p);
  if (out) *out = s ? s : strdup("");
  else free(s);
  if (ws < 0) return -1;
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* sh(cmd) must exit 0: records a failure with the command and its output otherwise */
static bool sh_ok(const char *file, int line, const char *cmd, char **out) {
  char *o = NULL;
  int st = sh(cmd, &o);
  if (st != 0) tl_test_fail(file, line, "`%s` exited %d:\n%s", cmd, st, o ? o : "");
  if (out) *out = o;
  else free(o);
  return st == 0;
}
#define SH_OK(cmd, out) sh_ok(__FILE__, __LINE__, (cmd), (out))

static bool write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

/* the build directory of this test binary (its tests/ folder's parent), relative to the
 * working directory when inside it */
static void build_dir(char *buf, size_t n) {
  char bin[4096], cwd[4096];
  snprintf(bin, sizeof bin, "%s", tl_test_bindir());
  snprintf(buf, n, "%s", dirname(bin));
  size_t c = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
  if (c && !strncmp(buf, cwd, c) && buf[c] == '/') memmove(buf, buf + c + 1, strlen(buf + c + 1) + 1);
}

/* false (and a note) when the test cannot run here: not from the repository root, or
 * a sanitizer build (its objects do not make a plain libtl.so) */
static bool can_install(const char *name) {
#ifdef SANITIZED
  printf("  %s: skipped under the sanitizers\n", name);
  return false;
#endif
  if (access("Makefile", R_OK) != 0 || access("include/tl.h", R_OK) != 0) {
    tl_test_fail(__FILE__, __LINE__, "%s: run the tests from the repository root (no Makefile here)", name);
    return false;
  }
  if (sh("command -v pkg-config", NULL) != 0) {
    tl_test_fail(__FILE__, __LINE__, "%s: pkg-config is missing (apt-get install pkg-config)", name);
    return false;
  }
  return true;
}

/* make install with PREFIX and DESTDIR (DESTDIR may be ""), the make of this tree and
 * of this binary's build directory, outside any make running the tests. It installs
 * what is built (make -o: nothing is rebuilt, whatever changed in the tree since) */
static bool make_install(const char *prefix, const char *destdir) {
  char bdir[4096], cmd[32768];
  build_dir(bdir, sizeof bdir);
  static const char *const built[] = {"tl", "libtl.a", "libtl.so"};
  for (size_t i = 0; i < sizeof built / sizeof built[0]; i++) {
    snprintf(cmd, sizeof cmd, "%s/%s", bdir, built[i]);
    if (access(cmd, R_OK) != 0) {
      tl_test_fail(__FILE__, __LINE__, "no %s: build it first (make test builds it)", cmd);
      return false;
    }
  }
  snprintf(cmd, sizeof cmd,
           "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -o '%s/tl' -o '%s/libtl.a' -o '%s/libtl.so' "
           "install 'BUILD=%s' 'PREFIX=%s' 'DESTDIR=%s'",
           bdir, bdir, bdir, bdir, prefix, destdir);
  return SH_OK(cmd, NULL);
}

static const char prog_c[] =
    "#include <stdio.h>\n"
    "#include <tl.h>\n"
    "int main(void) {\n"
    "  tl_ctx *ctx = tl_init();\n"
    "  float v[5] = {1.5f, 2.5f, 3.0f, 4.25f, -1.0f};\n"
    "  int64_t n = 5;\n"
    "  double s = 0;\n"
    "  if (tl_item(tl_sum(tl_from_data(ctx, TL_F32, 1, &n, v), 0, NULL, 0), &s)) {\n"
    "    fprintf(stderr, \"%s\\n\", tl_last_error(ctx));\n"
    "    return 1;\n"
    "  }\n"
    "  printf(\"sum %.2f\\n\", s);\n"
    "  tl_shutdown(ctx);\n"
    "  return 0;\n"
    "}\n";

static const char prog_tl[] = "fn main() {\n"
                              "  let x = Tensor::arange(0, 5) as f32;\n"
                              "  println(\"sum {}\", x.sum().item());\n"
                              "}\n";

TEST(install_prefix) {
  if (!can_install("install_prefix")) return;
  char *dir = tl_test_tmpdir();
  if (!dir) {
    tl_test_fail(__FILE__, __LINE__, "tl_test_tmpdir failed");
    return;
  }
  char path[4200], cmd[16384];
  char *out = NULL;
  if (!make_install(dir, "")) goto done;
  static const char *const files[] = {"bin/tl", "lib/libtl.a", "lib/libtl.so", "include/tl.h",
                                      "lib/pkgconfig/tl.pc"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    if (access(path, R_OK) != 0) tl_test_fail(__FILE__, __LINE__, "make install made no %s", path);
  }
  snprintf(path, sizeof path, "%s/lib/pkgconfig/tl.pc", dir);
  char *pc = tl_test_slurp(path);
  char want[4200];
  snprintf(want, sizeof want, "prefix=%s\n", dir);
  CHECK_CONTAINS(pc, want);
  free(pc);

  /* pkg-config reads the installed tl.pc */
  snprintf(path, sizeof path, "%s/prog.c", dir);
  CHECK(write_file(path, prog_c));
  snprintf(cmd, sizeof cmd, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --cflags --libs tl", dir);
  if (SH_OK(cmd, &out)) {
    size_t k = strlen(out);
    while (k > 0 && isspace((unsigned char)out[k - 1])) out[--k] = 0; /* pkg-config ends with " \n" */
    snprintf(want, sizeof want, "-I%s/include -L%s/lib -ltl", dir, dir);
    CHECK_STR(out, want);
  }
  free(out), out = NULL;

  /* shared: linked with libtl.so, found with LD_LIBRARY_PATH */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && export PKG_CONFIG_PATH='%s/lib/pkgconfig' && "
           "cc -o prog_so prog.c $(pkg-config --cflags --libs tl)",
           dir, dir);
  if (SH_OK(cmd, NULL)) {
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH='%s/lib' '%s/prog_so'", dir, dir);
    if (SH_OK(cmd, &out)) CHECK_STR(out, "sum 10.25\n");
    free(out), out = NULL;
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH='%s/lib' ldd '%s/prog_so'", dir, dir);
    if (SH_OK(cmd, &out)) {
      snprintf(want, sizeof want, "%s/lib/libtl.so", dir);
      CHECK_CONTAINS(out, want);
    }
    free(out), out = NULL;
  }

  /* static: libtl.a chosen with -Bstatic, the system libraries as usual */
  snprintf(cmd, sizeof cmd,
           "cd '%s' && export PKG_CONFIG_PATH='%s/lib/pkgconfig' && "
           "cc -o prog_a prog.c $(pkg-config --cflags tl) -Wl,-Bstatic $(pkg-config --libs tl) -Wl,-Bdynamic "
           "-ldl -lpthread -lm",
           dir, dir);
  if (SH_OK(cmd, NULL)) {
    snprintf(cmd, sizeof cmd, "'%s/prog_a'", dir);
    if (SH_OK(cmd, &out)) CHECK_STR(out, "sum 10.25\n");
    free(out), out = NULL;
    snprintf(cmd, sizeof cmd, "ldd '%s/prog_a'", dir);
    if (SH_OK(cmd, &out) && strstr(out, "libtl.so"))
      tl_test_fail(__FILE__, __LINE__, "prog_a linked with -Bstatic needs libtl.so:\n%s", out);
    free(out), out = NULL;
  }

  /* the installed tl: `tl run` (programs resolve the run time from tl's exports) and
   * `tl build` (links PREFIX/lib/libtl.a, found from PREFIX/bin/tl) */
  snprintf(path, sizeof path, "%s/sum.tl", dir);
  CHECK(write_file(path, prog_tl));
  snprintf(cmd, sizeof cmd, "'%s/bin/tl' run '%s/sum.tl'", dir, dir);
  if (SH_OK(cmd, &out)) CHECK_STR(out, "sum 10.0\n");
  free(out), out = NULL;
  snprintf(cmd, sizeof cmd, "'%s/bin/tl' build '%s/sum.tl' -o '%s/sum'", dir, dir, dir);
  if (SH_OK(cmd, NULL)) {
    snprintf(cmd, sizeof cmd, "'%s/sum'", dir);
    if (SH_OK(cmd, &out)) CHECK_STR(out, "sum 10.0\n");
    free(out), out = NULL;
  }
done:
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* DESTDIR stages the files under itself; tl.pc names the real PREFIX */
TEST(install_destdir) {
  if (!can_install("install_destdir")) return;
  char *dir = tl_test_tmpdir();
  if (!dir) {
    tl_test_fail(__FILE__, __LINE__, "tl_test_tmpdir failed");
    return;
  }
  char path[4200];
  if (make_install("/opt/tl", dir)) {
    snprintf(path, sizeof path, "%s/opt/tl/bin/tl", dir);
    CHECK_INT(access(path, X_OK), 0);
    snprintf(path, sizeof path, "%s/opt/tl/lib/pkgconfig/tl.pc", dir);
    char *pc = tl_test_slurp(path);
    CHECK_CONTAINS(pc, "prefix=/opt/tl\n");
    CHECK_CONTAINS(pc, "Libs: -L${libdir} -ltl\n");
    CHECK_CONTAINS(pc, "Libs.private: -ldl -lpthread -lm\n");
    CHECK_CONTAINS(pc, "Cflags: -I${includedir}\n");
    free(pc);
  }
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* ---- the exported symbols -------------------------------------------------------- */

typedef struct {
  char name[128];
  const char *header;
  bool marked; /* declared with TL_API */
} decl;

/* the headers pasted into the language prelude: the prerequisites of the Makefile's
 * build/gen/lang_prelude.inc rule */
static int prelude_headers(char headers[][256], int max) {
  char *mk = tl_test_slurp("Makefile");
  int n = 0;
  char *p = mk ? strstr(mk, "\nbuild/gen/lang_prelude.inc:") : NULL;
  if (p) {
    p += strlen("\nbuild/gen/lang_prelude.inc:");
    for (;;) {
      while (*p == ' ' || *p == '\t' || (*p == '\\' && p[1] == '\n')) p += *p == '\\' ? 2 : 1;
      if (!*p || *p == '\n') break;
      size_t k = strcspn(p, " \t\n\\");
      if (n < max && k < 256) {
        memcpy(headers[n], p, k);
        headers[n++][k] = 0;
      }
      p += k;
    }
  }
  free(mk);
  return n;
}

/* the functions a header declares (not static inline ones, not macros, not typedefs) */
static int parse_decls(const char *header, decl *out, int n, int max) {
  char *src = tl_test_slurp(header);
  if (!src) {
    tl_test_fail(__FILE__, __LINE__, "cannot read %s", header);
    return n;
  }
  /* comments and preprocessor lines (with continuations) become spaces; the C++ guard
   * (#ifdef __cplusplus .. #endif) goes whole */
  size_t len = strlen(src);
  bool line_start = true;
  for (size_t i = 0; i < len; i++) {
    if (src[i] == '/' && src[i + 1] == '*') {
      char *e = strstr(src + i + 2, "*/");
      size_t end = e ? (size_t)(e - src) + 2 : len;
      for (size_t j = i; j < end; j++)
        if (src[j] != '\n') src[j] = ' ';
      i = end - 1;
      continue;
    }
    if (src[i] == '/' && src[i + 1] == '/') {
      while (i < len && src[i] != '\n') src[i++] = ' ';
      line_start = true;
      continue;
    }
    if (line_start) {
      size_t j = i;
      while (src[j] == ' ' || src[j] == '\t') j++;
      if (src[j] == '#') {
        bool guard = !strncmp(src + j, "#ifdef __cplusplus", 18);
        size_t end = j;
        for (;;) { /* to the end of the directive (or of the guard's #endif line) */
          while (end < len && src[end] != '\n') end++;
          if (end < len && end > 0 && src[end - 1] == '\\') {
            end++;
            continue;
          }
          if (guard) {
            char *e = strstr(src + end, "\n#endif");
            end = e ? (size_t)(e - src) + 7 : len;
            while (end < len && src[end] != '\n') end++;
          }
          break;
        }
        for (size_t k = i; k < end; k++)
          if (src[k] != '\n') src[k] = ' ';
        i = end;
        line_start = true;
        continue;
      }
    }
    line_start = src[i] == '\n';
  }
  /* top-level statements: a ';' at brace depth 0 ends one; a body after a ')' (a
   * static inline function) ends one too and is dropped */
  char stmt[4096];
  size_t sl = 0;
  int depth = 0;
  for (size_t i = 0; i < len; i++) {
    char c = src[i];
    if (c == '{') {
      depth++;
      continue;
    }
    if (c == '}') {
      if (--depth == 0 && memchr(stmt, '(', sl)) sl = 0;
      continue;
    }
    if (depth > 0) continue;
    if (c != ';') {
      if (sl < sizeof stmt - 1) stmt[sl++] = isspace((unsigned char)c) ? ' ' : c;
      continue;
    }
    stmt[sl] = 0;
    sl = 0;
    char *s = stmt;
    while (*s == ' ') s++;
    char *paren = strchr(s, '(');
    if (!paren || !strncmp(s, "typedef", 7) || strstr(s, "static ")) continue;
    char *e = paren;
    while (e > s && e[-1] == ' ') e--;
    char *b = e;
    while (b > s && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
    if (b == e || (size_t)(e - b) >= sizeof out[0].name || n >= max) continue;
    memcpy(out[n].name, b, (size_t)(e - b));
    out[n].name[e - b] = 0;
    out[n].header = header;
    out[n].marked = !strncmp(s, "TL_API ", 7);
    n++;
  }
  free(src);
  return n;
}

TEST(install_exports) {
#ifdef SANITIZED
  printf("  install_exports: skipped under the sanitizers\n");
  return;
#endif
  static char headers[16][256];
  int nh = prelude_headers(headers, 16);
  if (nh < 3 || strcmp(headers[0], "include/tl.h") != 0) {
    tl_test_fail(__FILE__, __LINE__, "cannot read the run-time headers from the Makefile's lang_prelude.inc rule");
    return;
  }
  enum { MAX_DECLS = 2048 };
  decl *d = calloc(MAX_DECLS, sizeof *d);
  if (!d) return;
  int nd = 0;
  for (int i = 0; i < nh; i++) /* scalar.h: inline functions, and libm's prototypes for kernels */
    if (strcmp(headers[i], "src/core/scalar.h") != 0) nd = parse_decls(headers[i], d, nd, MAX_DECLS);
  CHECK(nd > 200);
  for (int i = 0; i < nd; i++)
    if (!d[i].marked) tl_test_fail(__FILE__, __LINE__, "%s: %s is declared without TL_API", d[i].header, d[i].name);

  char bdir[4096], cmd[4400];
  build_dir(bdir, sizeof bdir);
  snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s/libtl.so'", bdir);
  char *out = NULL;
  if (!SH_OK(cmd, &out)) {
    printf("  (libtl.so is built by make all, make test and make install)\n");
    free(out);
    free(d);
    return;
  }
  static const char *const linker_made[] = {"_init", "_fini", "_edata", "_end", "__bss_start"};
  bool *seen = calloc((size_t)nd + 1, sizeof *seen);
  int exported = 0;
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    char *name = strrchr(line, ' ');
    name = name ? name + 1 : line;
    bool skip = false;
    for (size_t k = 0; k < sizeof linker_made / sizeof linker_made[0]; k++) skip |= !strcmp(name, linker_made[k]);
    if (skip) continue;
    exported++;
    int found = -1;
    for (int i = 0; i < nd && found < 0; i++)
      if (!strcmp(d[i].name, name)) found = i;
    if (found < 0) tl_test_fail(__FILE__, __LINE__, "libtl.so exports %s, declared in no run-time header", name);
    else seen[found] = true;
  }
  for (int i = 0; i < nd; i++)
    if (!seen[i]) tl_test_fail(__FILE__, __LINE__, "libtl.so does not export %s (%s)", d[i].name, d[i].header);
  CHECK_INT(exported, nd);
  free(seen);
  free(out);
  free(d);
}
