/* lang.h — the TL language driver: compile a .tl file to C and run it (lang.c). */
#ifndef TL_LANG_LANG_H
#define TL_LANG_LANG_H

/* how a program's C is compiled (tl run; tl build passes the same flags): -fwrapv
 * makes integer overflow wrap, which the generated arithmetic relies on */
#define TL_LANG_CFLAGS "-O2 -fno-math-errno -fwrapv -w"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct tlrt;
typedef int (*tl_program_fn)(struct tlrt *R);

typedef struct {
  FILE *out, *err; /* program output; diagnostics and run-time errors */
  bool mem_stats;  /* print the memory statistics at exit (to out) */
  bool optimized_only; /* kernels from cc only, no libtcc tier (tl build executables) */
  const char *dot_dir; /* not NULL: tl_set_dot_dir (tl run --dot DIR) */
  const char *backend; /* not NULL: tl_set_backend (tl run --backend NAME) */
  int argc;
  char **argv;
  struct tl_stats_out *stats; /* not NULL: the engine's statistics at exit land here */
  long long max_tuples; /* the most tuples one relation may hold; 0: TLRT_MAX_TUPLES (rt.h) */
} tl_lang_run_options;

/* what tl_lang_exec reports back when asked (tests: laziness, loops, kernels) */
struct tl_stats_out {
  unsigned long long kernels_run, realizes, live_tensors, live_objects;
};

/* the file's text (malloc'd, *len bytes) or NULL with a message on err (front/module.c:
 * modules are read with it too) */
char *tl_lang_read_file(const char *path, size_t *len, FILE *err);
/* the program as C (malloc'd), or NULL after printing every error to err */
char *tl_lang_compile(const char *path, const char *src, size_t len, bool line_directives, FILE *err);
/* compile, load through the engine's compiler and cache, run: the exit code (0, or 1
 * after a compile or run-time error) */
int tl_lang_run_source(const char *path, const char *src, size_t len, const tl_lang_run_options *o);
/* runs a compiled program's entry in a fresh engine context */
int tl_lang_exec(tl_program_fn fn, const char *path, const tl_lang_run_options *o);
/* the `main` of a `tl build` executable: tl_lang_exec on stdout and stderr (its
 * generated C declares this prototype itself, so it only passes plain types);
 * max_tuples: `tl build --max-tuples N`'s, or 0 */
int tl_lang_main(tl_program_fn fn, const char *path, int argc, char **argv, long long max_tuples);

#endif
