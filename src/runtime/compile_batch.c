/* compile_batch.c — many kernel units compiled as one translation unit: by libtcc in
 * memory (tier 1), or by cc into the disk cache (tier 2), one entry per unit.
 *
 * A batch's text pastes each unit after `#define TL_UNIT(name) name##_KEY`, so its
 * function and statics get names of their own; the prelude every unit starts with is
 * guarded, so only its first paste is compiled. One cc invocation then costs about
 * half as much per kernel as one per kernel (the process starts, the prelude's
 * parsing, the assembler and the linker are paid once; docs/decisions.md).
 *
 * Disk entries stay one per unit, as for tl_compiler_get: <key>.so beside <key>.sum,
 * each .so a hard link to the batch's shared object (its own name, the same bytes),
 * published under the unit's lock. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "runtime/compiler_internal.h"

#define TCC_RELOCATE_AUTO ((void *)1)

char *tl_batch_source(tl_unit *const *units, int n) {
  tl_strbuf s = {0};
  for (int i = 0; i < n; i++) {
    tl_strbuf_printf(&s, "#undef TL_UNIT\n#define TL_UNIT(name) name##_%s\n#line 1 \"%s.c\"\n", units[i]->keyhex,
                     units[i]->keyhex);
    tl_strbuf_puts(&s, units[i]->source);
    tl_strbuf_puts(&s, "\n");
  }
  tl_strbuf_puts(&s, "#undef TL_UNIT\n");
  return tl_strbuf_take(&s);
}

/* dlsym gives void*; POSIX guarantees it converts to a function pointer */
static tl_kernel_fn as_fn(void *sym) {
  tl_kernel_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  return fn;
}

/* ---- tier 1: libtcc ---------------------------------------------------------------- */
/* keeps a state whose code may be running until tl_compiler_destroy */
static int keep_state(tl_compiler *c, void *s) {
  pthread_mutex_lock(&c->mu);
  int ok = tl_vec_push(&c->tcc_states, s);
  pthread_mutex_unlock(&c->mu);
  return ok;
}

tl_status tl_batch_build_tcc(tl_compiler *c, tl_unit **units, int n, tl_error *err) {
  char *text = tl_batch_source(units, n);
  tl_kernel_fn *fns = calloc((size_t)n, sizeof *fns);
  if (!text || !fns) {
    free(text), free(fns);
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory compiling kernels");
  }
  tcc_api *t = &c->tcc;
  tl_status st = TL_OK;
  pthread_mutex_lock(&tl_tcc_mutex);
  void *s = tl_compiler_tcc_state(c);
  if (!s)
    st = tl_error_set(err, TL_ERR_NOMEM, "libtcc: out of memory");
  else if (t->compile_string(s, text) < 0 || t->relocate(s, TCC_RELOCATE_AUTO) < 0)
    st = tl_error_set(err, TL_ERR_COMPILER, "kernel compilation failed (tcc): %s", c->log);
  for (int i = 0; !st && i < n; i++) {
    void *sym = t->get_symbol(s, units[i]->symbol);
    if (!sym) st = tl_error_set(err, TL_ERR_COMPILER, "kernel source does not define function '%s'", units[i]->fn_name);
    else fns[i] = as_fn(sym);
  }
  if (s && (st || !keep_state(c, s))) {
    if (!st) st = tl_error_set(err, TL_ERR_NOMEM, "out of memory compiling kernels");
    t->delete_state(s);
  }
  pthread_mutex_unlock(&tl_tcc_mutex);
  free(text);
  if (!st) {
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < n; i++) {
      atomic_store_explicit(&units[i]->code.tier, 1, memory_order_relaxed);
      atomic_store_explicit(&units[i]->code.fn, fns[i], memory_order_release);
    }
    c->stats.compiled += (uint64_t)n;
    c->stats.tier1 += (uint64_t)n;
    pthread_mutex_unlock(&c->mu);
  }
  free(fns);
  return st;
}

/* ---- tier 2: cc ---------------------------------------------------------------------- */
/* the paths of one unit's entry in dir */
typedef struct {
  char *base, *so, *sum, *lock;
  int lock_fd;
  void *handle;
  tl_kernel_fn fn;
  int have; /* its code is loaded (built here or found on disk) */
  int built; /* built by this batch */
} unit_paths;

static void free_paths(unit_paths *p, int n) {
  for (int i = 0; p && i < n; i++) {
    tl_entry_drop_lock(p[i].lock_fd);
    if (p[i].handle) dlclose(p[i].handle);
    free(p[i].base), free(p[i].so), free(p[i].sum), free(p[i].lock);
  }
  free(p);
}

static unit_paths *make_paths(const char *dir, tl_unit **units, int n) {
  unit_paths *p = calloc((size_t)n, sizeof *p);
  for (int i = 0; p && i < n; i++) {
    p[i].lock_fd = -1;
    p[i].base = tl_compiler_fmt("%s/%s", dir, units[i]->keyhex);
    p[i].so = p[i].base ? tl_compiler_fmt("%s.so", p[i].base) : NULL;
    p[i].sum = p[i].base ? tl_compiler_fmt("%s.sum", p[i].base) : NULL;
    p[i].lock = p[i].base ? tl_compiler_fmt("%s.lock", p[i].base) : NULL;
    if (!p[i].so || !p[i].sum || !p[i].lock) {
      free_paths(p, i + 1);
      return NULL;
    }
  }
  return p;
}

/* units in the order of their keys: locks are taken in that order, so two
 * processes building overlapping batches never wait on each other in a circle */
static int by_key(const void *a, const void *b) {
  return strcmp((*(tl_unit *const *)a)->keyhex, (*(tl_unit *const *)b)->keyhex);
}

/* the copy `to` of the batch's shared object: a hard link, else a copy of its bytes */
static int link_or_copy(const char *from, const char *to) {
  if (link(from, to) == 0) return 0;
  int in = open(from, O_RDONLY | O_CLOEXEC);
  if (in < 0) return -1;
  struct stat st;
  char *data = NULL;
  size_t got = 0;
  ssize_t k = 1;
  if (fstat(in, &st) == 0 && (data = malloc((size_t)st.st_size + 1)))
    while (got < (size_t)st.st_size && (k = read(in, data + got, (size_t)st.st_size - got)) > 0) got += (size_t)k;
  close(in);
  int rc = data && got == (size_t)st.st_size ? tl_entry_write_new_file(to, data, got, 0700) : -1;
  free(data);
  return rc;
}

/* Stores the batch's object as each built unit's entry: the .sum first, then the .so
 * under its own temporary name, renamed into place (as publish_entry does). Under the
 * unit's lock; where another process stored the entry meanwhile, theirs stays. */
static void publish_units(tl_compiler *c, const char *tmp_so, unit_paths *p, int n, build_mode mode) {
  uint64_t sum = 0, size = 0;
  if (tl_entry_checksum_file(tmp_so, &sum, &size) != 0) return; /* runs; not kept */
  for (int i = 0; i < n; i++) {
    if (!p[i].built) continue;
    if (mode != BUILD_NOW) p[i].lock_fd = tl_entry_take_lock(p[i].lock);
    int stored = mode != BUILD_NOW && tl_compiler_check_entry(c, p[i].so, p[i].sum) == 1;
    char *tsum = tl_compiler_fmt("%s.%ld.%u.sum.tmp", p[i].base, (long)getpid(), tl_compiler_tmp_seq());
    char *tso = tl_compiler_fmt("%s.%ld.%u.so.tmp", p[i].base, (long)getpid(), tl_compiler_tmp_seq());
    if (!stored && tsum && tso && tl_entry_write_sum(tsum, p[i].sum, p[i].so, size, sum) == 0 &&
        link_or_copy(tmp_so, tso) == 0 && rename(tso, p[i].so) != 0)
      unlink(tso);
    free(tsum), free(tso);
    if (mode != BUILD_NOW) {
      tl_entry_drop_lock(p[i].lock_fd);
      p[i].lock_fd = -1;
    }
  }
}

/* runs cc on the batch's text; 0 and the object at tmp.so, else an error (cc_failed
 * set when cc ran and failed). A background builder's cc is recorded in inflight so
 * that tl_compiler_destroy can stop it; it is reaped only after that record is
 * cleared, so the process group killed is never another's. */
static tl_status run_cc(tl_compiler *c, const char *tmp, const char *text, int builder, build_mode mode,
                        int *cc_failed, tl_error *err) {
  char *src = tl_compiler_fmt("%s.c", tmp), *so = tl_compiler_fmt("%s.so", tmp), *errp = tl_compiler_fmt("%s.err", tmp);
  tl_status st = TL_OK;
  pid_t pid = 0;
  int rc, wstatus = 0;
  *cc_failed = 0;
  if (!src || !so || !errp)
    st = tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  else if (tl_entry_write_new_file(src, text, strlen(text), 0600) != 0)
    st = tl_error_set(err, TL_ERR_CACHE, "cannot write kernel source '%s': %s", src, strerror(errno));
  else if ((rc = tl_compiler_spawn_cc(c, src, so, errp, &pid)) != 0)
    st = tl_error_set(err, TL_ERR_COMPILER, "cannot run C compiler '%s': %s", c->cc_path, strerror(rc));
  if (!st) {
    if (mode == BUILD_BACKGROUND) {
      pthread_mutex_lock(&c->mu);
      c->inflight[builder] = pid;
      if (c->stopping) kill(-pid, SIGKILL); /* destroy came before the record: it waits for none */
      pthread_mutex_unlock(&c->mu);
      siginfo_t info;
      while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) continue;
      pthread_mutex_lock(&c->mu);
      c->inflight[builder] = 0;
      pthread_mutex_unlock(&c->mu);
    }
    tl_compiler_wait_child(pid, &wstatus);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
      *cc_failed = 1, st = tl_compiler_cc_failed(c, wstatus, src, errp, err);
  }
  if (src) unlink(src);
  if (errp) unlink(errp);
  if (st && so) unlink(so);
  free(src), free(so), free(errp);
  return st;
}

/* loads each built unit's function from the batch's object (a reference each) */
static tl_status load_units(const char *tmp_so, tl_unit **units, unit_paths *p, int n, tl_error *err) {
  for (int i = 0; i < n; i++) {
    if (!p[i].built) continue;
    p[i].handle = dlopen(tmp_so, RTLD_NOW | RTLD_LOCAL);
    void *sym = p[i].handle ? dlsym(p[i].handle, units[i]->symbol) : NULL;
    if (!p[i].handle)
      return tl_error_set(err, TL_ERR_COMPILER, "cannot load compiled kernels '%s': %s", tmp_so, dlerror());
    if (!sym)
      return tl_error_set(err, TL_ERR_COMPILER, "kernel source does not define function '%s'", units[i]->fn_name);
    p[i].fn = as_fn(sym);
  }
  return TL_OK;
}

/* what a batch found or built becomes each unit's code (tier 2) */
static void install(tl_compiler *c, tl_unit **units, unit_paths *p, int n, build_mode mode, int nbuilt,
                    int ndisk) {
  pthread_mutex_lock(&c->mu);
  for (int i = 0; i < n; i++) {
    if (!p[i].have) continue;
    tl_unit *u = units[i];
    u->handle = p[i].handle;
    p[i].handle = NULL;
    if (mode == BUILD_BACKGROUND && atomic_load_explicit(&u->code.fn, memory_order_relaxed)) c->stats.swaps++;
    atomic_store_explicit(&u->code.tier, 2, memory_order_relaxed);
    atomic_store_explicit(&u->code.fn, p[i].fn, memory_order_release); /* the swap */
  }
  if (mode == BUILD_NOW) c->stats.compiled += (uint64_t)nbuilt;
  c->stats.tier2 += (uint64_t)nbuilt;
  c->stats.disk_hits += (uint64_t)ndisk;
  c->stats.batches += nbuilt > 0;
  pthread_mutex_unlock(&c->mu);
}

typedef struct {
  tl_unit **units;
  int n, builder;
  build_mode mode;
} batch_args;

static tl_status batch_in_dir(tl_compiler *c, const char *dir, void *arg, tl_error *err) {
  batch_args *a = arg;
  int n = a->n, nbuilt = 0, ndisk = 0, cc_failed = 0;
  tl_unit **units = a->units;
  qsort(units, (size_t)n, sizeof *units, by_key);
  unit_paths *p = make_paths(dir, units, n);
  if (!p) return tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  int load = a->mode != BUILD_DETACHED;
  for (int i = 0; i < n; i++) { /* built meanwhile, by another process? */
    if (a->mode == BUILD_NOW) p[i].lock_fd = tl_entry_take_lock(p[i].lock);
    if (load && tl_compiler_disk_load(c, p[i].so, p[i].sum, units[i]->symbol, &p[i].handle, &p[i].fn,
                                      a->mode == BUILD_NOW) == 1)
      p[i].have = 1, ndisk++;
    else
      p[i].built = 1, nbuilt++;
  }
  tl_unit **todo = nbuilt ? malloc((size_t)nbuilt * sizeof *todo) : NULL;
  char *tmp = nbuilt ? tl_compiler_fmt("%s/%s.batch.%ld.%u", dir, units[0]->keyhex, (long)getpid(), tl_compiler_tmp_seq()) : NULL;
  char *tmp_so = tmp ? tl_compiler_fmt("%s.so", tmp) : NULL;
  tl_status st = nbuilt && (!todo || !tmp_so) ? tl_error_set(err, TL_ERR_NOMEM, "out of memory") : TL_OK;
  char *text = NULL;
  if (!st && nbuilt) {
    for (int i = 0, k = 0; i < n; i++)
      if (p[i].built) todo[k++] = units[i];
    text = tl_batch_source(todo, nbuilt);
    st = text ? run_cc(c, tmp, text, a->builder, a->mode, &cc_failed, err)
              : tl_error_set(err, TL_ERR_NOMEM, "out of memory");
    if (!st && load) st = load_units(tmp_so, units, p, n, err);
    if (!st) publish_units(c, tmp_so, p, n, a->mode);
    if (tmp_so) unlink(tmp_so); /* the entries are links of their own */
    for (int i = 0; !st && i < n; i++) p[i].have |= p[i].built && load;
  }
  if (a->mode == BUILD_NOW) c->cc_failed = cc_failed;
  if (!st && load) install(c, units, p, n, a->mode, nbuilt, ndisk);
  free(text), free(todo), free(tmp), free(tmp_so);
  free_paths(p, n);
  return st;
}

tl_status tl_batch_build_cc(tl_compiler *c, tl_unit **units, int n, build_mode mode, int builder,
                            tl_error *err) {
  batch_args a = {units, n, builder, mode};
  if (mode == BUILD_NOW) return tl_compiler_with_fallback(c, batch_in_dir, &a, err);
  char *dir = tl_compiler_entry_dir(c);
  tl_status st = dir ? batch_in_dir(c, dir, &a, err) : tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  free(dir);
  return st;
}
