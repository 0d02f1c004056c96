/* backend.h — the backend interface, in the manner of ggml's ggml_backend_i: one struct
 * of function pointers per backend (backend_cpu.c, backend_interp.c, and the device
 * backends backend_opencl.c and backend_cuda.c over backend_gpu.c), and nothing above
 * it asks which backend it has.
 * in: a lowered kernel (codegen/lower.h) or a whole tensor graph; out: buffers of the
 * backend's memory holding the results.
 *
 * A backend runs graphs one of two ways, said by the pointers it fills:
 *  - kernels (cpu, opencl, cuda): api/realize.c rewrites, schedules and lowers
 *    the graph, then for each kernel asks the backend to plan it onto the device,
 *    render it, compile it (requests, then one flush: cached), and launch it on bound
 *    buffers; replay (runtime/replay.h) keeps the backend's kernels per instance.
 *  - eval (interp): the backend evaluates the tensor graph itself.
 * A backend that cannot run here (no driver, not built) says why in `unavailable`;
 * choosing it is an error before anything runs, never a fall back to another. */
#ifndef TL_RUNTIME_BACKEND_H
#define TL_RUNTIME_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/lower.h"
#include "core/buffer.h"
#include "core/error.h"
#include "runtime/kernel.h"
#include "runtime/replay.h"

typedef struct tl_backend tl_backend;

/* what a backend's device can do (`tl devices`; the plan of a GPU kernel reads it) */
typedef struct tl_backend_caps {
  int64_t max_group;        /* work-items in one work-group (cpu: 1: a thread runs a chunk) */
  int64_t max_group_dims[3];
  size_t local_mem_bytes;   /* memory a work-group shares (0: none) */
  bool f64, f16;            /* element types it computes in */
  bool host_memory;         /* its buffers are host memory: tl_data reads them in place */
  int units;                /* compute units (cpu: threads of the pool, 0 until made) */
} tl_backend_caps;

/* the context's settings every backend reads (tl_set_compiler, tl_set_cache_dir,
 * tl build's executables); owned by the context */
typedef struct tl_backend_opts {
  const char *cc;        /* NULL: $TL_CC or cc */
  const char *cache_dir; /* NULL: $TL_CACHE_DIR or the default */
  bool optimized_only;   /* kernels from the optimizing compiler only (no first tier) */
} tl_backend_opts;

typedef struct tl_backend_i {
  const char *name;  /* as TL_BACKEND, --backend and tl_set_backend name it */
  const char *about; /* one line for `tl devices` */
  /* NULL when it can run on this machine, else why not */
  const char *(*unavailable)(void);
  /* what it found here, for `tl devices` (the platform and device); NULL: its about */
  const char *(*found)(void);
  const void *driver; /* a device backend's driver (runtime/gpu_driver.h; backend_gpu.c) */

  /* ---- the instance (one per context and backend) ---- */
  /* makes its device state (compiler, pool, queue) on first use; called before every
   * realize, so it returns at once when ready; NULL: it needs none */
  tl_status (*prepare)(tl_backend *be, tl_error *err);
  void (*release)(tl_backend *be);     /* frees its state (NULL: it has none) */
  void (*configure)(tl_backend *be);   /* be->opts changed: drop what was made from them */
  void (*caps)(const tl_backend *be, tl_backend_caps *out);
  void (*stats)(const tl_backend *be, tl_stats *s); /* adds its counters (NULL: none) */

  /* ---- memory: buffers record the backend that made them ---- */
  tl_buffer *(*buffer_alloc)(tl_backend *be, tl_dtype dtype, int64_t numel, tl_mem *mem);
  /* host -> buffer, buffer -> host, buffer -> buffer (of one backend; between backends
   * the caller goes through host memory), n bytes at the buffers' byte offsets */
  tl_status (*copy_from_host)(tl_backend *be, tl_buffer *dst, size_t off, const void *src, size_t n, tl_error *err);
  tl_status (*copy_to_host)(tl_backend *be, void *dst, const tl_buffer *src, size_t off, size_t n, tl_error *err);
  tl_status (*copy)(tl_backend *be, tl_buffer *dst, const tl_buffer *src, size_t n, tl_error *err);
  /* the buffer's bytes in host memory (NULL for a backend whose buffers are host
   * memory: b->data). To read: brought from the device when the host copy is stale.
   * To write: the device copy is stale from then on, and sent again before the next
   * launch reads it; so writes through the pointer must come before that launch. */
  void *(*host_view)(tl_backend *be, tl_buffer *b, bool write, tl_error *err);

  /* ---- kernels (NULL for a backend that evaluates graphs: eval) ---- */
  /* how the lowered kernel maps onto the device: fills k's work split (cpu: the
   * parallel loop's range and the smallest chunk worth a thread; a GPU backend: its
   * grid, work-group and local memory) */
  tl_status (*plan)(tl_backend *be, const tl_lowered *low, tl_kernel *k, tl_error *err);
  /* the kernel's source as planned in k (malloc'd; NULL: out of memory); *body: where
   * the kernel's own text starts in it, after any prelude (TL_DEBUG prints that part) */
  char *(*render)(tl_backend *be, const tl_lowered *low, const tl_kernel *k, const char **body);
  /* asks for src's code into k (found in a cache, or built at the next flush) */
  tl_status (*compile)(tl_backend *be, const char *src, tl_kernel *k, tl_error *err);
  tl_status (*flush)(tl_backend *be, tl_error *err); /* builds what was asked, together */
  /* runs k on bound arguments (checked against k's metadata); words: k->nwords data words */
  tl_status (*launch)(tl_backend *be, const tl_kernel *k, const tl_kernel_arg *args, const uint64_t *words,
                      tl_error *err);
  tl_status (*synchronize)(tl_backend *be, tl_error *err); /* every launch finished */

  /* ---- graphs (NULL for a kernel backend) ---- */
  /* a new buffer holding u's values, or NULL with err set */
  tl_buffer *(*eval)(tl_backend *be, tl_uop *u, tl_mem *mem, tl_error *err);
} tl_backend_i;

/* an instance: the interface, the context's settings, the backend's own state, and
 * its realizes recorded for replay (their kernels are this instance's) */
struct tl_backend {
  const tl_backend_i *i;
  int index; /* i's in the table: the buffers it makes record index + 1 */
  const tl_backend_opts *opts;
  void *state;
  bool ready; /* prepared since it was made or last reconfigured */
  tl_replay_cache replay;
};

/* the table of backends this build knows, usable here or not: cpu, interp, opencl,
 * cuda (a device backend without its driver says why it is unavailable) */
int tl_backend_count(void);
const tl_backend_i *tl_backend_get(int index);
/* the backend of that name, or NULL */
const tl_backend_i *tl_backend_find(const char *name);
/* TL_OK when `name` is a backend that can run here; else TL_ERR_BACKEND with the
 * reason in err ("unknown backend 'x' (expected cpu or interp)", "backend 'opencl' is
 * not available: ...") */
tl_status tl_backend_check(const char *name, tl_error *err);

/* be becomes an instance of i (its state is made by prepare, on first use); false when
 * i is not the table's */
bool tl_backend_init(tl_backend *be, const tl_backend_i *i, const tl_backend_opts *opts);
/* frees what the instance holds (be->i NULL: nothing) and clears it */
void tl_backend_fini(tl_backend *be);
/* makes the instance's state when it is not ready (i->prepare) */
tl_status tl_backend_prepare(tl_backend *be, tl_error *err);
/* the settings changed: drops the instance's recorded realizes and what it built */
void tl_backend_reconfigure(tl_backend *be);

/* host memory (tl_buffer_new's), for the backends whose buffers live there: the
 * buffer_alloc and copy functions of the interface */
tl_buffer *tl_backend_host_alloc(tl_backend *be, tl_dtype dtype, int64_t numel, tl_mem *mem);
tl_status tl_backend_host_from(tl_backend *be, tl_buffer *dst, size_t off, const void *src, size_t n, tl_error *err);
tl_status tl_backend_host_to(tl_backend *be, void *dst, const tl_buffer *src, size_t off, size_t n, tl_error *err);
tl_status tl_backend_host_copy(tl_backend *be, tl_buffer *dst, const tl_buffer *src, size_t n, tl_error *err);

/* the first implementations */
extern const tl_backend_i tl_backend_cpu, tl_backend_interp, tl_backend_opencl, tl_backend_cuda;
/* tests: the cpu instance's compiler (NULL before its first realize, or for another
 * backend) */
tl_compiler *tl_backend_cpu_compiler(const tl_backend *be);

#endif
