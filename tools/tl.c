/* tl — the command line: run, build and check TL programs.
 *   tl run [--emit-c] [--mem-stats] prog.tl [args...]
 *   tl build prog.tl -o prog      a standalone executable (links libtl.a)
 *   tl check prog.tl              diagnostics only */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lang/lang.h"

static int usage(void) {
  fprintf(stderr, "usage: tl run [--emit-c] [--mem-stats] prog.tl [args...]\n"
                  "       tl build prog.tl -o prog\n"
                  "       tl check prog.tl\n");
  return 2;
}

/* the directory of this executable: libtl.a and include/ are found from it */
static void self_dir(char *buf, size_t n) {
  ssize_t k = readlink("/proc/self/exe", buf, n - 1);
  if (k <= 0) k = 0;
  buf[k] = 0;
  char *slash = strrchr(buf, '/');
  if (slash) *slash = 0;
  else snprintf(buf, n, ".");
}

static int build(const char *path, const char *src, size_t len, const char *out) {
  char *c = tl_lang_compile(path, src, len, true, stderr);
  if (!c) return 1;
  char dir[PATH_MAX], cfile[PATH_MAX + 16], cmd[4 * PATH_MAX];
  self_dir(dir, sizeof dir);
  snprintf(cfile, sizeof cfile, "%s.c", out);
  FILE *f = fopen(cfile, "w");
  if (!f) {
    fprintf(stderr, "tl: cannot write %s\n", cfile);
    free(c);
    return 1;
  }
  fputs(c, f);
  fprintf(f, "\n#include <stdbool.h>\nstruct tlrt;\ntypedef struct { FILE *out, *err; bool mem_stats; int argc; char **argv; } "
             "tl__opts;\nint tl_lang_exec(int (*)(tlrt *), const char *, const tl__opts *);\n"
             "int main(int argc, char **argv) {\n  tl__opts o = {stdout, stderr, false, argc, argv};\n"
             "  return tl_lang_exec(tl_program_main, \"%s\", &o);\n}\n", path);
  fclose(f);
  free(c);
  snprintf(cmd, sizeof cmd, "cc -O2 -fno-math-errno -w -o '%s' '%s' '%s/libtl.a' -ldl -lpthread -lm", out, cfile, dir);
  int rc = system(cmd);
  remove(cfile);
  if (rc) fprintf(stderr, "tl: building %s failed\n", out);
  return rc ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 3) return usage();
  const char *cmd = argv[1], *path = NULL, *out = NULL;
  bool emit_c = false, mem_stats = false;
  int i = 2;
  for (; i < argc; i++) {
    if (!strcmp(argv[i], "--emit-c")) emit_c = true;
    else if (!strcmp(argv[i], "--mem-stats")) mem_stats = true;
    else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (argv[i][0] == '-' && !path) {
      fprintf(stderr, "tl: unknown option %s\n", argv[i]);
      return usage();
    } else if (!path) path = argv[i];
    else break; /* the program's own arguments */
  }
  if (!path) return usage();
  size_t len;
  char *src = tl_lang_read_file(path, &len, stderr);
  if (!src) return 1;
  int rc;
  if (!strcmp(cmd, "check")) {
    char *c = tl_lang_compile(path, src, len, false, stderr);
    rc = c ? 0 : 1;
    free(c);
  } else if (!strcmp(cmd, "build")) {
    rc = out ? build(path, src, len, out) : usage();
  } else if (!strcmp(cmd, "run") && emit_c) {
    char *c = tl_lang_compile(path, src, len, true, stderr);
    if (c) fputs(c, stdout);
    rc = c ? 0 : 1;
    free(c);
  } else if (!strcmp(cmd, "run")) {
    tl_lang_run_options o = {.out = stdout, .err = stderr, .mem_stats = mem_stats, .argc = argc - i + 1, .argv = argv + i - 1};
    rc = tl_lang_run_source(path, src, len, &o);
  } else rc = usage();
  free(src);
  return rc;
}
