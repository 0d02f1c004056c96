/* tiered.c — tiered compilation: requests and flushes (the caller's thread), the
 * background builders (tier 2) and what becomes of their queue when the compiler is
 * destroyed.
 *
 * A realize requests all its kernels, then flushes: a unit found nowhere is compiled
 * with libtcc (tier 1, in memory) when the process carries it, and queued for cc; a
 * builder thread (from BUILD_DELAY_S after the first unit is queued) takes the
 * hottest queued units (up to BATCH_MAX), builds them in one cc invocation into the
 * disk cache (compile_batch.c), loads them and swaps each unit's function with an
 * atomic store. Callers load the function once per run (acquire),
 * so a replayed realize holding the unit runs the new code from its next run on.
 * Tier-1 code stays loaded until the compiler is destroyed: a thread may still be
 * running it when the swap happens.
 *
 * At destroy (TL_COMPILE_AT_EXIT): `finish` (default) stops the builders (a running
 * cc is killed, its units go back to the queue) and hands the queue to a detached
 * process (double fork, new session, niced, no inherited descriptors) that builds
 * it into the disk cache after the program has gone, so the next run starts with
 * optimized kernels without this one waiting; `wait` builds it before returning;
 * `drop` abandons it. Every way leaves the cache valid: entries appear only by
 * rename, under their lock (docs/decisions.md). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/compiler_internal.h"

enum {
  BATCH_MAX = 8,       /* units per builder's cc invocation: a first swap within ~0.3 s */
  EXIT_BATCH_MAX = 32, /* after exit, nothing waits: about 10% less per kernel than 8 */
  MAX_BUILDERS = 16,
  BACKGROUND_NICE = 10, /* builders and what they run yield to the program */
  BUILD_DELAY_S = 5     /* builders start this long after the first kernel is queued */
};

typedef enum { AT_EXIT_FINISH, AT_EXIT_WAIT, AT_EXIT_DROP } at_exit_policy;

static at_exit_policy exit_policy(void) {
  const char *v = getenv("TL_COMPILE_AT_EXIT");
  if (v && !strcmp(v, "wait")) return AT_EXIT_WAIT;
  if (v && !strcmp(v, "drop")) return AT_EXIT_DROP;
  return AT_EXIT_FINISH;
}

/* TL_COMPILE_JOBS: background builders (default 1; 0: none while the program runs,
 * the queue is left to TL_COMPILE_AT_EXIT) */
static int builder_count(void) {
  const char *v = getenv("TL_COMPILE_JOBS");
  int n = v && *v ? atoi(v) : 1;
  return n < 0 ? 0 : n > MAX_BUILDERS ? MAX_BUILDERS : n;
}

tl_kernel_fn tl_kernel_code_fn(const tl_kernel_code *code) {
  return code ? atomic_load_explicit(&code->fn, memory_order_acquire) : NULL;
}

int tl_kernel_code_tier(const tl_kernel_code *code) {
  return code ? atomic_load_explicit(&code->tier, memory_order_relaxed) : 0;
}

void tl_kernel_code_ran(const tl_kernel_code *code, uint64_t ns) {
  /* the counter is only a hint: a relaxed add */
  atomic_fetch_add_explicit(&((tl_kernel_code *)code)->heat, ns, memory_order_relaxed);
}

void tl_compiler_set_tiered(tl_compiler *c, int on) {
  if (c) c->tiered = on != 0;
}

/* ---- the units: found by key and name, never shrinks ------------------------------ */
static tl_unit *unit_find(const tl_compiler *c, const uint64_t key[2], const char *fn_name) {
  uint64_t it;
  for (tl_hset_walk w = tl_hset_find(&c->units, tl_kernel_name_hash(key, fn_name)); (it = tl_hset_next(&c->units, &w));) {
    tl_unit *u = (tl_unit *)(uintptr_t)it;
    if (u->key[0] == key[0] && u->key[1] == key[1] && !strcmp(u->fn_name, fn_name)) return u;
  }
  return NULL;
}

static int unit_insert(tl_compiler *c, tl_unit *u) {
  return tl_hset_add(&c->units, tl_kernel_name_hash(u->key, u->fn_name), (uintptr_t)u) ? 0 : -1;
}

static void unit_free(tl_unit *u) {
  if (!u) return;
  free(u->fn_name), free(u->symbol), free(u->source);
  free(u);
}

static tl_unit *unit_new(const uint64_t key[2], const char *source, const char *fn_name) {
  tl_unit *u = calloc(1, sizeof *u);
  if (!u) return NULL;
  u->key[0] = key[0], u->key[1] = key[1];
  snprintf(u->keyhex, sizeof u->keyhex, "%016llx%016llx", (unsigned long long)key[0], (unsigned long long)key[1]);
  u->fn_name = strdup(fn_name);
  u->symbol = tl_compiler_fmt("%s_%s", fn_name, u->keyhex);
  u->source = strdup(source);
  atomic_init(&u->code.fn, NULL);
  atomic_init(&u->code.tier, 0);
  atomic_init(&u->code.heat, 0);
  if (!u->fn_name || !u->symbol || !u->source) {
    unit_free(u);
    return NULL;
  }
  return u;
}

/* the unit's tier-2 entry, if the disk cache has it */
static void load_from_disk(tl_compiler *c, tl_unit *u) {
  char *dir = tl_compiler_entry_dir(c);
  char *so = dir ? tl_compiler_fmt("%s/%s.so", dir, u->keyhex) : NULL;
  char *sum = dir ? tl_compiler_fmt("%s/%s.sum", dir, u->keyhex) : NULL;
  void *handle = NULL;
  tl_kernel_fn fn = NULL;
  int got = so && sum ? tl_compiler_disk_load(c, so, sum, u->symbol, &handle, &fn, 0) : 0;
  if (got < 0) { /* a bad entry, or one being stored: look again under its lock */
    char *lock = tl_compiler_fmt("%s/%s.lock", dir, u->keyhex);
    int fd = lock ? tl_entry_take_lock(lock) : -1;
    got = tl_compiler_disk_load(c, so, sum, u->symbol, &handle, &fn, 1);
    tl_entry_drop_lock(fd);
    free(lock);
  }
  if (got == 1) {
    u->handle = handle;
    atomic_store_explicit(&u->code.tier, 2, memory_order_relaxed);
    atomic_store_explicit(&u->code.fn, fn, memory_order_release);
    u->state = UNIT_DONE;
    free(u->source);
    u->source = NULL;
    tl_compiler_count(c, &c->stats.disk_hits, 1);
  }
  free(dir), free(so), free(sum);
}

static int add_needed(tl_compiler *c, tl_unit *u) {
  if (u->listed) return 0;
  if (!tl_vec_push(&c->needed, u)) return -1;
  u->listed = 1;
  return 0;
}

tl_status tl_compiler_request(tl_compiler *c, const char *source, const char *fn_name,
                              const tl_kernel_code **out, tl_error *err) {
  if (!c || !source || !fn_name || !out)
    return tl_error_set(err, TL_ERR_ARG, "tl_compiler_request: NULL argument");
  if (!tl_compiler_is_identifier(fn_name))
    return tl_error_set(err, TL_ERR_ARG, "kernel name '%s' is not a C identifier", fn_name);
  uint64_t key[2];
  tl_compiler_key(c, source, "unit", key);
  tl_unit *u = unit_find(c, key, fn_name);
  if (u) {
    tl_compiler_count(c, &c->stats.mem_hits, 1);
    /* compiled, or due in this flush; else an earlier flush failed on it: again */
    if (!atomic_load_explicit(&u->code.fn, memory_order_relaxed) && add_needed(c, u))
      return tl_error_set(err, TL_ERR_NOMEM, "out of memory requesting a kernel");
    *out = &u->code;
    return TL_OK;
  }
  if (!(u = unit_new(key, source, fn_name)) || unit_insert(c, u)) {
    unit_free(u);
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory requesting a kernel");
  }
  if (c->kind == TL_COMPILER_CC) load_from_disk(c, u);
  if (u->state != UNIT_DONE && add_needed(c, u))
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory requesting a kernel");
  *out = &u->code;
  return TL_OK;
}

/* ---- the background builders ------------------------------------------------------- */
typedef struct {
  tl_compiler *c;
  int id;
} builder_arg;

/* a batch is done (built, or failed: it keeps tier 1); under mu */
static void finish_units(tl_compiler *c, tl_unit **units, int n, int failed) {
  for (int i = 0; i < n; i++) {
    units[i]->state = UNIT_DONE;
    free(units[i]->source);
    units[i]->source = NULL;
  }
  if (failed) c->stats.tier2_failed += (uint64_t)n;
  c->building -= n;
}

/* back to the front of the queue (a builder stopped mid-build); under mu */
static void requeue(tl_compiler *c, tl_unit **units, int n) {
  for (int i = n - 1; i >= 0; i--) {
    units[i]->state = UNIT_QUEUED;
    units[i]->next = c->queue_head;
    c->queue_head = units[i];
    if (!c->queue_tail) c->queue_tail = units[i];
  }
  c->building -= n;
}

static uint64_t heat_of(const tl_unit *u) { return atomic_load_explicit(&u->code.heat, memory_order_relaxed); }

/* the hottest queued unit (the most time in tier-1 code; the first queued of equals),
 * taken off the queue; under mu */
static tl_unit *take_hottest(tl_compiler *c) {
  tl_unit *best = NULL, *best_prev = NULL, *prev = NULL;
  for (tl_unit *u = c->queue_head; u; prev = u, u = u->next)
    if (!best || heat_of(u) > heat_of(best)) best = u, best_prev = prev;
  if (!best) return NULL;
  if (best_prev) best_prev->next = best->next;
  else c->queue_head = best->next;
  if (c->queue_tail == best) c->queue_tail = best_prev;
  best->next = NULL;
  return best;
}

/* up to max units off the queue, the hottest first; under mu */
static int take_batch(tl_compiler *c, tl_unit **units, int max) {
  int n = 0;
  tl_unit *u;
  while (n < max && (u = take_hottest(c))) {
    u->state = UNIT_BUILDING;
    units[n++] = u;
  }
  c->building += n;
  return n;
}

static int is_stopping(tl_compiler *c) {
  pthread_mutex_lock(&c->mu);
  int s = c->stopping;
  pthread_mutex_unlock(&c->mu);
  return s;
}

/* a build ended: its units are done (a failed one keeps its tier-1 code), or back in
 * the queue when a stop killed it */
static void settle(tl_compiler *c, tl_unit **units, int n, tl_status st) {
  pthread_mutex_lock(&c->mu);
  if (st && c->stopping) requeue(c, units, n);
  else finish_units(c, units, n, st != TL_OK);
  pthread_cond_broadcast(&c->idle);
  pthread_mutex_unlock(&c->mu);
}

/* A unit whose optimized build failed runs its tier-1 code to the end: said once per
 * compiler on stderr, as nothing else would show it (a TL_CFLAGS cc rejects, a full disk) */
static void say_failed(tl_compiler *c, const tl_error *err) {
  pthread_mutex_lock(&c->mu);
  int say = !c->stopping && !c->said_tier2;
  c->said_tier2 = 1;
  pthread_mutex_unlock(&c->mu);
  if (say) fprintf(stderr, "tl: building optimized kernels failed, they run unoptimized: %s\n", err->msg);
}

/* builds a batch; when it fails (one unit's error fails them all), each unit alone */
static void build_batch(tl_compiler *c, tl_unit **units, int n, int id) {
  tl_error err = {0};
  tl_status st = tl_batch_build_cc(c, units, n, BUILD_BACKGROUND, id, &err);
  if (!st || n == 1 || is_stopping(c)) {
    if (st) say_failed(c, &err);
    settle(c, units, n, st);
    return;
  }
  int i = 0;
  for (; i < n && !is_stopping(c); i++) {
    tl_status one = tl_batch_build_cc(c, &units[i], 1, BUILD_BACKGROUND, id, &err);
    if (one) say_failed(c, &err);
    settle(c, &units[i], 1, one);
  }
  if (i < n) settle(c, &units[i], n - i, TL_ERR_COMPILER); /* stopping: back to the queue */
}

static void *builder_main(void *arg) {
  builder_arg *b = arg;
  tl_compiler *c = b->c;
  int id = b->id;
  free(b);
#ifdef SYS_gettid
  /* Linux: a thread's nice value, inherited by the compilers it runs */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), BACKGROUND_NICE);
#endif
  tl_unit *units[BATCH_MAX];
  pthread_mutex_lock(&c->mu);
  for (;;) {
    while (!c->queue_head && !c->stopping) pthread_cond_wait(&c->wake, &c->mu);
    /* a short run is over before optimizing pays off; meanwhile cc would take a core
     * from it (its queue is built after exit) */
    while (!c->stopping && c->build_after.tv_sec &&
           pthread_cond_timedwait(&c->wake, &c->mu, &c->build_after) != ETIMEDOUT)
      continue;
    if (c->stopping) break;
    int n = take_batch(c, units, BATCH_MAX);
    pthread_mutex_unlock(&c->mu);
    build_batch(c, units, n, id);
    pthread_mutex_lock(&c->mu);
  }
  pthread_mutex_unlock(&c->mu);
  return NULL;
}

/* starts the builders the first time work is queued; under mu. A builder that cannot
 * start leaves its work to the others, or to the end (TL_COMPILE_AT_EXIT) */
static void start_builders(tl_compiler *c) {
  if (c->builders || c->stopping) return;
  int n = builder_count();
  if (n == 0) return;
  c->builders = calloc((size_t)n, sizeof *c->builders);
  c->inflight = calloc((size_t)n, sizeof *c->inflight);
  if (!c->builders || !c->inflight) {
    free(c->builders), free(c->inflight);
    c->builders = NULL, c->inflight = NULL;
    return;
  }
  c->owner = getpid();
  for (int i = 0; i < n; i++) {
    builder_arg *b = malloc(sizeof *b);
    if (!b) break;
    *b = (builder_arg){c, i};
    if (pthread_create(&c->builders[c->nbuilders], NULL, builder_main, b) != 0) {
      free(b);
      break;
    }
    c->nbuilders++;
  }
}

static void enqueue(tl_compiler *c, tl_unit **units, int n) {
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < n; i++) {
    units[i]->state = UNIT_QUEUED;
    units[i]->next = NULL;
    if (c->queue_tail) c->queue_tail->next = units[i];
    else c->queue_head = units[i];
    c->queue_tail = units[i];
  }
  if (!c->builders && !c->stopping) { /* the first queued: builders start in BUILD_DELAY_S */
    clock_gettime(CLOCK_MONOTONIC, &c->build_after);
    c->build_after.tv_sec += BUILD_DELAY_S;
  }
  start_builders(c);
  pthread_cond_broadcast(&c->wake);
  pthread_mutex_unlock(&c->mu);
}

void tl_compiler_wait(tl_compiler *c) {
  if (!c) return;
  pthread_mutex_lock(&c->mu);
  c->build_after = (struct timespec){0, 0}; /* someone waits: no delay */
  pthread_cond_broadcast(&c->wake);
  while ((c->queue_head || c->building) && c->nbuilders > 0 && c->owner == getpid())
    pthread_cond_wait(&c->idle, &c->mu);
  pthread_mutex_unlock(&c->mu);
}

/* ---- flush ----------------------------------------------------------------------------- */
/* the units compiled (final, tier 2 or kind tcc): their sources are done with */
static void mark_done(tl_compiler *c, tl_unit **units, int n) {
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < n; i++) {
    units[i]->state = UNIT_DONE;
    free(units[i]->source);
    units[i]->source = NULL;
  }
  pthread_mutex_unlock(&c->mu);
}

/* Compiles units with tcc (tier 1) or cc at once, all together; when that fails, one
 * at a time, so that one unit's error is its own. ok[i]: unit i compiled. The first
 * error is kept in err. */
static tl_status compile_each(tl_compiler *c, tl_unit **units, int n, int tier1, int *ok, tl_error *err) {
  tl_status st = tier1 ? tl_batch_build_tcc(c, units, n, err) : tl_batch_build_cc(c, units, n, BUILD_NOW, 0, err);
  for (int i = 0; i < n; i++) ok[i] = st == TL_OK;
  if (st == TL_OK || n == 1) return st;
  tl_error first = *err;
  tl_status first_st = TL_OK;
  for (int i = 0; i < n; i++) {
    tl_error e = {0};
    tl_status one = tier1 ? tl_batch_build_tcc(c, &units[i], 1, &e) : tl_batch_build_cc(c, &units[i], 1, BUILD_NOW, 0, &e);
    ok[i] = one == TL_OK;
    if (one && !first_st) first_st = one, first = e;
  }
  *err = first;
  return first_st;
}

tl_status tl_compiler_flush(tl_compiler *c, tl_error *err) {
  if (!c) return tl_error_set(err, TL_ERR_ARG, "tl_compiler_flush: NULL compiler");
  int n = (int)c->needed.len;
  if (n == 0) return TL_OK;
  tl_unit **units = malloc((size_t)n * sizeof *units), **rest = malloc((size_t)n * sizeof *rest);
  int *ok = calloc((size_t)n, sizeof *ok);
  if (!units || !rest || !ok) {
    free(units), free(rest), free(ok);
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory compiling kernels");
  }
  memcpy(units, c->needed.data, (size_t)n * sizeof *units);
  c->needed.len = 0;
  for (int i = 0; i < n; i++) units[i]->listed = 0;
  tl_status st = TL_OK;
  int nrest = n;
  memcpy(rest, units, (size_t)n * sizeof *rest);
  int tier1 = c->kind == TL_COMPILER_TCC || (c->tiered && c->tcc_ok);
  if (tier1) {
    st = compile_each(c, units, n, 1, ok, err);
    nrest = 0;
    int nq = 0;
    for (int i = 0; i < n; i++) {
      if (!ok[i]) rest[nrest++] = units[i]; /* tcc could not: cc now */
      else units[nq++] = units[i];
    }
    if (c->kind == TL_COMPILER_TCC) mark_done(c, units, nq);
    else if (nq) enqueue(c, units, nq);
    if (c->kind == TL_COMPILER_TCC) nrest = 0;
  }
  if (nrest) {
    tl_error e = {0};
    tl_status now = compile_each(c, rest, nrest, 0, ok, &e);
    int nd = 0;
    for (int i = 0; i < nrest; i++)
      if (ok[i]) rest[nd++] = rest[i];
    mark_done(c, rest, nd);
    if (now) st = now, *err = e; /* cc's error: the one that counts */
    else if (st) st = TL_OK, tl_error_clear(err);
  }
  free(units), free(rest), free(ok);
  return st;
}

/* ---- at the end ------------------------------------------------------------------------ */
/* closes every descriptor from 3 up (the program's pipes must not stay open in a
 * process that outlives it) */
static void close_from_3(void) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
#endif
  for (int fd = 3; fd < 1024; fd++) close(fd);
}

/* the queue as an array (*n units), NULL when empty or out of memory */
static tl_unit **queued(tl_compiler *c, int *n) {
  *n = 0;
  for (tl_unit *u = c->queue_head; u; u = u->next) (*n)++;
  tl_unit **units = *n ? malloc((size_t)*n * sizeof *units) : NULL;
  *n = 0;
  for (tl_unit *u = c->queue_head; units && u; u = u->next) units[(*n)++] = u;
  return units;
}

/* builds units into the disk cache, batch by batch, loading nothing */
static void build_into_cache(tl_compiler *c, tl_unit **units, int n) {
  for (int i = 0; i < n; i += EXIT_BATCH_MAX) {
    int k = n - i < EXIT_BATCH_MAX ? n - i : EXIT_BATCH_MAX;
    tl_error err = {0};
    if (tl_batch_build_cc(c, &units[i], k, BUILD_DETACHED, 0, &err) != TL_OK && k > 1)
      for (int j = 0; j < k; j++) tl_batch_build_cc(c, &units[i + j], 1, BUILD_DETACHED, 0, &err);
  }
}

/* builds the queue in a detached process (see the header comment) */
static void finish_detached(tl_compiler *c) {
  int n;
  if (c->fallback_dir) return; /* a private temporary directory is not kept */
  tl_unit **units = queued(c, &n);
  if (!units) return;
  fflush(NULL);
  pid_t mid = fork();
  if (mid == 0) {
    if (fork() != 0) _exit(0); /* the middle one: its child is nobody's to wait for */
    setsid();
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) dup2(null, 0), dup2(null, 1), dup2(null, 2);
    close_from_3();
    if (nice(BACKGROUND_NICE) == -1) errno = 0;
    build_into_cache(c, units, n);
    _exit(0);
  }
  if (mid > 0)
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR) continue;
  free(units);
}

static void stop_builders(tl_compiler *c, at_exit_policy policy) {
  if (!c->builders) return;
  if (c->owner != getpid()) { /* a forked child: the threads are the parent's */
    free(c->builders), free(c->inflight);
    c->builders = NULL, c->inflight = NULL, c->nbuilders = 0;
    return;
  }
  if (policy == AT_EXIT_WAIT) tl_compiler_wait(c);
  pthread_mutex_lock(&c->mu);
  c->stopping = 1;
  pthread_cond_broadcast(&c->wake);
  for (int i = 0; i < c->nbuilders; i++) /* not reaped yet: the group is the cc's (compile_batch.c) */
    if (c->inflight[i] > 0) kill(-c->inflight[i], SIGKILL);
  pthread_mutex_unlock(&c->mu);
  for (int i = 0; i < c->nbuilders; i++) pthread_join(c->builders[i], NULL);
  free(c->builders), free(c->inflight);
  c->builders = NULL, c->inflight = NULL, c->nbuilders = 0;
}

void tl_tiered_destroy(tl_compiler *c) {
  at_exit_policy policy = exit_policy();
  stop_builders(c, policy);
  if (policy == AT_EXIT_FINISH && c->owner == getpid()) finish_detached(c);
  if (policy == AT_EXIT_WAIT && c->queue_head && !c->fallback_dir) { /* no builder ran (TL_COMPILE_JOBS=0) */
    int n;
    tl_unit **units = queued(c, &n);
    if (units) build_into_cache(c, units, n);
    free(units);
  }
  for (size_t i = 0; i < c->units.cap; i++) {
    tl_unit *u = (tl_unit *)(uintptr_t)c->units.item[i];
    if (!u) continue;
    if (u->handle) dlclose(u->handle);
    unit_free(u);
  }
  tl_hset_free(&c->units);
  tl_vec_free(&c->needed);
  pthread_mutex_lock(&tl_tcc_mutex);
  for (size_t i = 0; i < c->tcc_states.len; i++) c->tcc.delete_state(c->tcc_states.data[i]);
  pthread_mutex_unlock(&tl_tcc_mutex);
  tl_vec_free(&c->tcc_states);
}
