/* test_command.c — the `tl` command (build/tl, built by `make test`): usage and its
 * errors, and that no file name given to it can inject a shell command or C code.
 * Commands run with fork/execv and an argument vector (the names under test hold
 * quotes, backslashes and semicolons); stdout and stderr are compared exactly. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "lang/gen/gen.h"
#include "lang/lang.h"
#include "test.h"

typedef struct {
  int status; /* exit code, or 128 + signal */
  char *out, *err;
} result;

static char *read_fd(int fd) {
  char *s = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&s, &n);
  char buf[4096];
  ssize_t k;
  lseek(fd, 0, SEEK_SET);
  while ((k = read(fd, buf, sizeof buf)) > 0) fwrite(buf, 1, (size_t)k, m);
  fclose(m);
  close(fd);
  return s;
}

/* runs argv (argv[0] a path) with TMPDIR set to tmpdir and in the directory cwd, when
 * not NULL */
static result run_in(char *const argv[], const char *tmpdir, const char *cwd) {
  result r = {-1, NULL, NULL};
  char out_path[] = "/tmp/tl-cmd-out-XXXXXX", err_path[] = "/tmp/tl-cmd-err-XXXXXX";
  int fo = mkstemp(out_path), fe = mkstemp(err_path);
  if (fo < 0 || fe < 0) return r;
  unlink(out_path);
  unlink(err_path);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    if (tmpdir) setenv("TMPDIR", tmpdir, 1);
    if (cwd && chdir(cwd) != 0) _exit(126);
    dup2(fo, 1);
    dup2(fe, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  int ws = 0;
  if (pid > 0) waitpid(pid, &ws, 0);
  r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
  r.out = read_fd(fo);
  r.err = read_fd(fe);
  return r;
}

static result run(char *const argv[], const char *tmpdir) { return run_in(argv, tmpdir, NULL); }

static void result_free(result *r) {
  free(r->out);
  free(r->err);
}

#define CHECK_RUN(r, want_status, want_out, want_err) \
  do {                                                \
    CHECK_INT((r).status, want_status);               \
    CHECK_STR((r).out, want_out);                     \
    CHECK_STR((r).err, want_err);                     \
  } while (0)

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

/* help is asked for: stdout, exit 0; no command at all: stderr, exit 2 */
TEST(command_help) {
  const char *asks[] = {"help", "--help", "-h"};
  for (int i = 0; i < 3; i++) {
    result r = run((char *[]){"build/tl", (char *)asks[i], NULL}, NULL);
    CHECK_RUN(r, 0, usage_text, "");
    result_free(&r);
  }
  result r = run((char *[]){"build/tl", NULL}, NULL);
  CHECK_RUN(r, 2, "", usage_text);
  result_free(&r);
}

/* `tl frob x.tl` used to say "cannot open x.tl" */
TEST(command_unknown) {
  result r = run((char *[]){"build/tl", "frob", "x.tl", NULL}, NULL);
  CHECK_RUN(r, 2, "", "tl: unknown command 'frob'\nrun 'tl help' for usage\n");
  result_free(&r);
}

#define RUN_USAGE "usage: tl run [--emit-c] [--mem-stats] [--dot DIR] [--max-tuples N] [--backend NAME] PROG.tl [ARGS...]\n"

/* a wrong command line: what is wrong and the command's usage line, exit 2 */
TEST(command_usage_errors) {
  static const struct {
    char *argv[6];
    const char *err;
  } cases[] = {
      {{"build/tl", "run"}, "tl: run: missing the program file\nusage: tl run [--emit-c] [--mem-stats] [--dot DIR] [--max-tuples N] [--backend NAME] PROG.tl [ARGS...]\n"},
      {{"build/tl", "run", "--emit-c"},
       "tl: run: missing the program file\nusage: tl run [--emit-c] [--mem-stats] [--dot DIR] [--max-tuples N] [--backend NAME] PROG.tl [ARGS...]\n"},
      {{"build/tl", "run", "--bogus", "x.tl"},
       "tl: run: unknown option '--bogus'\nusage: tl run [--emit-c] [--mem-stats] [--dot DIR] [--max-tuples N] [--backend NAME] PROG.tl [ARGS...]\n"},
      {{"build/tl", "run", "-o", "exe", "x.tl"},
       "tl: run: unknown option '-o'\nusage: tl run [--emit-c] [--mem-stats] [--dot DIR] [--max-tuples N] [--backend NAME] PROG.tl [ARGS...]\n"},
      {{"build/tl", "run", "--dot"},
       "tl: run: --dot needs a directory\nusage: tl run [--emit-c] [--mem-stats] [--dot DIR] [--max-tuples N] [--backend NAME] PROG.tl [ARGS...]\n"},
      {{"build/tl", "check"}, "tl: check: missing the program file\nusage: tl check PROG.tl\n"},
      {{"build/tl", "check", "a.tl", "b.tl"}, "tl: check: unexpected argument 'b.tl'\nusage: tl check PROG.tl\n"},
      {{"build/tl", "check", "--mem-stats", "a.tl"}, "tl: check: unknown option '--mem-stats'\nusage: tl check PROG.tl\n"},
      {{"build/tl", "build", "x.tl"}, "tl: build: missing -o EXE, the executable to write\nusage: tl build [--max-tuples N] PROG.tl -o EXE\n"},
      {{"build/tl", "build", "x.tl", "-o"}, "tl: build: -o needs the name of the executable\nusage: tl build [--max-tuples N] PROG.tl -o EXE\n"},
      {{"build/tl", "build", "x.tl", "-o", ""}, "tl: build: -o needs the name of the executable\nusage: tl build [--max-tuples N] PROG.tl -o EXE\n"},
      {{"build/tl", "build", "-o", "a", "-o", "b"}, "tl: build: -o given twice\nusage: tl build [--max-tuples N] PROG.tl -o EXE\n"},
      {{"build/tl", "build", "-o", "exe"}, "tl: build: missing the program file\nusage: tl build [--max-tuples N] PROG.tl -o EXE\n"},
      {{"build/tl", "run", "--max-tuples"}, "tl: run: --max-tuples needs a number from 1 to 2147483647\n" RUN_USAGE},
      {{"build/tl", "run", "--max-tuples", "0", "x.tl"}, "tl: run: --max-tuples needs a number from 1 to 2147483647\n" RUN_USAGE},
      {{"build/tl", "run", "--max-tuples", "2147483648", "x.tl"},
       "tl: run: --max-tuples needs a number from 1 to 2147483647\n" RUN_USAGE},
      {{"build/tl", "run", "--max-tuples", "-5", "x.tl"}, "tl: run: --max-tuples needs a number from 1 to 2147483647\n" RUN_USAGE},
      {{"build/tl", "run", "--max-tuples", "12k", "x.tl"}, "tl: run: --max-tuples needs a number from 1 to 2147483647\n" RUN_USAGE},
      {{"build/tl", "build", "--max-tuples", "x.tl", "-o"},
       "tl: build: --max-tuples needs a number from 1 to 2147483647\nusage: tl build [--max-tuples N] PROG.tl -o EXE\n"},
      {{"build/tl", "check", "--max-tuples", "5", "x.tl"}, "tl: check: unknown option '--max-tuples'\nusage: tl check PROG.tl\n"},
      {{"build/tl", "run", "--backend"}, "tl: run: --backend needs a name (tl devices lists them)\n" RUN_USAGE},
      {{"build/tl", "run", "--backend", "", "x.tl"}, "tl: run: --backend needs a name (tl devices lists them)\n" RUN_USAGE},
      {{"build/tl", "run", "--backend", "gpu", "x.tl"},
       "tl: run: --backend: unknown backend 'gpu' (expected cpu or interp)\n" RUN_USAGE},
      {{"build/tl", "build", "--backend", "cpu", "x.tl"},
       "tl: build: unknown option '--backend'\nusage: tl build [--max-tuples N] PROG.tl -o EXE\n"},
  };
  char *saved = tl_test_env_save("TL_OPENCL_LIB");
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* the usable backends: cpu and interp */
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    result r = run(cases[i].argv, NULL);
    CHECK_RUN(r, 2, "", cases[i].err);
    result_free(&r);
  }
  tl_test_env_restore("TL_OPENCL_LIB", saved);
}

/* files that cannot be programs: exit 1 with the reason (a directory used to read as
 * an empty program) */
TEST(command_unreadable_files) {
  result r = run((char *[]){"build/tl", "run", "tests", NULL}, NULL);
  CHECK_RUN(r, 1, "", "tl: tests is a directory, not a program file\n");
  result_free(&r);
  r = run((char *[]){"build/tl", "check", "/nonexistent.tl", NULL}, NULL);
  CHECK_RUN(r, 1, "", "tl: cannot open /nonexistent.tl: No such file or directory\n");
  result_free(&r);
  /* `--` ends the options, so a file named like one can be given */
  r = run((char *[]){"build/tl", "run", "--", "--mem-stats", NULL}, NULL);
  CHECK_RUN(r, 1, "", "tl: cannot open --mem-stats: No such file or directory\n");
  result_free(&r);
}

/* everything after the program file belongs to the program, even words that look like
 * tl's own options (they used to be taken: this printed the memory statistics) */
TEST(command_arguments_after_the_file_go_to_the_program) {
  result r = run((char *[]){"build/tl", "run", "tests/lang/basics/readme_program.tl", "--mem-stats", "-o", "x", NULL}, NULL);
  FILE *f = fopen("tests/lang/basics/readme_program.out", "rb");
  char want[4096] = {0};
  if (f) {
    size_t n = fread(want, 1, sizeof want - 1, f);
    want[n] = 0;
    fclose(f);
  }
  CHECK_RUN(r, 0, want, "");
  result_free(&r);
}

/* args_get(0) is the program's path as given, then the words after it; System::exit's
 * code is tl run's exit status */
TEST(command_program_arguments_and_exit_code) {
  result r = run((char *[]){"build/tl", "run", "tests/lang/lib/args.tl", "alpha", "--beta", NULL}, NULL);
  CHECK_RUN(r, 0, "3\ntrue\nalpha\n--beta\n", "");
  result_free(&r);
  r = run((char *[]){"build/tl", "run", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  CHECK_RUN(r, 3, "held\n4.0\n", "");
  result_free(&r);
}

/* --dot DIR: a DOT file per realize; a DIR that cannot be made: the reason, exit 2 */
TEST(command_dot) {
  char *dir = tl_test_tmpdir();
  CHECK(dir != NULL);
  if (!dir) return;
  char sub[64], file[96];
  snprintf(sub, sizeof sub, "%s/pics", dir);
  result r = run((char *[]){"build/tl", "run", "--dot", sub, "tests/lang/basics/readme_program.tl", NULL}, NULL);
  CHECK_INT(r.status, 0);
  CHECK_STR(r.err, "");
  result_free(&r);
  snprintf(file, sizeof file, "%s/realize-0001.dot", sub);
  FILE *f = fopen(file, "r");
  CHECK(f != NULL);
  char head[64] = {0};
  if (f) {
    CHECK(fread(head, 1, sizeof head - 1, f) > 0);
    fclose(f);
  }
  CHECK(!strncmp(head, "digraph tl_realize {", 20));
  /* a regular file where the directory's parent should be */
  snprintf(file, sizeof file, "%s/plain", dir);
  f = fopen(file, "w");
  if (f) fclose(f);
  snprintf(sub, sizeof sub, "%s/plain/x", dir);
  r = run((char *[]){"build/tl", "run", "--dot", sub, "tests/lang/basics/readme_program.tl", NULL}, NULL);
  char want[256];
  snprintf(want, sizeof want, "tl: run: --dot: dot directory '%s' cannot be created: Not a directory\n", sub);
  CHECK_RUN(r, 2, "", want);
  result_free(&r);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* file names in generated C: quotes, backslashes, control bytes and `??` escaped */
TEST(command_c_string_escapes) {
  tl_strbuf b = {0};
  tl_gen_c_string(&b, "a\"b\\c d\n\t\x01\x7f?\?/9\xc3\xa9"); /* ?\? is "??" */
  char *s = tl_strbuf_take(&b);
  CHECK_STR(s, "\"a\\\"b\\\\c d\\012\\011\\001\\177\\?\\?/9\xc3\xa9\"");
  free(s);
}

static char *slurp_path(const char *path) {
  int fd = open(path, O_RDONLY);
  return fd < 0 ? NULL : read_fd(fd);
}

/* `tl build` with an output name built to break a shell command line and a source
 * path built to break a C string literal: the program builds and runs, nothing is
 * injected, run-time errors name the file as it is, and the temporary C file is a
 * fresh one (a file at the old predictable name EXE.c is left alone) and is removed.
 * tl runs in a fresh directory, where an injected `touch injected` would land. */
TEST(command_build_hostile_names) {
  char *dir = tl_test_tmpdir(), *tl = realpath("build/tl", NULL);
  if (!dir || !tl) {
    tl_test_fail(__FILE__, __LINE__, "tl_test_tmpdir or realpath failed");
    tl_test_rm_tree(dir);
    free(tl);
    return;
  }
  const char *exe = "o'; touch injected; '";
  char src[96], marker[96], old_tmp[112], tmpdir[96], abs_exe[96], want_err[160];
  snprintf(src, sizeof src, "%s/p\"q\\ r?\?'$(x)\n.tl", dir); /* ?\? is "??" */
  snprintf(marker, sizeof marker, "%s/injected", dir);
  snprintf(abs_exe, sizeof abs_exe, "%s/%s", dir, exe);
  snprintf(old_tmp, sizeof old_tmp, "%s.c", abs_exe);
  snprintf(tmpdir, sizeof tmpdir, "%s/tmp", dir);
  mkdir(tmpdir, 0700);
  char *prog = slurp_path("tests/lang/runtime/int_division_by_zero.tl");
  FILE *f = fopen(src, "wb");
  if (f) fputs(prog ? prog : "", f), fclose(f);
  f = fopen(old_tmp, "wb");
  if (f) fputs("keep", f), fclose(f);
  free(prog);
  snprintf(want_err, sizeof want_err, "%s:2:37: runtime error: integer division by zero\n", src);

  result r = run_in((char *[]){tl, "build", src, "-o", (char *)exe, NULL}, tmpdir, dir);
  CHECK_RUN(r, 0, "", "");
  result_free(&r);
  CHECK(access(marker, F_OK) != 0);
  char *kept = slurp_path(old_tmp);
  CHECK_STR(kept, "keep");
  free(kept);
  r = run((char *[]){"/bin/ls", "-A", tmpdir, NULL}, NULL);
  CHECK_RUN(r, 0, "", ""); /* the temporary C file is gone */
  result_free(&r);

  r = run((char *[]){abs_exe, NULL}, NULL);
  CHECK_RUN(r, 1, "3\ninf\n4\n6\n12\n", want_err);
  result_free(&r);
  r = run((char *[]){tl, "run", src, NULL}, NULL);
  CHECK_RUN(r, 1, "3\ninf\n4\n6\n12\n", want_err);
  result_free(&r);
  r = run((char *[]){tl, "check", src, NULL}, NULL);
  CHECK_RUN(r, 0, "", "");
  result_free(&r);
  /* the #line directives: a raw newline there would end the directive mid-name */
  char want_line[160];
  snprintf(want_line, sizeof want_line, "\n#line 2 \"%s/p\\\"q\\\\ r\\?\\?'$(x)\\012.tl\"\n", dir);
  r = run((char *[]){tl, "run", "--emit-c", src, NULL}, NULL);
  CHECK_CONTAINS(r.out, want_line);
  CHECK_INT(r.status, 0);
  result_free(&r);

  unlink(src);
  unlink(abs_exe);
  unlink(old_tmp);
  rmdir(tmpdir);
  CHECK_INT(rmdir(dir), 0); /* nothing else was created */
  tl_test_rm_tree(dir);      /* anything else, if that failed */
  free(tl);
}

/* `tl build` links the libtl.a beside the tl executable: a tl copied elsewhere says
 * which file it misses instead of leaving it to the linker */
TEST(command_build_needs_libtl_beside_tl) {
  char *dir = tl_test_tmpdir();
  if (!dir) {
    tl_test_fail(__FILE__, __LINE__, "tl_test_tmpdir failed");
    return;
  }
  char *tl = tl_test_path(dir, "tl"), want[160];
  result r = run((char *[]){"/bin/cp", "build/tl", tl, NULL}, NULL);
  CHECK_INT(r.status, 0);
  result_free(&r);
  snprintf(want, sizeof want, "tl: cannot find %s/libtl.a (tl build links the libtl.a beside the tl executable, or in ../lib)\n", dir);
  r = run((char *[]){tl, "build", "tests/lang/basics/smoke.tl", "-o", "/dev/null/x", NULL}, NULL);
  CHECK_RUN(r, 1, "", want);
  result_free(&r);
  unlink(tl);
  free(tl);
  CHECK_INT(rmdir(dir), 0);
  tl_test_rm_tree(dir); /* anything else, if that failed */
}

/* every ```rust block of docs/language.md is a whole program; the ```text block after
 * one is exactly what it prints (stdout, then stderr), run as prog.tl, with
 * `--mem-stats` when the block says ```text mem-stats. A block with no output shown
 * must compile. So the reference cannot drift from the compiler. */
TEST(docs_language_examples) {
  char *doc = slurp_path("docs/language.md");
  if (!doc) {
    tl_test_fail(__FILE__, __LINE__, "cannot read docs/language.md");
    return;
  }
  int examples = 0;
  for (char *p = strstr(doc, "\n```rust\n"); p; p = strstr(p, "\n```rust\n")) {
    char *prog = p + 9, *end = strstr(prog, "\n```\n");
    if (!end) break;
    size_t plen = (size_t)(end - prog) + 1;
    char *after = end + 5, *want = NULL;
    bool mem_stats = false;
    if (!strncmp(after, "```text\n", 8) || !strncmp(after, "```text mem-stats\n", 18)) {
      mem_stats = after[7] == ' ';
      want = strchr(after, '\n') + 1;
      char *wend = strstr(want, "```\n");
      if (!wend) break;
      *wend = 0;
      after = wend + 4;
    }
    char *src = strndup(prog, plen), *out = NULL, *err = NULL;
    size_t nout = 0, nerr = 0;
    FILE *fo = open_memstream(&out, &nout), *fe = open_memstream(&err, &nerr);
    int rc;
    if (want) {
      tl_lang_run_options o = {.out = fo, .err = fe, .mem_stats = mem_stats};
      rc = tl_lang_run_source("prog.tl", src, plen, &o);
    } else {
      char *c = tl_lang_compile("prog.tl", src, plen, false, fe);
      rc = c ? 0 : 1;
      free(c);
    }
    fclose(fo);
    fclose(fe);
    char *got = NULL;
    size_t ngot = 0;
    FILE *fg = open_memstream(&got, &ngot);
    fputs(out, fg);
    fputs(err, fg);
    fclose(fg);
    examples++;
    if (want ? strcmp(got, want) != 0 : rc != 0)
      tl_test_fail(__FILE__, __LINE__, "docs/language.md example %d (exit %d):\n%s--- prints:\n%s--- the page says:\n%s",
                   examples, rc, src, got, want ? want : "(no output block: it must compile)\n");
    free(src), free(out), free(err), free(got);
    p = after - 1;
  }
  CHECK(examples >= 10);
  free(doc);
}

/* tl build compiles with TL_CC when it is set, as the kernels do */
TEST(command_build_uses_tl_cc) {
  setenv("TL_CC", "/nonexistent/tl-test-cc", 1);
  result r = run((char *[]){"build/tl", "build", "tests/lang/basics/smoke.tl", "-o", "/tmp/tl-cc-test-unused", NULL}, NULL);
  unsetenv("TL_CC");
  CHECK_RUN(r, 1, "", "tl: cannot run /nonexistent/tl-test-cc: No such file or directory\n"
                      "tl: TL_CC=/nonexistent/tl-test-cc: install it, or unset TL_CC to use cc\n");
  result_free(&r);
  setenv("TL_CC", "/nonexistent/tcc", 1); /* the command tcc, not installed: what to install */
  r = run((char *[]){"build/tl", "build", "tests/lang/basics/smoke.tl", "-o", "/tmp/tl-cc-test-unused", NULL}, NULL);
  unsetenv("TL_CC");
  CHECK_RUN(r, 1, "", "tl: cannot run /nonexistent/tcc: No such file or directory\n"
                      "tl: TL_CC=/nonexistent/tcc: install it (Debian: apt-get install tcc), or unset TL_CC to use cc\n");
  result_free(&r);
}

/* writes text to dir/name; the path, or NULL */
static char *write_in(const char *dir, const char *name, const char *text, mode_t mode) {
  char *path = malloc(strlen(dir) + strlen(name) + 2);
  if (!path) return NULL;
  sprintf(path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f) fputs(text, f);
  if (!f || fclose(f) != 0 || chmod(path, mode) != 0) {
    free(path);
    return NULL;
  }
  return path;
}

/* TL_CC naming a tcc without its headers (a script printing tcc's message): the error
 * says what to install */
TEST(command_tcc_without_headers) {
  char *dir = tl_test_tmpdir();
  char *cc = dir ? write_in(dir, "tcc", "#!/bin/sh\n"
                                        "echo \"x.c:1: error: include file 'stddef.h' not found\" >&2\n"
                                        "exit 1\n", 0700) : NULL;
  char *prog = dir ? write_in(dir, "p.tl", "fn main() { println(1); }\n", 0600) : NULL;
  char cache[256];
  snprintf(cache, sizeof cache, "%s/cache", dir ? dir : "");
  CHECK(cc && prog);
  if (!cc || !prog) return;
  setenv("TL_CC", cc, 1);
  setenv("TL_CACHE_DIR", cache, 1);
  result r = run((char *[]){"build/tl", "run", prog, NULL}, NULL);
  unsetenv("TL_CC");
  unsetenv("TL_CACHE_DIR");
  CHECK_RUN(r, 1, "", "tl: compiling the generated C failed: kernel compilation failed (tcc exit 1): "
                      "x.c:1: error: include file 'stddef.h' not found\n"
                      "  tcc cannot find its header files: install the tcc package (Debian: apt-get install "
                      "tcc; libtcc-dev has the in-memory compiler but not the headers), or unset TL_CC to use cc\n");
  result_free(&r);
  free(cc);
  free(prog);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* the environment: an unknown TL_BACKEND stops the run before anything runs (exit 1,
 * naming the backends); a value of another variable that is not understood is said,
 * naming the variable and its values, and the program runs */
TEST(command_environment_values) {
  setenv("TL_CUDA_LIB", "/nonexistent/libcuda.so.1", 1); /* as on a machine without a GPU (each test is a process) */
  setenv("TL_BACKEND", "bogus", 1);
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* the usable backends: cpu and interp */
  result r = run((char *[]){"build/tl", "run", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  unsetenv("TL_BACKEND");
  unsetenv("TL_OPENCL_LIB");
  CHECK_RUN(r, 1, "", "tl: TL_BACKEND: unknown backend 'bogus' (expected cpu or interp)\n");
  result_free(&r);
  setenv("TL_BACKEND", "cuda", 1); /* known, but it cannot run here */
  r = run((char *[]){"build/tl", "run", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  unsetenv("TL_BACKEND");
  CHECK_RUN(r, 1, "", "tl: TL_BACKEND: backend 'cuda' is not available: libcuda.so.1 not found: no NVIDIA driver\n");
  result_free(&r);
  setenv("TL_THREADS", "abc", 1);
  setenv("TL_DEBUG", "x", 1);
  setenv("TL_PROFILE", "yes", 1);
  setenv("TL_MEM_REPORT", "2", 1);
  r = run((char *[]){"build/tl", "run", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  unsetenv("TL_THREADS");
  unsetenv("TL_DEBUG");
  unsetenv("TL_PROFILE");
  unsetenv("TL_MEM_REPORT");
  CHECK_RUN(r, 3, "held\n4.0\n",
            "tl: TL_THREADS: 'abc' is not understood (expected a positive number of threads): one per core instead\n"
            "tl: TL_DEBUG: 'x' is not understood (expected 0 or 1): ignored\n"
            "tl: TL_PROFILE: 'yes' is not understood (expected 0 or 1): ignored\n"
            "tl: TL_MEM_REPORT: '2' is not understood (expected 0 or 1): ignored\n");
  result_free(&r);
}

/* --max-tuples N: the limit of tuples one relation may hold, for tl run and built into
 * a tl build executable; Logic::max_tuples() reads it (the program sets its own limit
 * only when it finds the default, 50000000). m holds 1000 tuples: 999 is too few */
#define LIMIT_TAIL                                                                                                \
  " tuples, the limit for one relation: recursion through arithmetic may not end (bound it with a comparison), " \
  "or raise the limit with `tl run --max-tuples N` or `Logic::set_max_tuples(N)`\n"
TEST(command_max_tuples) {
  char *prog = "tests/lang/logic/err_max_tuples_runaway.tl";
  const char *at_n = "tests/lang/logic/err_max_tuples_runaway.tl:12:17: runtime error: relation `n` would hold more than 1500" LIMIT_TAIL;
  result r = run((char *[]){"build/tl", "run", "--max-tuples", "1500", prog, NULL}, NULL);
  CHECK_RUN(r, 1, "1500 1500 1000\n", at_n);
  result_free(&r);
  r = run((char *[]){"build/tl", "run", "--max-tuples", "999", prog, NULL}, NULL);
  CHECK_RUN(r, 1, "",
            "tests/lang/logic/err_max_tuples_runaway.tl:11:51: runtime error: relation `m` would hold more than 999" LIMIT_TAIL);
  result_free(&r);
  char *dir = tl_test_tmpdir();
  char *exe = dir ? tl_test_path(dir, "runaway") : NULL;
  CHECK(exe != NULL);
  if (!exe) return;
  r = run((char *[]){"build/tl", "build", "--max-tuples", "1500", prog, "-o", exe, NULL}, NULL);
  CHECK_RUN(r, 0, "", "");
  result_free(&r);
  r = run((char *[]){exe, NULL}, NULL);
  CHECK_RUN(r, 1, "1500 1500 1000\n", at_n);
  result_free(&r);
  unlink(exe);
  free(exe);
  CHECK_INT(tl_test_rm_tree(dir), 0);
}

/* warnings are printed by tl check (and tl run) and do not fail it */
TEST(command_check_warnings) {
  result r = run((char *[]){"build/tl", "check", "tests/lang/logic/warn_singleton.tl", NULL}, NULL);
  char *want = slurp_path("tests/lang/logic/warn_singleton.err");
  CHECK_RUN(r, 0, "", want ? want : "(missing)");
  free(want);
  result_free(&r);
}

/* tl devices: every backend the build knows, whether it can run here and why not */
TEST(command_devices) {
  setenv("TL_CUDA_LIB", "/nonexistent/libcuda.so.1", 1); /* as on a machine without a GPU (each test is a process) */
  char *saved = tl_test_env_save("TL_OPENCL_LIB");
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* as on a machine without OpenCL */
  result r = run((char *[]){"build/tl", "devices", NULL}, NULL);
  CHECK_RUN(r, 0,
            "cpu: available (C kernels built by cc or libtcc, run on a thread pool)\n"
            "interp: available (the reference interpreter: the graph evaluated node by node, in double precision)\n"
            "opencl: not available (cannot load /nonexistent/libOpenCL.so.1: install pocl-opencl-icd, or a GPU's "
            "OpenCL driver)\n"
            "cuda: not available (libcuda.so.1 not found: no NVIDIA driver)\n",
            "");
  result_free(&r);
  unsetenv("TL_OPENCL_LIB");
  r = run((char *[]){"build/tl", "devices", NULL}, NULL); /* where OpenCL runs: what it found */
  if (strstr(r.out, "\nopencl: available (")) CHECK_CONTAINS(r.out, ", driver "); /* platform, device, version, driver */
  else CHECK_CONTAINS(r.out, "\nopencl: not available (");
  result_free(&r);
  r = run((char *[]){"build/tl", "devices", "cpu", NULL}, NULL);
  CHECK_RUN(r, 2, "", "tl: devices: unexpected argument 'cpu'\nusage: tl devices\n");
  result_free(&r);
  tl_test_env_restore("TL_OPENCL_LIB", saved);
}

/* tl run --backend NAME runs the program there, over TL_BACKEND's choice; TL_PROFILE's
 * lines name the backend that ran each kernel (interp: each realize). exit_code.tl
 * prints ones([4]).sum() = 4 and exits with 3. */
TEST(command_backend_flag) {
  setenv("TL_CUDA_LIB", "/nonexistent/libcuda.so.1", 1); /* as on a machine without a GPU (each test is a process) */
  char *saved_profile = tl_test_env_save("TL_PROFILE"), *saved_backend = tl_test_env_save("TL_BACKEND");
  /* a backend the build knows that cannot run here: exit 1 before anything runs, as
   * TL_BACKEND's (LANGUAGE.md 12) */
  result r = run((char *[]){"build/tl", "run", "--backend", "cuda", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  CHECK_RUN(r, 1, "", "tl: run: --backend: backend 'cuda' is not available: libcuda.so.1 not found: no NVIDIA driver\n");
  result_free(&r);
  setenv("TL_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1); /* no OpenCL platform */
  r = run((char *[]){"build/tl", "run", "--backend", "opencl", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  unsetenv("TL_OPENCL_LIB");
  CHECK_RUN(r, 1, "",
            "tl: run: --backend: backend 'opencl' is not available: cannot load /nonexistent/libOpenCL.so.1: install "
            "pocl-opencl-icd, or a GPU's OpenCL driver\n");
  result_free(&r);
  setenv("TL_PROFILE", "1", 1);
  setenv("TL_BACKEND", "interp", 1);
  r = run((char *[]){"build/tl", "run", "--backend", "cpu", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  CHECK_INT(r.status, 3);
  CHECK_STR(r.out, "held\n4.0\n");
  CHECK_CONTAINS(r.err, "tl profile: realize 0 kernel 0 on cpu: ");
  CHECK_CONTAINS(r.err, " ms, 1 args, output f32 [1 elements]\n"); /* ones: a constant, no input */
  CHECK(!strstr(r.err, "interp"));
  result_free(&r);
  unsetenv("TL_BACKEND");
  r = run((char *[]){"build/tl", "run", "--backend", "interp", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  CHECK_INT(r.status, 3);
  CHECK_STR(r.out, "held\n4.0\n");
  CHECK_CONTAINS(r.err, "tl profile: realize 0 on interp: ");
  CHECK_CONTAINS(r.err, " ms, output f32 [1 elements]\n");
  CHECK(!strstr(r.err, "on cpu"));
  result_free(&r);
  /* the same program on the OpenCL device, where there is one (asked of `tl devices`: this
   * process never loads an OpenCL platform, which valgrind's run would flag) */
  r = run((char *[]){"build/tl", "devices", NULL}, NULL);
  bool opencl = strstr(r.out, "\nopencl: available (") != NULL;
  result_free(&r);
  if (opencl) {
    r = run((char *[]){"build/tl", "run", "--backend", "opencl", "tests/lang/lib/exit_code.tl", NULL}, NULL);
    CHECK_INT(r.status, 3);
    CHECK_STR(r.out, "held\n4.0\n");
    CHECK_CONTAINS(r.err, "tl profile: realize 0 kernel 0 on opencl: ");
    CHECK(!strstr(r.err, "on cpu"));
    result_free(&r);
  }
  tl_clear_error(NULL);
  tl_test_env_restore("TL_PROFILE", saved_profile);
  tl_test_env_restore("TL_BACKEND", saved_backend);
}

/* TL_DEBUG=1 lists each kernel as the backend rendered it, from the kernel's own text
 * on (the render's body: not the prelude pasted before it) */
TEST(command_debug_lists_kernel_bodies) {
  char *saved = tl_test_env_save("TL_DEBUG");
  setenv("TL_DEBUG", "1", 1);
  result r = run((char *[]){"build/tl", "run", "tests/lang/lib/exit_code.tl", NULL}, NULL);
  CHECK_INT(r.status, 3);
  CHECK(!strncmp(r.err, "--- kernel 0 ---\nvoid TL_UNIT(tl_kernel)(void *const *bufs, tl_i64 begin, tl_i64 end) {\n",
                 strlen("--- kernel 0 ---\nvoid TL_UNIT(tl_kernel)(void *const *bufs, tl_i64 begin, tl_i64 end) {\n")));
  CHECK(!strstr(r.err, "typedef")); /* the prelude's types stay out */
  result_free(&r);
  tl_test_env_restore("TL_DEBUG", saved);
}
