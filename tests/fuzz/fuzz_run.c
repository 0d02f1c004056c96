/* fuzz_run.c — the whole-pipeline harness: a program that passes the checker is
 * compiled and run (in a child process, under a CPU-time limit and, without ASan, a
 * memory limit), with the system compiler (TL_FUZZ_CC overrides it; libtcc cannot
 * compile a program, whose prelude includes the C library's headers). A program's own endless loop or a limit reached is not a finding; a
 * crash of the child is (the harness aborts, so AFL++ records it). */
#include "fuzz.h"
#include "lang/lang.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_ASAN 1
#endif
#endif

/* the child: limits, then check, compile and run with output discarded */
static int fuzz_run_child(const uint8_t *data, size_t size) {
  if (getenv("TL_FUZZ_CC")) setenv("TL_CC", getenv("TL_FUZZ_CC"), 1); /* this process only */
  struct rlimit cpu = {5, 6};
  setrlimit(RLIMIT_CPU, &cpu);
#ifndef FUZZ_ASAN /* ASan reserves terabytes of address space: no AS limit under it */
  struct rlimit as = {(rlim_t)2 << 30, (rlim_t)2 << 30};
  setrlimit(RLIMIT_AS, &as);
#endif
  FILE *null = fopen("/dev/null", "w");
  if (!null) return 0;
  tl_lang_run_options o = {.out = null, .err = null};
  tl_lang_run_source("fuzz.tl", (const char *)data, size, &o);
  fclose(null);
  return 0;
}

int tl_fuzz_run(const uint8_t *data, size_t size) {
  /* only programs the checker accepts go further (the front harness covers the rest) */
  FILE *null = fopen("/dev/null", "w");
  if (!null) return 0;
  char *c = tl_lang_compile("fuzz.tl", (const char *)data, size, false, null);
  fclose(null);
  if (!c) return 0;
  free(c);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return 0;
  if (pid == 0) _exit(fuzz_run_child(data, size));
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 0;
  if (!WIFSIGNALED(status)) return 0; /* exit 0, or 1 after a compile or run-time error */
  int sig = WTERMSIG(status);
  if (sig == SIGXCPU || sig == SIGKILL) return 0; /* a limit: the program's own doing */
  fprintf(stderr, "fuzz_run: the program's process died of signal %d\n", sig);
  abort();
}
