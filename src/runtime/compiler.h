/* compiler.h — turns kernel C source into a callable function.
 * in: C source text defining `void NAME(void *const *bufs, int64_t begin, int64_t end)`;
 * out: the function pointer, loaded from (in order) this process's memory cache,
 * the on-disk cache, or a fresh compilation.
 *
 * Drivers: the system C compiler (`cc -O3 -march=native ...` by default, TL_CC and
 * TL_CFLAGS override) writing shared objects into the on-disk cache; or libtcc
 * (name "tcc"), loaded with dlopen when installed, compiling in memory.
 *
 * On-disk cache: a private directory (created 0700; refused when not owned by the
 * user or open to others). An entry is keyed by a hash of source, compiler and
 * flags; it is loaded only if it is owned by the user, not writable by others, and
 * its bytes match the checksum recorded beside it. Anything else is rebuilt.
 * Processes and threads building the same kernel take its lock (<key>.lock, flock):
 * one compiles, the others load its entry. A build writes private temporary files,
 * loads the .so, then renames it into place.
 *
 * When the cache directory cannot be used (read-only, full, unwritable, another
 * user's, not a directory), at creation or at any later build, kernels are compiled
 * into a private temporary directory instead, removed by tl_compiler_destroy; the
 * first time in a process this is said on stderr.
 *
 * Tiered compilation (tl_compiler_request, tl_compiler_flush; runtime/tiered.c): the
 * kernels a realize needs are requested together, then flushed. A kernel found
 * nowhere is compiled at once by libtcc when the process carries it (tier 1, about a
 * millisecond), and queued for `cc` with the optimisation flags on a background
 * thread (tier 2), which builds the queued kernels in one translation unit, stores
 * them in the disk cache and swaps each kernel's code atomically. Without libtcc (or
 * with TL_TIERED=0) the flush builds the kernels with `cc` at once, in one batch. What
 * is still queued when the compiler is destroyed follows TL_COMPILE_AT_EXIT: finish
 * (default: a detached, niced process builds it into the disk cache), wait, or drop. */
#ifndef TL_RUNTIME_COMPILER_H
#define TL_RUNTIME_COMPILER_H

#include <stdint.h>

#include "core/error.h"

typedef void (*tl_kernel_fn)(void *const *bufs, int64_t begin, int64_t end);

typedef enum { TL_COMPILER_CC, TL_COMPILER_TCC } tl_compiler_kind;

typedef struct tl_compiler tl_compiler;

/* A requested kernel's code: the function to run now, replaced (tier 1 -> tier 2) at
 * any moment by the background build. Owned by the compiler, valid until
 * tl_compiler_destroy; read it once per call with tl_kernel_code_fn. */
typedef struct tl_kernel_code tl_kernel_code;

typedef struct {
  uint64_t compiled;     /* compiler invocations that succeeded */
  uint64_t disk_hits;    /* loaded from the on-disk cache */
  uint64_t mem_hits;     /* already loaded in this process */
  uint64_t disk_rejects; /* disk entries found corrupt, truncated or foreign: rebuilt */
  /* disk_rejects by reason */
  uint64_t rejects_link;    /* a symbolic link or not a regular file */
  uint64_t rejects_foreign; /* another user's, or writable by others */
  uint64_t rejects_size;    /* truncated or grown: not the recorded size */
  uint64_t rejects_sum;     /* the checksum differs, or the .sum is missing or bad */
  uint64_t rejects_load;    /* verified but dlopen or dlsym failed */
  uint64_t dir_repairs;     /* our cache directory had a mode other than 0700: fixed */
  uint64_t fallback;        /* 1: the shared cache is unusable, kernels go to a private temp dir */
  /* tiered compilation (tl_compiler_request) */
  uint64_t tier1;        /* kernels compiled by libtcc (counted in compiled too) */
  uint64_t tier2;        /* kernels compiled by cc through requests (at once or in the background) */
  uint64_t swaps;        /* tier-1 code replaced by tier-2 code */
  uint64_t batches;      /* cc invocations that built requested kernels */
  uint64_t tier2_failed; /* background builds that failed: those kernels keep their tier-1 code */
  uint64_t pending;      /* kernels queued or being built in the background now */
} tl_compiler_stats;

/* cc: NULL means $TL_CC or "cc"; "tcc" selects libtcc. flags: NULL means $TL_CFLAGS or
 * the default optimisation flags. cache_dir: NULL means $TL_CACHE_DIR, else
 * $XDG_CACHE_HOME/tl, else $HOME/.cache/tl. Fails (NULL + err) when the compiler cannot
 * be found or the cache directory cannot be created or is not private. */
tl_compiler *tl_compiler_create(const char *cc, const char *flags, const char *cache_dir,
                                tl_error *err);
void tl_compiler_destroy(tl_compiler *c);
tl_compiler_kind tl_compiler_get_kind(const tl_compiler *c);
const char *tl_compiler_cache_dir(const tl_compiler *c);
tl_compiler_stats tl_compiler_get_stats(const tl_compiler *c);

/* on: every disk hit is loaded from a private copy, so that no other loader in the
 * process shares its globals (TL programs keep their run's state in them) */
void tl_compiler_set_private_loads(tl_compiler *c, int on);

/* tests: the next fallback is said on stderr again */
void tl_compiler_reset_notice(void);

/* Returns the function `fn_name` defined by `source`. The loaded code lives until
 * tl_compiler_destroy. A compile failure gives TL_ERR_COMPILER with the first lines
 * of the compiler's diagnostics. */
tl_status tl_compiler_get(tl_compiler *c, const char *source, const char *fn_name,
                          tl_kernel_fn *out, tl_error *err);

/* Tiered, batched compilation of kernel units. A unit's source names its function
 * TL_UNIT(fn_name) and its other file-scope names TL_UNIT(name), all static, so that
 * many units compile as one translation unit (the compiler defines TL_UNIT for each);
 * text it shares with other units (a prelude) must be guarded against a second
 * paste. request: the code of the unit, found in memory or on disk, else recorded
 * for the next flush (its function is NULL until then). flush: compiles every
 * recorded unit (see the header comment); on error the first failure's message. */
tl_status tl_compiler_request(tl_compiler *c, const char *source, const char *fn_name,
                              const tl_kernel_code **out, tl_error *err);
tl_status tl_compiler_flush(tl_compiler *c, tl_error *err);
/* the function to run now (NULL before the flush that compiles it) and its tier:
 * 0 none yet, 1 libtcc, 2 cc */
tl_kernel_fn tl_kernel_code_fn(const tl_kernel_code *code);
int tl_kernel_code_tier(const tl_kernel_code *code);
/* a run of the code's tier-1 function took ns: the background builds the kernels that
 * cost the most first */
void tl_kernel_code_ran(const tl_kernel_code *code, uint64_t ns);
/* blocks until no background build is queued or running (tests, benchmarks) */
void tl_compiler_wait(tl_compiler *c);
/* on (default: TL_TIERED, else on): flushes compile with libtcc first when present;
 * off: with cc at once (executables made by `tl build` run optimized kernels only) */
void tl_compiler_set_tiered(tl_compiler *c, int on);

#endif
