/* compiler_internal.h — what the compiler driver's files share (not an API):
 * compiler.c (the object, the disk cache, cc and libtcc), compile_batch.c (many
 * kernel units in one translation unit, for cc and for libtcc) and tiered.c
 * (requests, flushes, the background builders, what happens at exit).
 *
 * Threads: a compiler is used by one caller thread at a time (its context's), and by
 * its background builders. `mu` guards the stats, the fallback directory, the queue
 * and every unit's state; a unit's code pointer is atomic (tl_kernel_code). libtcc
 * 0.9.27 keeps global state: every use of it, in any compiler, holds tl_tcc_mutex. */
#ifndef TL_RUNTIME_COMPILER_INTERNAL_H
#define TL_RUNTIME_COMPILER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "core/hash.h"
#include "core/vec.h"
#include "runtime/compiler.h"
#include "runtime/disk_entry.h"

typedef struct {
  uint64_t key[2]; /* hash of source + compiler identity */
  char *fn_name;
  void *handle; /* dlopen handle (cc) or TCCState (tcc) */
  tl_kernel_fn fn;
} mem_entry;

/* the tables' hash of a kernel: its key (already a strong hash) and its name */
static inline uint64_t tl_kernel_name_hash(const uint64_t key[2], const char *fn_name) {
  return tl_hash_bytes(tl_hash_mix(TL_HASH_INIT, key[0]), fn_name, strlen(fn_name));
}

/* libtcc entry points, found with dlsym (libtcc is optional at run time) */
typedef struct {
  void *lib; /* NULL: libtcc is linked into the program itself */
  void *(*new_state)(void);
  void (*delete_state)(void *);
  int (*set_output_type)(void *, int);
  int (*compile_string)(void *, const char *);
  int (*relocate)(void *, void *);
  void *(*get_symbol)(void *, const char *);
  void (*set_error_func)(void *, void *, void (*)(void *, const char *));
  void (*set_lib_path)(void *, const char *);
  int (*add_library)(void *, const char *);
  int (*add_symbol)(void *, const char *, const void *);
  void (*set_options)(void *, const char *);
  void (*define_symbol)(void *, const char *, const char *);
  char *runtime_dir; /* holds libtcc1.a */
  int stub_runtime;  /* our empty libtcc1.a: we supply its helpers */
} tcc_api;

struct tl_kernel_code {
  _Atomic(tl_kernel_fn) fn; /* what runs now; NULL until compiled */
  atomic_int tier;          /* 0, 1 (libtcc) or 2 (cc) */
  _Atomic uint64_t heat;    /* nanoseconds spent running its tier-1 code: the hottest is built first */
};

/* A requested kernel: its code, and while a build is due, its source. */
typedef enum {
  UNIT_NEEDED,  /* requested, no code yet: the next flush compiles it */
  UNIT_QUEUED,  /* tier-1 code; tier 2 waits for a background builder */
  UNIT_BUILDING,/* tier-1 code; a background builder has it */
  UNIT_DONE,    /* final code (tier 2, or tier 1 when tier 2 failed or is not wanted) */
} unit_state;

typedef struct tl_unit {
  uint64_t key[2];
  char keyhex[33];
  char *fn_name;
  char *symbol; /* fn_name "_" keyhex: its name in a batch */
  char *source; /* until its last build */
  tl_kernel_code code;
  void *handle; /* the dlopen handle of its tier-2 code */
  unit_state state;
  int listed;           /* in `needed` */
  struct tl_unit *next; /* in the queue */
} tl_unit;

/* a batch build's mode: what happens around the compile */
typedef enum {
  BUILD_NOW,        /* the caller waits: locks held while compiling, code loaded */
  BUILD_BACKGROUND, /* a builder thread: locks held while publishing, code loaded and swapped */
  BUILD_DETACHED,   /* the process that finishes after exit: published only, nothing loaded */
} build_mode;

struct tl_compiler {
  tl_compiler_kind kind;
  char *cc_name; /* as given, for messages */
  char *cc_path; /* resolved, run with posix_spawn */
  char *flags;   /* everything passed to cc before -o */
  char **argv;   /* cc_path, flag tokens (read only after creation) */
  int argc_base;
  char *cache_dir;
  uint64_t ident[2]; /* digest of compiler, flags and CPU, hashed into every key */
  tl_compiler_stats stats;
  tl_vec(mem_entry) entries; /* the kernels in memory */
  tl_hset map;                /* their indexes + 1, under tl_kernel_name_hash */
  char *fallback_dir; /* not NULL: the shared cache failed, kernels go here */
  int private_loads;  /* disk hits are loaded from a private copy (TL programs) */
  int cc_failed;      /* the last build ran cc and cc failed (caller thread only) */
  tcc_api tcc;
  int tcc_ok; /* kind cc: libtcc is in the process, for tier 1 */
  char log[768]; /* libtcc diagnostics of the current compilation (under tl_tcc_mutex) */
  size_t log_len;
  int log_lines;
  pthread_mutex_t mu;
  /* tiered.c */
  int tiered;                     /* tier 1 first when libtcc is present */
  tl_hset units;                  /* the requested units (pointers), never shrinks */
  tl_vec(tl_unit *) needed;       /* requested since the last flush, without code */
  tl_vec(void *) tcc_states;      /* tier-1 code: kept until destroy (it may be running) */
  tl_unit *queue_head, *queue_tail; /* tier 2 to build (under mu) */
  pthread_cond_t wake, idle;      /* builders wait for work; tl_compiler_wait for none */
  pthread_t *builders;
  int nbuilders, building;        /* threads started; units being built */
  pid_t *inflight;                /* each builder's running cc (its process group), or 0 */
  int stopping;
  struct timespec build_after;    /* builders start then (CLOCK_MONOTONIC); 0: at once */
  int said_tier2;                 /* a failed tier-2 build was reported */
  pid_t owner;                    /* the process that started the builders */
};

extern pthread_mutex_t tl_tcc_mutex;

/* ---- compiler.c ---------------------------------------------------------------- */
char *tl_compiler_fmt(const char *fmt, ...) TL_PRINTF(1, 2);
int tl_compiler_is_identifier(const char *s);
void tl_compiler_count(tl_compiler *c, uint64_t *field, uint64_t n); /* under mu */
/* the directory entries go to now (a copy, under mu) */
char *tl_compiler_entry_dir(tl_compiler *c);
void tl_compiler_key(const tl_compiler *c, const char *source, const char *tag, uint64_t key[2]);
unsigned tl_compiler_tmp_seq(void);
/* 1: loaded (handle, fn); 0: no entry; -1: a bad entry (removed and counted when locked) */
int tl_compiler_disk_load(tl_compiler *c, const char *so, const char *sum, const char *symbol,
                          void **handle, tl_kernel_fn *fn, int locked);
int tl_compiler_check_entry(tl_compiler *c, const char *so, const char *sum); /* locked */
/* spawns cc FLAGS... -o out src in its own process group, output to errpath; 0 or errno */
int tl_compiler_spawn_cc(tl_compiler *c, const char *src, const char *out, const char *errpath, pid_t *pid);
int tl_compiler_wait_child(pid_t pid, int *wstatus);
tl_status tl_compiler_cc_failed(tl_compiler *c, int wstatus, const char *src, const char *errpath, tl_error *err);
/* a libtcc state for kernel units (in memory, no system libraries: the symbols the
 * prelude declares are supplied); hold tl_tcc_mutex. NULL when out of memory */
void *tl_compiler_tcc_state(tl_compiler *c);
/* build(c, dir, arg, err) in the shared cache; when it fails for want of space or
 * permission (TL_ERR_CACHE, or cc failed, c->cc_failed set, where the directory takes
 * no writes), again in a private temporary directory used from then on (caller thread) */
typedef tl_status (*tl_dir_build)(tl_compiler *c, const char *dir, void *arg, tl_error *err);
tl_status tl_compiler_with_fallback(tl_compiler *c, tl_dir_build build, void *arg, tl_error *err);

/* ---- compile_batch.c ------------------------------------------------------------ */
/* One translation unit: each unit's source after #define TL_UNIT(name) name##_KEY;
 * NULL when out of memory */
char *tl_batch_source(tl_unit *const *units, int n);
/* builds units with cc in one invocation, in mode; per unit its code (loaded modes)
 * and state are set under mu. TL_OK, or the error of the batch (nothing of it set) */
tl_status tl_batch_build_cc(tl_compiler *c, tl_unit **units, int n, build_mode mode, int builder,
                            tl_error *err);
/* tier 1: compiles units with libtcc in one state; TL_OK or the error (nothing set) */
tl_status tl_batch_build_tcc(tl_compiler *c, tl_unit **units, int n, tl_error *err);

/* ---- tiered.c -------------------------------------------------------------------- */
void tl_tiered_destroy(tl_compiler *c); /* first thing tl_compiler_destroy does */

#endif
