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
 * first time in a process this is said on stderr. */
#ifndef TL_RUNTIME_COMPILER_H
#define TL_RUNTIME_COMPILER_H

#include <stdint.h>

#include "core/error.h"

typedef void (*tl_kernel_fn)(void *const *bufs, int64_t begin, int64_t end);

typedef enum { TL_COMPILER_CC, TL_COMPILER_TCC } tl_compiler_kind;

typedef struct tl_compiler tl_compiler;

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

#endif
