/* lang.c — the TL pipeline: source -> tokens -> tree -> checked tree -> ownership ->
 * C -> the engine's compiler and cache -> a loaded function, run with the run-time
 * library. Everything of the front end lives in one arena freed at the end of the
 * compilation; the program's values live in the engine context and the run state. */
#include "lang/lang.h"

#include <stdlib.h>
#include <string.h>

#include "lang/gen/gen.h"
#include "lang/front/lex.h"
#include "lang/front/module.h"
#include "lang/front/stdlib.h"
#include "lang/check/own.h"
#include "lang/front/parse.h"
#include "lang/rt/rt.h"
#include "lang/rt/rt_ml.h" /* tlrt_varbuilder_end */
#include "lang/check/sema.h"
#include "api/context.h"
#include "runtime/compiler.h"

char *tl_lang_compile(const char *path, const char *src, size_t len, bool line_directives, FILE *err) {
  tl_arena *arena = tl_arena_create();
  if (!arena) {
    fprintf(err, "tl: out of memory\n");
    return NULL;
  }
  tl_diag diag;
  tl_diag_init(&diag, path, src, len);
  tl_lexer lx = {.arena = arena};
  char *c = NULL;
  tl_program *prog = NULL;
  tl_sema S;
  tl_lex(&lx, &diag);
  /* after syntax errors the checker still runs: it checks what parsed cleanly and only
   * declares the rest (tl_program.broken), so the file's type errors come out too */
  tl_parse(lx.tokens, lx.ntokens, &diag, arena, &prog);
  if (!prog || tl_arena_failed(arena) || tl_arena_failed(lx.arena)) goto done;
  tl_modules_load(prog, path, &diag, arena); /* `mod m;` files join the program */
  tl_stdlib_load(prog, src, len, &diag, arena); /* File::open, KVCache... (front/stdlib.c) */
  if (tl_arena_failed(arena) || tl_sema_check(prog, &diag, arena, &S) || diag.errors || tl_modules_errors(prog))
    goto done;
  for (tl_fninfo *f = S.fns; f; f = f->next)
    if (tl_own_analyze(f)) {
      fprintf(err, "tl: out of memory in the ownership pass\n");
      goto done;
    }
  char msg[300];
  c = tl_arena_failed(arena) ? NULL : tl_gen_program(&S, arena, path, line_directives, msg, sizeof msg);
  if (!c && !tl_arena_failed(arena)) fprintf(err, "%s\n", msg);
done:
  if (tl_arena_failed(arena) || tl_arena_failed(lx.arena) || diag.text.oom) { /* incomplete: say only that */
    free(c);
    c = NULL;
    fprintf(err, "tl: out of memory compiling %s\n", path);
    tl_diag_free(&diag);
    tl_diag_init(&diag, path, src, len);
  }
  tl_diag_sort(&diag);
  tl_diag_limit(&diag, TL_DIAG_MAX_SHOWN);
  if ((diag.errors || diag.warnings) && diag.text.data) fputs(diag.text.data, err);
  tl_modules_print(prog, err); /* each module's errors after the program's */
  tl_modules_free(prog);
  tl_diag_free(&diag);
  tl_lex_free(&lx);
  tl_arena_destroy(arena);
  return c;
}

int tl_lang_exec(tl_program_fn fn, const char *path, const tl_lang_run_options *o) {
  tl_ctx *ctx = tl_init();
  if (!ctx) { /* out of memory, or an environment variable it cannot use (TL_BACKEND) */
    fprintf(o->err, "tl: %s\n", tl_last_error(NULL));
    return 1;
  }
  if (o->optimized_only) tl_api_set_optimized_only(ctx);
  if (o->backend && tl_set_backend(ctx, o->backend)) { /* cannot start: exit 1, before the program runs */
    fprintf(o->err, "tl: run: --backend: %s\n", tl_last_error(ctx));
    tl_shutdown(ctx);
    return 1;
  }
  if (o->dot_dir && tl_set_dot_dir(ctx, o->dot_dir)) { /* before the program runs: exit 2 */
    fprintf(o->err, "tl: run: --dot: %s\n", tl_last_error(ctx));
    tl_shutdown(ctx);
    return 2;
  }
  tlrt *R = calloc(1, sizeof *R);
  jmp_buf *jb = malloc(sizeof *jb);
  int rc = 1;
  if (R && jb) {
    tlrt_init(R, ctx, path, o->out);
    R->err = o->err;
    R->argc = o->argc;
    R->argv = o->argv;
    R->max_tuples = o->max_tuples;
    R->on_error = jb;
    bool failed = setjmp(*jb) != 0;
    if (!failed) rc = fn(R);
    fflush(o->out);
    if (failed && R->exiting) { /* System::exit(code): no error, the program's code */
      failed = false;
      rc = R->exit_code;
    }
    if (failed && tl_dist_launched()) /* under mpirun: `rank R: ...`, and the whole job ends (LANGUAGE.md §13) */
      tl_dist_abort(R->error, o->err);
    else if (failed) /* the error first, then (with --mem-stats) what was live when it struck */
      fprintf(o->err, "%s\n", R->error);
    if (failed) {
      fflush(o->err);
      rc = 1;
    }
    tlrt_varbuilder_end(R); /* VarBuilder's parameters live as long as main */
    if (o->mem_stats) tlrt_print_mem_stats(R, o->out);
    if (o->stats) {
      tl_stats e = tl_get_stats(ctx);
      *o->stats = (struct tl_stats_out){e.kernels_run, e.realizes, e.live_tensors, R->stats.objects_live};
    }
    tlrt_free_all(R);
  } else {
    fprintf(o->err, "tl: out of memory\n");
  }
  free(R);
  free(jb);
  tl_shutdown(ctx);
  return rc;
}

int tl_lang_main(tl_program_fn fn, const char *path, int argc, char **argv, long long max_tuples) {
  /* an executable made to be deployed runs optimized kernels only */
  tl_lang_run_options o = {.out = stdout, .err = stderr, .argc = argc, .argv = argv, .max_tuples = max_tuples,
                           .optimized_only = true};
  return tl_lang_exec(fn, path, &o);
}

int tl_lang_run_source(const char *path, const char *src, size_t len, const tl_lang_run_options *o) {
  char *c = tl_lang_compile(path, src, len, true, o->err);
  if (!c) return 1;
  tl_error e = {0};
  /* -O2 as a C programmer would; the cache key holds these flags */
  tl_compiler *cc = tl_compiler_create(NULL, TL_LANG_CFLAGS, NULL, &e);
  if (!cc) {
    fprintf(o->err, "tl: %s\n", e.msg);
    free(c);
    return 1;
  }
  /* a program keeps its run's state in globals of its .so: a private instance per
   * run, or two threads running the same program would share them */
  tl_compiler_set_private_loads(cc, 1);
  tl_kernel_fn fn = NULL;
  if (tl_compiler_get(cc, c, "tl_program_main", &fn, &e)) {
    fprintf(o->err, "tl: compiling the generated C failed: %s\n", e.msg);
    free(c);
    tl_compiler_destroy(cc);
    return 1;
  }
  free(c);
  int rc = tl_lang_exec((tl_program_fn)(void *)fn, path, o);
  tl_compiler_destroy(cc);
  return rc;
}
