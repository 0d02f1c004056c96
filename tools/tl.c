/* tl — the command line: run, build and check TL programs (`tl help` lists them).
 * Exit status: 0 success; 1 the program failed (it did not compile, a run-time
 * error, a file that cannot be read, a failed build); 2 the command line is wrong.
 * No user text ever goes through a shell: `tl build` runs the C compiler with an
 * argument vector, and file names written into C are escaped (tl_gen_c_string). */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "lang/gen/gen.h"
#include "lang/lang.h"

extern char **environ;

static const char usage_text[] =
    "usage: tl run [--emit-c] [--mem-stats] [--dot DIR] [--max-tuples N] [--backend NAME] PROG.tl [ARGS...]\n"
    "       tl build [--max-tuples N] PROG.tl -o EXE\n"
    "       tl check PROG.tl\n"
    "       tl devices\n"
    "       tl help\n"
    "\n"
    "  run    compile PROG.tl and run it; ARGS go to the program\n"
    "           --emit-c     print the generated C instead of running it\n"
    "           --mem-stats  print memory statistics when the program ends\n"
    "           --dot DIR    write every realize's graph and kernels as DIR/realize-NNNN.dot\n"
    "                        (Graphviz: dot -Tpng); DIR is created if missing (not its parent)\n"
    "           --max-tuples N  the most tuples one Datalog relation may hold, 1 to 2147483647\n"
    "                        (default 50000000): past it, the query is a run-time error\n"
    "           --backend NAME  run the program's tensors on backend NAME (cpu, interp;\n"
    "                        instead of TL_BACKEND's); one that cannot run here is an\n"
    "                        error (exit 1) before anything runs\n"
    "  build  compile PROG.tl into the standalone executable EXE (--max-tuples N: its limit)\n"
    "  check  report every error in PROG.tl without running it\n"
    "  devices  list every backend, whether it can run here, and why not\n"
    "\n"
    "exit status: 0 success, 1 the program failed or did not compile, 2 bad command line\n"
    "             (a --dot DIR that cannot be created or written included)\n";

typedef enum { CMD_RUN, CMD_BUILD, CMD_CHECK } command;
static const char *const cmd_usage[] = {
    [CMD_RUN] = "tl run [--emit-c] [--mem-stats] [--dot DIR] [--max-tuples N] [--backend NAME] PROG.tl [ARGS...]",
    [CMD_BUILD] = "tl build [--max-tuples N] PROG.tl -o EXE",
    [CMD_CHECK] = "tl check PROG.tl",
};
static const char *const cmd_name[] = {[CMD_RUN] = "run", [CMD_BUILD] = "build", [CMD_CHECK] = "check"};

/* a command-line mistake: what is wrong, then how the command is used; exit 2 */
static int bad_usage(command c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tl: %s: ", cmd_name[c]);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nusage: %s\n", cmd_usage[c]);
  va_end(ap);
  return 2;
}

/* the directory of this executable: libtl.a is found beside it or in ../lib */
static void self_dir(char *buf, size_t n) {
  ssize_t k = readlink("/proc/self/exe", buf, n - 1);
  if (k <= 0) k = 0;
  buf[k] = 0;
  char *slash = strrchr(buf, '/');
  if (slash) *slash = 0;
  else snprintf(buf, n, ".");
}

/* runs argv[0] (searched in PATH) with these arguments, no shell; its exit status,
 * or -1 after saying why it could not run */
static int run_program(char *const argv[]) {
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
  if (rc != 0) {
    fprintf(stderr, "tl: cannot run %s: %s\n", argv[0], strerror(rc));
    return -1;
  }
  int ws;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

/* --max-tuples N: a decimal number 1 .. 2147483647, else 0 */
static long long max_tuples_arg(const char *a) {
  char *end;
  errno = 0;
  long long v = a[0] >= '0' && a[0] <= '9' ? strtoll(a, &end, 10) : 0;
  if (!v || errno || *end || v > INT_MAX) return 0;
  return v;
}

static int build(const char *path, const char *src, size_t len, const char *out, long long max_tuples) {
  char dir[PATH_MAX], lib[PATH_MAX + 16], installed[PATH_MAX + 16];
  self_dir(dir, sizeof dir);
  /* beside tl (the build tree), else in ../lib (an installed PREFIX/bin/tl) */
  snprintf(lib, sizeof lib, "%s/libtl.a", dir);
  snprintf(installed, sizeof installed, "%s/../lib/libtl.a", dir);
  if (access(lib, R_OK) != 0 && access(installed, R_OK) == 0) memcpy(lib, installed, sizeof lib);
  if (access(lib, R_OK) != 0) {
    fprintf(stderr, "tl: cannot find %s (tl build links the libtl.a beside the tl executable, or in ../lib)\n", lib);
    return 1;
  }
  char *c = tl_lang_compile(path, src, len, true, stderr);
  if (!c) return 1;
  /* the executable's main: runs the program under the file's own name */
  tl_strbuf text = {0};
  tl_strbuf_puts(&text, c);
  free(c);
  tl_strbuf_puts(&text, "\nint tl_lang_main(int (*)(tlrt *), const char *, int, char **, long long);\n"
                        "int main(int argc, char **argv) {\n  return tl_lang_main(tl_program_main, ");
  tl_gen_c_string(&text, path);
  tl_strbuf_printf(&text, ", argc, argv, %lldLL);\n}\n", max_tuples);
  char *all = tl_strbuf_take(&text);
  if (!all) {
    fprintf(stderr, "tl: out of memory\n");
    return 1;
  }
  /* an unpredictable name, created here (O_EXCL): nobody else's file is written */
  const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char cfile[PATH_MAX];
  snprintf(cfile, sizeof cfile, "%s/tl-build-XXXXXX.c", tmpdir);
  int fd = mkstemps(cfile, 2);
  if (fd < 0) {
    fprintf(stderr, "tl: cannot create a temporary file in %s: %s\n", tmpdir, strerror(errno));
    free(all);
    return 1;
  }
  int werr = write_all(fd, all, strlen(all)) ? errno : 0;
  if (close(fd) != 0 && !werr) werr = errno;
  free(all);
  int rc = 1;
  if (werr) fprintf(stderr, "tl: cannot write %s: %s\n", cfile, strerror(werr));
  else {
    /* the kernels' compiler (TL_CC, a program name) builds programs too */
    const char *cc = getenv("TL_CC") && *getenv("TL_CC") ? getenv("TL_CC") : "cc";
    char *argv[] = {(char *)cc, "-O2", "-fno-math-errno", "-fwrapv", "-w", "-o", /* TL_LANG_CFLAGS */ (char *)out, cfile, lib, "-ldl", "-lpthread", "-lm", NULL};
    int st = run_program(argv);
    if (st > 0) fprintf(stderr, "tl: building %s failed (cc exit %d)\n", out, st);
    if (st < 0 && strcmp(cc, "cc")) { /* TL_CC names a compiler that is not installed */
      const char *base = strrchr(cc, '/') ? strrchr(cc, '/') + 1 : cc;
      fprintf(stderr, "tl: TL_CC=%s: install it%s, or unset TL_CC to use cc\n", cc,
              !strcmp(base, "tcc") ? " (Debian: apt-get install tcc)" : "");
    }
    rc = st == 0 ? 0 : 1;
  }
  unlink(cfile);
  return rc;
}

/* whether the build knows a backend of that name (usable here or not) */
static bool known_backend(const char *name) {
  const char *n;
  for (int i = 0; (n = tl_backend_info(i, NULL, NULL)); i++)
    if (!strcmp(n, name)) return true;
  return false;
}

/* tl devices: every backend this build knows, usable here or not and why */
static int devices(void) {
  const char *name, *about, *why;
  for (int i = 0; (name = tl_backend_info(i, &about, &why)); i++) {
    if (why) printf("%s: not available (%s)\n", name, why);
    else printf("%s: available (%s)\n", name, about);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage_text, stderr);
    return 2;
  }
  const char *name = argv[1];
  if (!strcmp(name, "help") || !strcmp(name, "--help") || !strcmp(name, "-h")) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (!strcmp(name, "devices")) {
    if (argc > 2) {
      fprintf(stderr, "tl: devices: unexpected argument '%s'\nusage: tl devices\n", argv[2]);
      return 2;
    }
    return devices();
  }
  command cmd;
  if (!strcmp(name, "run")) cmd = CMD_RUN;
  else if (!strcmp(name, "build")) cmd = CMD_BUILD;
  else if (!strcmp(name, "check")) cmd = CMD_CHECK;
  else {
    fprintf(stderr, "tl: unknown command '%s'\nrun 'tl help' for usage\n", name);
    return 2;
  }
  const char *path = NULL, *out = NULL, *dot_dir = NULL, *backend = NULL;
  bool emit_c = false, mem_stats = false, options_done = false;
  long long max_tuples = 0;
  int i = 2;
  while (i < argc) {
    const char *a = argv[i++];
    if (!options_done && a[0] == '-' && a[1]) {
      if (!strcmp(a, "--")) options_done = true; /* a file name may start with '-' */
      else if (cmd == CMD_RUN && !strcmp(a, "--emit-c")) emit_c = true;
      else if (cmd == CMD_RUN && !strcmp(a, "--mem-stats")) mem_stats = true;
      else if (cmd == CMD_RUN && !strcmp(a, "--dot")) {
        if (i >= argc || !argv[i][0]) return bad_usage(cmd, "--dot needs a directory");
        dot_dir = argv[i++];
      }
      else if (cmd == CMD_RUN && !strcmp(a, "--backend")) {
        if (i >= argc || !argv[i][0]) return bad_usage(cmd, "--backend needs a name (tl devices lists them)");
        backend = argv[i++];
        /* a name that is no backend is a wrong command line; one that cannot run here
         * fails the run (exit 1), as TL_BACKEND's does, before anything runs */
        if (tl_backend_usable(backend)) {
          if (!known_backend(backend)) return bad_usage(cmd, "--backend: %s", tl_last_error(NULL));
          fprintf(stderr, "tl: run: --backend: %s\n", tl_last_error(NULL));
          return 1;
        }
      }
      else if (cmd != CMD_CHECK && !strcmp(a, "--max-tuples")) {
        if (i >= argc || !(max_tuples = max_tuples_arg(argv[i])))
          return bad_usage(cmd, "--max-tuples needs a number from 1 to 2147483647");
        i++;
      }
      else if (cmd == CMD_BUILD && !strcmp(a, "-o")) {
        if (i >= argc || !argv[i][0]) return bad_usage(cmd, "-o needs the name of the executable");
        if (out) return bad_usage(cmd, "-o given twice");
        out = argv[i++];
      } else return bad_usage(cmd, "unknown option '%s'", a);
    } else if (!path) {
      path = a;
      if (cmd == CMD_RUN) break; /* the rest are the program's own arguments */
    } else return bad_usage(cmd, "unexpected argument '%s'", a);
  }
  if (!path) return bad_usage(cmd, "missing the program file");
  if (cmd == CMD_BUILD && !out) return bad_usage(cmd, "missing -o EXE, the executable to write");
  size_t len;
  char *src = tl_lang_read_file(path, &len, stderr);
  if (!src) return 1;
  int rc;
  if (cmd == CMD_CHECK) {
    char *c = tl_lang_compile(path, src, len, false, stderr);
    rc = c ? 0 : 1;
    free(c);
  } else if (cmd == CMD_BUILD) {
    rc = build(path, src, len, out, max_tuples);
  } else if (emit_c) {
    char *c = tl_lang_compile(path, src, len, true, stderr);
    if (c) fputs(c, stdout);
    rc = c ? 0 : 1;
    free(c);
  } else { /* the program's argv[0] is its file, then ARGS */
    tl_lang_run_options o = {.out = stdout, .err = stderr, .mem_stats = mem_stats, .dot_dir = dot_dir, .backend = backend, .argc = argc - i + 1, .argv = argv + i - 1, .max_tuples = max_tuples};
    rc = tl_lang_run_source(path, src, len, &o);
  }
  free(src);
  return rc;
}
