/* backend_cpu.c — the cpu backend: kernels rendered as C (codegen/render_c.c), built by
 * cc or libtcc and loaded with dlopen (compiler.c, tiered.c), run split over the
 * thread pool (threadpool.c, kernel.c). Buffers are host memory. */
#include <stdlib.h>
#include <string.h>

#include "codegen/render_c.h"
#include "runtime/backend.h"
#include "runtime/compiler.h"
#include "runtime/threadpool.h"

typedef struct {
  tl_compiler *compiler; /* made on the first realize, with the context's settings */
  tl_pool *pool;
} cpu_state;

static cpu_state *state(const tl_backend *be) { return be->state; }

static tl_status cpu_prepare(tl_backend *be, tl_error *err) {
  if (!be->state && !(be->state = calloc(1, sizeof(cpu_state))))
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory starting the cpu backend");
  cpu_state *s = state(be);
  if (!s->compiler) {
    s->compiler = tl_compiler_create(be->opts->cc, NULL, be->opts->cache_dir, err);
    if (!s->compiler) return err->status;
    if (be->opts->optimized_only) tl_compiler_set_tiered(s->compiler, 0);
  }
  if (!s->pool && !(s->pool = tl_pool_create(0)))
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory starting the thread pool");
  return TL_OK;
}

static void cpu_configure(tl_backend *be) {
  cpu_state *s = state(be);
  if (s && s->compiler) tl_compiler_destroy(s->compiler);
  if (s) s->compiler = NULL; /* made again, with the new settings, on the next realize */
}

static void cpu_release(tl_backend *be) {
  cpu_state *s = state(be);
  if (!s) return;
  if (s->compiler) tl_compiler_destroy(s->compiler);
  if (s->pool) tl_pool_destroy(s->pool);
  free(s);
  be->state = NULL;
}

static void cpu_caps(const tl_backend *be, tl_backend_caps *out) {
  const cpu_state *s = be ? state(be) : NULL; /* no instance: what any cpu can do */
  *out = (tl_backend_caps){.max_group = 1, .max_group_dims = {1, 1, 1}, .f64 = true, .host_memory = true,
                           .units = s && s->pool ? tl_pool_size(s->pool) : 0};
}

static void cpu_stats(const tl_backend *be, tl_stats *s) {
  const cpu_state *cs = state(be);
  if (!cs || !cs->compiler) return;
  tl_compiler_stats c = tl_compiler_get_stats(cs->compiler);
  s->kernels_compiled += c.compiled;
  s->disk_cache_hits += c.disk_hits;
  s->mem_cache_hits += c.mem_hits;
  s->disk_cache_rejects += c.disk_rejects;
  s->cache_dir_repairs += c.dir_repairs;
  s->kernel_cache_fallback = c.fallback;
  s->kernels_tier1 += c.tier1;
  s->kernels_tier2 += c.tier2;
  s->kernel_swaps += c.swaps;
  s->compile_batches += c.batches;
}

/* ---- kernels ---- */
/* the parallel loop is split over the pool's threads in chunks of at least 32768
 * scalar iterations' worth (fewer: threads cost more than they give) */
static tl_status cpu_plan(tl_backend *be, const tl_lowered *low, tl_kernel *k, tl_error *err) {
  (void)be, (void)err;
  k->work = low->work;
  int64_t inner = low->inner_work > 0 ? low->inner_work : 1;
  k->min_chunk = 32768 / inner > 0 ? 32768 / inner : 1;
  return TL_OK;
}

static char *cpu_render(tl_backend *be, const tl_lowered *low, const tl_kernel *k, const char **body) {
  (void)be, (void)k; /* the C names the parallel loop's range [begin, end) */
  char *src = tl_render_c(low, "tl_kernel");
  const char *fn = src ? strstr(src, "\nvoid TL_UNIT(tl_kernel)") : NULL;
  *body = fn ? fn + 1 : src;
  return src;
}

static tl_status cpu_compile(tl_backend *be, const char *src, tl_kernel *k, tl_error *err) {
  return tl_compiler_request(state(be)->compiler, src, "tl_kernel", &k->code, err);
}

static tl_status cpu_flush(tl_backend *be, tl_error *err) { return tl_compiler_flush(state(be)->compiler, err); }

static tl_status cpu_launch(tl_backend *be, const tl_kernel *k, const tl_kernel_arg *args, const uint64_t *words,
                            tl_error *err) {
  return tl_kernel_exec(k, state(be)->pool, k->nargs, args, words, err);
}

/* the pool's run returns when every chunk is done */
static tl_status cpu_synchronize(tl_backend *be, tl_error *err) {
  (void)be, (void)err;
  return TL_OK;
}

const tl_backend_i tl_backend_cpu = {
    .name = "cpu",
    .about = "C kernels built by cc or libtcc, run on a thread pool",
    .prepare = cpu_prepare,
    .release = cpu_release,
    .configure = cpu_configure,
    .caps = cpu_caps,
    .stats = cpu_stats,
    .buffer_alloc = tl_backend_host_alloc,
    .copy_from_host = tl_backend_host_from,
    .copy_to_host = tl_backend_host_to,
    .copy = tl_backend_host_copy,
    .plan = cpu_plan,
    .render = cpu_render,
    .compile = cpu_compile,
    .flush = cpu_flush,
    .launch = cpu_launch,
    .synchronize = cpu_synchronize,
};

tl_compiler *tl_backend_cpu_compiler(const tl_backend *be) {
  return be && be->i == &tl_backend_cpu && be->state ? state(be)->compiler : NULL;
}
