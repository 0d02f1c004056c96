/* threadpool.c — persistent workers, one job at a time, the caller works too.
 *
 * Every piece of shared state is guarded by one mutex, so ThreadSanitizer,
 * helgrind and DRD can all see the happens-before edges (helgrind does not model
 * C11 atomics). A job is published by bumping `gen`. Its chunks are claimed in
 * order by whoever is awake, the caller first: chunk i is not tied to thread i,
 * because on a loaded machine a worker may not be scheduled for milliseconds, and
 * a job that waited for it would run at the speed of the slowest time slice. The
 * caller returns once every chunk is claimed and none is running. Waiting polls
 * the lock briefly before sleeping on a condition variable, because kernels often
 * come back to back and a futex wake-up costs more than a short poll. */
#include "runtime/threadpool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 256
#define SPIN_ITERS 1000

typedef struct {
  tl_kernel_fn fn;
  void *const *bufs;
  int64_t total;
  int nparts; /* chunks in this job, at most one per thread */
} job;

struct tl_pool {
  int n; /* threads in all, the caller included */
  pthread_t *threads;
  pthread_mutex_t mu; /* guards everything below */
  pthread_cond_t start_cv, done_cv;
  job job;
  uint64_t gen; /* bumped for each job */
  int next;     /* the next chunk of the current job to claim */
  int running;  /* chunks that workers have claimed and not finished */
  int stop;
  int busy; /* a job runs: a nested or concurrent call runs alone */
};

/* chunk i of n over [0, total): [total*i/n, total*(i+1)/n), without overflow */
static int64_t chunk_start(int64_t total, int n, int i) {
  int64_t base = total / n, rem = total % n;
  return base * i + rem * i / n;
}

static void run_chunk(const job *j, int i) {
  int64_t b = chunk_start(j->total, j->nparts, i), e = chunk_start(j->total, j->nparts, i + 1);
  if (b < e) j->fn(j->bufs, b, e);
}

/* Waits (mu held) until *value != seen or the pool stops: polls, then sleeps. */
static void wait_change(tl_pool *p, pthread_cond_t *cv, const uint64_t *value, uint64_t seen) {
  for (int i = 0; i < SPIN_ITERS && *value == seen && !p->stop; i++) {
    pthread_mutex_unlock(&p->mu);
    sched_yield();
    pthread_mutex_lock(&p->mu);
  }
  while (*value == seen && !p->stop) pthread_cond_wait(cv, &p->mu);
}

/* mu held: runs chunks of the current job while any is unclaimed */
static void work_chunks(tl_pool *p) {
  while (p->next < p->job.nparts) {
    int i = p->next++;
    job j = p->job;
    p->running++;
    pthread_mutex_unlock(&p->mu);
    run_chunk(&j, i);
    pthread_mutex_lock(&p->mu);
    if (--p->running == 0 && p->next >= p->job.nparts) pthread_cond_signal(&p->done_cv);
  }
}

static void *worker_main(void *arg) {
  tl_pool *p = arg;
  uint64_t seen = 0; /* gen at creation: a job published before we get here still counts */
  pthread_mutex_lock(&p->mu);
  for (;;) {
    wait_change(p, &p->start_cv, &p->gen, seen);
    if (p->stop) break;
    seen = p->gen;
    work_chunks(p);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* mu held: until no worker runs a chunk of the job (all are claimed by now) */
static void wait_for_workers(tl_pool *p) {
  for (int i = 0; i < SPIN_ITERS && p->running > 0; i++) {
    pthread_mutex_unlock(&p->mu);
    sched_yield();
    pthread_mutex_lock(&p->mu);
  }
  while (p->running > 0) pthread_cond_wait(&p->done_cv, &p->mu);
}

int tl_pool_env_threads(void) {
  const char *env = getenv("TL_THREADS");
  if (!env || !*env) return 0;
  char *end;
  errno = 0;
  long n = strtol(env, &end, 10);
  while (*end == ' ' || *end == '\t' || *end == '\n') end++;
  if (errno || *end || end == env || n <= 0) return -1; /* "abc", "4x", "0", "-2" */
  return n > MAX_THREADS ? MAX_THREADS : (int)n;
}

static int default_threads(void) {
  int n = tl_pool_env_threads();
  if (n <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    n = cores > 0 ? (int)(cores < MAX_THREADS ? cores : MAX_THREADS) : 1;
  }
  return n;
}

/* stops and joins the first `started` workers */
static void stop_workers(tl_pool *p, int started) {
  pthread_mutex_lock(&p->mu);
  p->stop = 1;
  pthread_cond_broadcast(&p->start_cv);
  pthread_mutex_unlock(&p->mu);
  for (int i = 0; i < started; i++) pthread_join(p->threads[i], NULL);
}

static void free_pool(tl_pool *p) {
  pthread_cond_destroy(&p->done_cv);
  pthread_cond_destroy(&p->start_cv);
  pthread_mutex_destroy(&p->mu);
  free(p->threads);
  free(p);
}

tl_pool *tl_pool_create(int nthreads) {
  int n = nthreads > 0 ? nthreads : default_threads();
  if (n > MAX_THREADS) n = MAX_THREADS;
  tl_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->n = n;
  p->threads = calloc((size_t)n, sizeof *p->threads);
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->start_cv, NULL);
  pthread_cond_init(&p->done_cv, NULL);
  if (!p->threads) {
    free_pool(p);
    return NULL;
  }
  for (int i = 1; i < n; i++) {
    if (pthread_create(&p->threads[i - 1], NULL, worker_main, p) != 0) {
      stop_workers(p, i - 1);
      free_pool(p);
      return NULL;
    }
  }
  return p;
}

void tl_pool_destroy(tl_pool *p) {
  if (!p) return;
  stop_workers(p, p->n - 1);
  free_pool(p);
}

int tl_pool_size(const tl_pool *p) { return p ? p->n : 1; }

void tl_pool_run(tl_pool *p, tl_kernel_fn fn, void *const *bufs, int64_t total,
                 int64_t min_chunk) {
  if (total <= 0) return;
  if (min_chunk < 1) min_chunk = 1;
  int alone = !p || p->n == 1 || total < 2 * min_chunk;
  if (!alone) {
    pthread_mutex_lock(&p->mu);
    alone = p->busy;
    if (alone) pthread_mutex_unlock(&p->mu);
  }
  /* small jobs, a 1-thread pool, or a call made while a job runs: caller alone */
  if (alone) {
    fn(bufs, 0, total);
    return;
  }
  /* no more chunks than min_chunk allows, so each is worth a thread */
  int64_t parts = total / min_chunk;
  job j = {fn, bufs, total, parts < p->n ? (int)parts : p->n};
  p->job = j;
  p->busy = 1;
  p->next = 1; /* the caller's own chunk 0 */
  p->running = 0;
  p->gen++;
  pthread_cond_broadcast(&p->start_cv);
  pthread_mutex_unlock(&p->mu);
  run_chunk(&j, 0);
  pthread_mutex_lock(&p->mu);
  work_chunks(p); /* chunks no worker has woken up for yet */
  wait_for_workers(p);
  p->busy = 0;
  pthread_mutex_unlock(&p->mu);
}
