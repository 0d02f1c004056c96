/* compiler.c — kernel source to function pointer: memory cache, disk cache, compiler.
 * The disk cache's files (private directory, checked entries, locks) are
 * runtime/disk_entry.c's, shared with the OpenCL driver's program binaries. */
#include "runtime/compiler.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/hash.h"
#include "runtime/compiler_internal.h"
#include "runtime/disk_entry.h"
#include "runtime/gemm_host.h"
#include "runtime/scalar_host.h"

/* Strict IEEE semantics on purpose: with -fno-trapping-math (and so with
 * -fassociative-math) GCC 12's loop if-conversion miscompiled masked loads in
 * generated kernels (found by the differential test, seeds 220 and 1305; see
 * docs/decisions.md). Reductions vectorize through `#pragma omp simd reduction`
 * (-fopenmp-simd), and the prelude writes its selects as bit blends. On an AVX-512 CPU
 * -march=native defines __AVX512F__ and the GEMM takes its 512-bit micro-tile; GCC's
 * tuning keeps the loops it vectorizes itself at 256 bits. */
#define DEFAULT_OPT_FLAGS "-O3 -march=native -fno-math-errno -fopenmp-simd -fwrapv"
/* always added: the output must be a loadable shared object */
#define REQUIRED_FLAGS "-fPIC -shared"
#define MAX_DIAG_LINES 20
#define TCC_OUTPUT_MEMORY 1
#define TCC_RELOCATE_AUTO ((void *)1)

/* ---- small helpers ------------------------------------------------------------ */
static char *vstrfmt(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  char *s = n < 0 ? NULL : malloc((size_t)n + 1);
  if (s) vsnprintf(s, (size_t)n + 1, fmt, again);
  va_end(again);
  return s;
}

char *tl_compiler_fmt(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = vstrfmt(fmt, ap);
  va_end(ap);
  return s;
}
#define strfmt tl_compiler_fmt

void tl_compiler_count(tl_compiler *c, uint64_t *field, uint64_t n) {
  pthread_mutex_lock(&c->mu);
  *field += n;
  pthread_mutex_unlock(&c->mu);
}

static const char *env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

int tl_compiler_is_identifier(const char *s) {
  if (!*s || strlen(s) > 255 || (*s >= '0' && *s <= '9')) return 0;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
          (*s >= '0' && *s <= '9')))
      return 0;
  return 1;
}

/* dlsym gives void*; POSIX guarantees it converts to a function pointer */
static tl_kernel_fn as_kernel(void *sym) {
  tl_kernel_fn fn;
  memcpy(&fn, &sym, sizeof fn);
  return fn;
}

/* makes temporary file names unique within the process (threads included) */
static atomic_uint tmp_seq;

unsigned tl_compiler_tmp_seq(void) { return atomic_fetch_add(&tmp_seq, 1); }

/* ---- the compiler object: compiler_internal.h ------------------------------------ */
pthread_mutex_t tl_tcc_mutex = PTHREAD_MUTEX_INITIALIZER;

/* ---- memory cache: entries found by name and key, never shrinks ------------------- */
static mem_entry *map_find(tl_compiler *c, const uint64_t key[2], const char *fn_name) {
  uint64_t it;
  for (tl_hset_walk w = tl_hset_find(&c->map, tl_kernel_name_hash(key, fn_name)); (it = tl_hset_next(&c->map, &w));) {
    mem_entry *e = &c->entries.data[it - 1];
    if (e->key[0] == key[0] && e->key[1] == key[1] && !strcmp(e->fn_name, fn_name)) return e;
  }
  return NULL;
}

static tl_status map_insert(tl_compiler *c, const uint64_t key[2], const char *fn_name,
                            void *handle, tl_kernel_fn fn, tl_error *err) {
  char *name = strdup(fn_name);
  if (!name || !tl_vec_reserve(&c->entries, c->entries.len + 1) ||
      !tl_hset_add(&c->map, tl_kernel_name_hash(key, fn_name), c->entries.len + 1)) {
    free(name);
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory in the kernel cache");
  }
  c->entries.data[c->entries.len++] = (mem_entry){{key[0], key[1]}, name, handle, fn};
  return TL_OK;
}

static void release_handle(tl_compiler *c, void *handle) {
  if (!handle) return;
  if (c->kind == TL_COMPILER_TCC) {
    pthread_mutex_lock(&tl_tcc_mutex);
    c->tcc.delete_state(handle);
    pthread_mutex_unlock(&tl_tcc_mutex);
  } else {
    dlclose(handle);
  }
}

/* ---- finding the compiler ------------------------------------------------------ */
static int is_executable_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* like execvp's search: a name with a slash is used as is, else each PATH entry */
static char *find_program(const char *name) {
  if (strchr(name, '/')) return is_executable_file(name) ? strdup(name) : NULL;
  const char *path = getenv("PATH");
  if (!path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path;; p++) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char *cand = len ? strfmt("%.*s/%s", (int)len, p, name) : strfmt("./%s", name);
    if (cand && is_executable_file(cand)) return cand;
    free(cand);
    if (!end) return NULL;
    p = end;
  }
}

/* The first "flags"/"Features" line of /proc/cpuinfo: -march=native code built on
 * one CPU must not be loaded from a shared home directory on an older one. */
static void hash_cpu_features(tl_hash128 *h) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[8192];
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8)) {
      tl_hash128_str(h, line);
      break;
    }
  }
  fclose(f);
}

/* The identity of the compiler without running it: its resolved path and the
 * binary's inode, size and mtime change whenever it is upgraded. */
static void make_ident(tl_compiler *c) {
  struct stat st;
  char *real = realpath(c->cc_path, NULL);
  if (stat(c->cc_path, &st) != 0) memset(&st, 0, sizeof st);
  tl_hash128 h;
  tl_hash128_init(&h);
  tl_hash128_str(&h, "tl-kernel-2");
  tl_hash128_str(&h, c->cc_path);
  tl_hash128_str(&h, real ? real : "");
  tl_hash128_str(&h, c->flags);
  uint64_t id[5] = {(uint64_t)st.st_ino, (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec,
                    (uint64_t)st.st_mtim.tv_nsec, (uint64_t)st.st_dev};
  tl_hash128_bytes(&h, id, sizeof id);
  if (strstr(c->flags, "native")) hash_cpu_features(&h);
  tl_hash128_final(&h, c->ident);
  free(real);
}

/* flags string -> argv: [cc, flag tokens..., -o, OUT, SRC, NULL] */
static tl_status make_argv(tl_compiler *c, const char *opt_flags, tl_error *err) {
  c->flags = strfmt("%s %s", opt_flags, REQUIRED_FLAGS);
  char *copy = c->flags ? strdup(c->flags) : NULL;
  size_t ntok = 0;
  for (const char *p = c->flags ? c->flags : ""; *p; p++)
    if (*p != ' ' && *p != '\t' && (p == c->flags || p[-1] == ' ' || p[-1] == '\t')) ntok++;
  c->argv = copy ? calloc(ntok + 5, sizeof *c->argv) : NULL;
  if (!c->argv) {
    free(copy);
    return tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  }
  /* argv[1..] point into one buffer, owned through argv[1] (or freed if empty) */
  c->argv[0] = c->cc_path;
  int n = 1;
  char *save = NULL;
  for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
    c->argv[n++] = t;
  if (n == 1) free(copy);
  c->argc_base = n;
  return TL_OK;
}

static tl_status setup_cc(tl_compiler *c, const char *flags, tl_error *err) {
  c->cc_path = find_program(c->cc_name);
  if (!c->cc_path)
    return tl_error_set(err, TL_ERR_COMPILER, "C compiler '%s' not found (set TL_CC)", c->cc_name);
  if (!flags) flags = env_nonempty("TL_CFLAGS");
  if (!flags) flags = DEFAULT_OPT_FLAGS;
  tl_status st = make_argv(c, flags, err);
  if (!st) make_ident(c);
  return st;
}

/* ---- the cache directory ---------------------------------------------------------- */
/* Is dir usable as the shared cache (ours, private, writable)? TL_OK, else
 * TL_ERR_CACHE with the reason in err; a wrong mode of our own directory is
 * repaired (counted in stats.dir_repairs) rather than refused. */
static tl_status check_private_dir(tl_compiler *c, const char *dir, tl_error *err) {
  int repaired = 0;
  tl_status st = tl_entry_check_private_dir(dir, "kernel cache directory", &repaired, err);
  c->stats.dir_repairs += (uint64_t)repaired;
  return st;
}

/* Process-wide: the note that the shared cache is not used is printed once. */
static atomic_flag said_fallback = ATOMIC_FLAG_INIT;

void tl_compiler_reset_notice(void) { atomic_flag_clear(&said_fallback); }

/* A private temporary directory for this compiler's kernels (removed by destroy),
 * used when the shared cache cannot be: kernels are still compiled, only not kept. */
static tl_status open_fallback(tl_compiler *c, tl_error *err) {
  if (c->fallback_dir) return TL_OK;
  const char *tmp = env_nonempty("TMPDIR");
  char *tmpl = strfmt("%s/tl-kernels-XXXXXX", tmp ? tmp : "/tmp");
  if (!tmpl) return tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  if (!mkdtemp(tmpl)) {
    int e = errno;
    free(tmpl);
    return tl_error_set(err, TL_ERR_CACHE, "no private temporary directory for kernels: %s", strerror(e));
  }
  pthread_mutex_lock(&c->mu); /* background builders read it */
  c->fallback_dir = tmpl;
  pthread_mutex_unlock(&c->mu);
  return TL_OK;
}

/* says once per process why the shared cache is not used */
static void announce_fallback(tl_compiler *c, const char *why) {
  pthread_mutex_lock(&c->mu);
  c->stats.fallback = 1;
  pthread_mutex_unlock(&c->mu);
  if (!atomic_flag_test_and_set(&said_fallback))
    fprintf(stderr, "tl: %s: compiling kernels in a private temporary directory instead (not kept)\n", why);
}

/* where entries go now: the shared cache, or the private fallback */
static const char *entry_dir(const tl_compiler *c) { return c->fallback_dir ? c->fallback_dir : c->cache_dir; }

/* the same, for any thread: a copy taken under mu (NULL when out of memory) */
char *tl_compiler_entry_dir(tl_compiler *c) {
  pthread_mutex_lock(&c->mu);
  char *dir = strdup(entry_dir(c));
  pthread_mutex_unlock(&c->mu);
  return dir;
}

/* ---- disk entries: <key>.so beside <key>.sum ("tl-sum SIZE CHECKSUM KEY") ---------- */
static int open_private(const char *path, struct stat *st) {
  tl_entry_state why;
  return tl_entry_open_checked(path, st, &why);
}

static void count_reject(tl_compiler *c, tl_entry_state why) {
  pthread_mutex_lock(&c->mu);
  c->stats.disk_rejects++;
  switch (why) {
  case TL_ENTRY_LINK: c->stats.rejects_link++; break;
  case TL_ENTRY_FOREIGN: c->stats.rejects_foreign++; break;
  case TL_ENTRY_SIZE: c->stats.rejects_size++; break;
  case TL_ENTRY_SUM: c->stats.rejects_sum++; break;
  default: c->stats.rejects_load++; break;
  }
  pthread_mutex_unlock(&c->mu);
}

/* dlopen + dlsym: 1 and the handle, or 0 (nothing kept) */
static int load_so(const char *so, const char *fn_name, void **handle, tl_kernel_fn *fn) {
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  void *sym = h ? dlsym(h, fn_name) : NULL;
  if (sym) {
    *handle = h;
    *fn = as_kernel(sym);
    return 1;
  }
  if (h) dlclose(h);
  return 0;
}

/* Loads a verified .so. A compiler with private_loads copies it first (to a file
 * of its own, unlinked at once): dlopen shares one instance per file, and a TL
 * program's globals must not be shared by two runs at once (docs/decisions.md). */
static int load_private(tl_compiler *c, const char *so, const char *fn_name, void **handle,
                        tl_kernel_fn *fn) {
  if (!c->private_loads) return load_so(so, fn_name, handle, fn);
  struct stat st;
  int in = open_private(so, &st);
  if (in < 0) return 0;
  char *copy = strfmt("%s/priv.%ld.%u.so", entry_dir(c), (long)getpid(), atomic_fetch_add(&tmp_seq, 1));
  int out = copy ? open(copy, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700) : -1;
  char buf[1 << 14];
  ssize_t n = 0;
  int ok = out >= 0;
  while (ok && (n = read(in, buf, sizeof buf)) > 0) ok = tl_entry_write_all(out, buf, (size_t)n) == 0;
  ok = ok && n == 0;
  if (out >= 0 && close(out) != 0) ok = 0;
  close(in);
  ok = ok && load_so(copy, fn_name, handle, fn);
  if (out >= 0) unlink(copy);
  free(copy);
  return ok;
}

/* 1: loaded; 0: no entry; -1: a bad entry. Only under the kernel's lock is a bad
 * entry removed and counted: unlocked, it may be a build halfway through its renames,
 * so the caller takes the lock and looks again. */
int tl_compiler_disk_load(tl_compiler *c, const char *so, const char *sum, const char *fn_name,
                          void **handle, tl_kernel_fn *fn, int locked) {
  tl_entry_state why = tl_entry_verify(so, sum);
  if (why == TL_ENTRY_MISSING) return 0;
  if (why == TL_ENTRY_OK && load_private(c, so, fn_name, handle, fn)) return 1;
  if (!locked) return -1;
  if (why == TL_ENTRY_OK) why = TL_ENTRY_LOAD;
  unlink(so);
  unlink(sum);
  count_reject(c, why);
  return -1;
}

/* Under the entry's lock: 1 when a whole entry is there, 0 when none, -1 when a bad
 * one was (removed and counted). Checks without loading (a detached builder loads
 * nothing). */
int tl_compiler_check_entry(tl_compiler *c, const char *so, const char *sum) {
  tl_entry_state why = tl_entry_verify(so, sum);
  if (why == TL_ENTRY_OK || why == TL_ENTRY_MISSING) return why == TL_ENTRY_OK;
  unlink(so);
  unlink(sum);
  count_reject(c, why);
  return -1;
}

static tl_status publish_entry(const char *tmp_so, const char *tmp_sum, const char *so,
                               const char *sum, const char *fn_name, void **handle,
                               tl_kernel_fn *fn, tl_error *err) {
  uint64_t s = 0, z = 0;
  if (tl_entry_checksum_file(tmp_so, &s, &z) != 0)
    return tl_error_set(err, TL_ERR_CACHE, "cannot read compiled kernel '%s': %s", tmp_so, strerror(errno));
  void *h = dlopen(tmp_so, RTLD_NOW | RTLD_LOCAL);
  void *sym = h ? dlsym(h, fn_name) : NULL;
  if (!h)
    return tl_error_set(err, TL_ERR_COMPILER, "cannot load compiled kernel '%s': %s", so, dlerror());
  if (!sym) {
    dlclose(h);
    return tl_error_set(err, TL_ERR_COMPILER, "kernel source does not define function '%s'", fn_name);
  }
  *handle = h;
  *fn = as_kernel(sym);
  /* the .sum first: a reader that sees the new .so sees its .sum */
  if (tl_entry_write_sum(tmp_sum, sum, so, z, s) == 0 && rename(tmp_so, so) == 0) return TL_OK;
  unlink(tmp_so);
  return TL_OK;
}

/* ---- running the system compiler --------------------------------------------------- */
/* The first MAX_DIAG_LINES lines of the compiler's output, for the error message,
 * with the long temporary source path shortened to "kernel.c". */
static void read_diagnostics(const char *path, const char *src, char *out, size_t cap) {
  char raw[4096];
  out[0] = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, raw, sizeof raw - 1);
  close(fd);
  raw[n > 0 ? n : 0] = 0;
  size_t len = 0, srclen = strlen(src);
  int lines = 0;
  for (const char *p = raw; *p && len + 1 < cap && lines < MAX_DIAG_LINES;) {
    if (!strncmp(p, src, srclen)) {
      len += (size_t)snprintf(out + len, cap - len, "%s", "kernel.c");
      len = len < cap ? len : cap - 1;
      p += srclen;
      continue;
    }
    lines += *p == '\n';
    out[len++] = *p++;
  }
  while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' ')) len--;
  out[len] = 0;
}

/* posix_spawn, no shell: `cc FLAGS -o out src`, stdout and stderr to errpath, in a
 * process group of its own (a builder stopped at exit kills the group: cc and what it
 * ran). 0 or a spawn errno. */
int tl_compiler_spawn_cc(tl_compiler *c, const char *src, const char *out, const char *errpath, pid_t *pid) {
  char **argv = calloc((size_t)c->argc_base + 4, sizeof *argv); /* per call: builders run at once */
  if (!argv) return ENOMEM;
  memcpy(argv, c->argv, (size_t)c->argc_base * sizeof *argv);
  argv[c->argc_base] = "-o";
  argv[c->argc_base + 1] = (char *)out;
  argv[c->argc_base + 2] = (char *)src;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  int rc = posix_spawn_file_actions_init(&fa);
  if (rc == 0 && (rc = posix_spawnattr_init(&attr)) != 0) posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    free(argv);
    return rc;
  }
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  rc = posix_spawn(pid, c->cc_path, &fa, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  free(argv);
  return rc;
}

int tl_compiler_wait_child(pid_t pid, int *wstatus) {
  while (waitpid(pid, wstatus, 0) < 0)
    if (errno != EINTR) return errno;
  return 0;
}

/* tcc, the command or libtcc, finds its own headers (stddef.h, stdarg.h...) only where
 * the Debian package tcc puts them; libtcc-dev alone has the library without them. What
 * to install, after a log that says "include file '...' not found" (tcc's words); "" */
static const char *tcc_header_advice(const char *log) {
  const char *inc = strstr(log, "include file '");
  if (!inc || !strstr(inc, "' not found")) return "";
  return "\n  tcc cannot find its header files: install the tcc package (Debian: apt-get install tcc; "
         "libtcc-dev has the in-memory compiler but not the headers), or unset TL_CC to use cc";
}

/* how much of a compiler's log fits in err's message with the advice after it */
static int room_for(const tl_error *err, const char *advice) {
  return (int)(sizeof err->msg - 64 - strlen(advice));
}

static tl_status compile_failed(tl_compiler *c, int wstatus, const char *src, const char *errpath,
                                tl_error *err) {
  char diag[900];
  read_diagnostics(errpath, src, diag, sizeof diag);
  const char *base = strrchr(c->cc_name, '/') ? strrchr(c->cc_name, '/') + 1 : c->cc_name;
  if (WIFSIGNALED(wstatus))
    return tl_error_set(err, TL_ERR_COMPILER, "kernel compilation failed (%s killed by signal %d): %s",
                        base, WTERMSIG(wstatus), diag);
  const char *advice = tcc_header_advice(diag);
  return tl_error_set(err, TL_ERR_COMPILER, "kernel compilation failed (%s exit %d): %.*s%s", base,
                      WEXITSTATUS(wstatus), room_for(err, advice), diag, advice);
}

/* for compile_batch.c */
tl_status tl_compiler_cc_failed(tl_compiler *c, int wstatus, const char *src, const char *errpath, tl_error *err) {
  return compile_failed(c, wstatus, src, errpath, err);
}

static int spawn_cc(tl_compiler *c, const char *src, const char *out, const char *errpath, int *wstatus) {
  pid_t pid;
  int rc = tl_compiler_spawn_cc(c, src, out, errpath, &pid);
  return rc ? rc : tl_compiler_wait_child(pid, wstatus);
}

/* source -> private tmp .c -> cc -> private tmp .so, loaded, then renamed into place */
static tl_status cc_build(tl_compiler *c, const char *source, const char *base, const char *fn_name,
                          void **handle, tl_kernel_fn *fn, tl_error *err) {
  char *tmp = strfmt("%s.%ld.%u", base, (long)getpid(), atomic_fetch_add(&tmp_seq, 1));
  char *src = tmp ? strfmt("%s.c", tmp) : NULL, *errp = tmp ? strfmt("%s.err", tmp) : NULL;
  char *tso = tmp ? strfmt("%s.so.tmp", tmp) : NULL, *tsum = tmp ? strfmt("%s.sum.tmp", tmp) : NULL;
  char *so = strfmt("%s.so", base), *sum = strfmt("%s.sum", base);
  tl_status st = TL_OK;
  int wstatus = 0, rc;
  c->cc_failed = 0;
  if (!src || !errp || !tso || !tsum || !so || !sum)
    st = tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  else if (tl_entry_write_new_file(src, source, strlen(source), 0600) != 0)
    st = tl_error_set(err, TL_ERR_CACHE, "cannot write kernel source '%s': %s", src, strerror(errno));
  else if ((rc = spawn_cc(c, src, tso, errp, &wstatus)) != 0)
    st = tl_error_set(err, TL_ERR_COMPILER, "cannot run C compiler '%s': %s", c->cc_path, strerror(rc));
  else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
    c->cc_failed = 1, st = compile_failed(c, wstatus, src, errp, err);
  else
    tl_compiler_count(c, &c->stats.compiled, 1), st = publish_entry(tso, tsum, so, sum, fn_name, handle, fn, err);
  if (src) unlink(src);
  if (errp) unlink(errp);
  if (st != TL_OK && tso) unlink(tso);
  free(tmp), free(src), free(errp), free(tso), free(tsum), free(so), free(sum);
  return st;
}

/* the entry of key in dir: loaded from disk, else built under the kernel's lock */
static tl_status cc_get_in(tl_compiler *c, const char *dir, const uint64_t key[2], const char *source,
                           const char *fn_name, void **handle, tl_kernel_fn *fn, tl_error *err) {
  char *base = strfmt("%s/%016llx%016llx", dir, (unsigned long long)key[0], (unsigned long long)key[1]);
  char *so = base ? strfmt("%s.so", base) : NULL, *sum = base ? strfmt("%s.sum", base) : NULL;
  char *lock = base ? strfmt("%s.lock", base) : NULL;
  tl_status st = TL_OK;
  if (!so || !sum || !lock) {
    st = tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  } else if (tl_compiler_disk_load(c, so, sum, fn_name, handle, fn, 0) == 1) {
    tl_compiler_count(c, &c->stats.disk_hits, 1);
  } else {
    int fd = tl_entry_take_lock(lock);
    /* whoever held the lock may have just built it; without the lock, a bad entry
     * is still removed (a build then may be compiled twice, never loaded wrong) */
    if (tl_compiler_disk_load(c, so, sum, fn_name, handle, fn, 1) == 1)
      tl_compiler_count(c, &c->stats.disk_hits, 1);
    else
      st = cc_build(c, source, base, fn_name, handle, fn, err);
    tl_entry_drop_lock(fd);
  }
  free(base), free(so), free(sum), free(lock);
  return st;
}

/* Can dir take a 64 KiB file? (after a failed compile: a full or read-only disk,
 * or a genuine compile error) */
static int dir_takes_writes(const char *dir) {
  char *probe = strfmt("%s/probe.%ld.%u", dir, (long)getpid(), atomic_fetch_add(&tmp_seq, 1));
  static const char zeros[1 << 16];
  int ok = probe && tl_entry_write_new_file(probe, zeros, sizeof zeros, 0600) == 0;
  if (ok) unlink(probe);
  free(probe);
  return ok;
}

/* empties and removes a private fallback directory */
static void remove_dir_entries(const char *dir) {
  tl_entry_purge(dir);
  char *lib = strfmt("%s/tcc-runtime/libtcc1.a", dir), *sub = strfmt("%s/tcc-runtime", dir);
  if (lib) unlink(lib);
  if (sub) rmdir(sub);
  free(lib), free(sub);
  rmdir(dir);
}

/* The shared cache first; when it fails for want of space or permission (at start
 * or now), the same build in a private temporary directory, used from then on. */
tl_status tl_compiler_with_fallback(tl_compiler *c, tl_dir_build build, void *arg, tl_error *err) {
  c->cc_failed = 0;
  tl_status st = build(c, entry_dir(c), arg, err);
  if (!st || c->fallback_dir || (st != TL_ERR_CACHE && !(st == TL_ERR_COMPILER && c->cc_failed)) ||
      (st == TL_ERR_COMPILER && dir_takes_writes(c->cache_dir)))
    return st;
  char why[sizeof err->msg + 64];
  snprintf(why, sizeof why, "the kernel cache '%s' cannot be used (%s)", c->cache_dir, err->msg);
  tl_error first = *err;
  if (open_fallback(c, err) != TL_OK) {
    *err = first;
    return st;
  }
  c->cc_failed = 0;
  tl_status st2 = build(c, c->fallback_dir, arg, err);
  if (st2 == TL_OK) {
    announce_fallback(c, why);
    return TL_OK;
  }
  pthread_mutex_lock(&c->mu);
  char *dir = c->fallback_dir;
  c->fallback_dir = NULL;
  pthread_mutex_unlock(&c->mu);
  remove_dir_entries(dir); /* failed there too: a genuine error, say the first */
  free(dir);
  *err = first;
  return st;
}

typedef struct {
  const uint64_t *key;
  const char *source, *fn_name;
  void **handle;
  tl_kernel_fn *fn;
} get_args;

static tl_status cc_get_dir(tl_compiler *c, const char *dir, void *arg, tl_error *err) {
  get_args *a = arg;
  return cc_get_in(c, dir, a->key, a->source, a->fn_name, a->handle, a->fn, err);
}

static tl_status cc_get(tl_compiler *c, const uint64_t key[2], const char *source,
                        const char *fn_name, void **handle, tl_kernel_fn *fn, tl_error *err) {
  get_args a = {key, source, fn_name, handle, fn};
  return tl_compiler_with_fallback(c, cc_get_dir, &a, err);
}

/* ---- libtcc -------------------------------------------------------------------------
 * Debian ships libtcc only as a static, non-PIC archive: it can be used when the
 * program links it (and exports it with -rdynamic), else a libtcc.so is needed. */
static const struct {
  const char *name;
  size_t offset;
} tcc_symbols[] = {
    {"tcc_new", offsetof(tcc_api, new_state)},
    {"tcc_delete", offsetof(tcc_api, delete_state)},
    {"tcc_set_output_type", offsetof(tcc_api, set_output_type)},
    {"tcc_compile_string", offsetof(tcc_api, compile_string)},
    {"tcc_relocate", offsetof(tcc_api, relocate)},
    {"tcc_get_symbol", offsetof(tcc_api, get_symbol)},
    {"tcc_set_error_func", offsetof(tcc_api, set_error_func)},
    {"tcc_set_lib_path", offsetof(tcc_api, set_lib_path)},
    {"tcc_add_library", offsetof(tcc_api, add_library)},
    {"tcc_add_symbol", offsetof(tcc_api, add_symbol)},
    {"tcc_set_options", offsetof(tcc_api, set_options)},
    {"tcc_define_symbol", offsetof(tcc_api, define_symbol)},
};

static tl_status tcc_load(tcc_api *api, tl_error *err) {
  static const char *const names[] = {"libtcc.so", "libtcc.so.1",
                                      "/usr/lib/x86_64-linux-gnu/libtcc.so"};
  void *from = RTLD_DEFAULT;
  if (!dlsym(RTLD_DEFAULT, "tcc_new")) {
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !api->lib; i++)
      api->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!api->lib)
      return tl_error_set(err, TL_ERR_COMPILER, "libtcc is not installed (apt-get install libtcc-dev; "
                                                "TL needs it as the shared library libtcc.so)");
    from = api->lib;
  }
  for (size_t i = 0; i < sizeof tcc_symbols / sizeof tcc_symbols[0]; i++) {
    void *sym = dlsym(from, tcc_symbols[i].name);
    if (!sym)
      return tl_error_set(err, TL_ERR_COMPILER, "libtcc lacks %s: unsupported version",
                          tcc_symbols[i].name);
    memcpy((char *)api + tcc_symbols[i].offset, &sym, sizeof sym);
  }
  return TL_OK;
}

/* tcc's runtime helpers for unsigned 64-bit <-> floating conversions, normally in
 * libtcc1.a (package tcc); supplied here when that archive is absent */
static float u64_to_f32(uint64_t v) { return (float)v; }
static double u64_to_f64(uint64_t v) { return (double)v; }
static long double u64_to_f80(uint64_t v) { return (long double)v; }
static uint64_t f32_to_u64(float v) { return (uint64_t)v; }
static uint64_t f64_to_u64(double v) { return (uint64_t)v; }
static uint64_t f80_to_u64(long double v) { return (uint64_t)v; }

static const struct {
  const char *name;
  const void *fn;
} tcc_helpers[] = {
    {"__floatundisf", (const void *)u64_to_f32}, {"__floatundidf", (const void *)u64_to_f64},
    {"__floatundixf", (const void *)u64_to_f80}, {"__fixunssfdi", (const void *)f32_to_u64},
    {"__fixunsdfdi", (const void *)f64_to_u64},  {"__fixunsxfdi", (const void *)f80_to_u64},
};

/* tcc insists on linking <dir>/libtcc1.a: use the system's, else an empty one of
 * ours in the private cache directory */
static tl_status tcc_runtime_dir(tl_compiler *c, tl_error *err) {
  static const char *const dirs[] = {"/usr/lib/x86_64-linux-gnu/tcc", "/usr/lib/tcc",
                                     "/usr/local/lib/tcc"};
  for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
    char *lib = strfmt("%s/libtcc1.a", dirs[i]);
    int found = lib && access(lib, R_OK) == 0;
    free(lib);
    if (found) return (c->tcc.runtime_dir = strdup(dirs[i])) ? TL_OK : TL_ERR_NOMEM;
  }
  c->tcc.stub_runtime = 1;
  c->tcc.runtime_dir = strfmt("%s/tcc-runtime", entry_dir(c));
  char *lib = c->tcc.runtime_dir ? strfmt("%s/libtcc1.a", c->tcc.runtime_dir) : NULL;
  char *tmp = lib ? strfmt("%s.%ld.tmp", lib, (long)getpid()) : NULL;
  tl_status st = tmp ? TL_OK : tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  if (!st && access(lib, R_OK) != 0) {
    static const char empty_archive[] = "!<arch>\n";
    if (mkdir(c->tcc.runtime_dir, 0700) != 0 && errno != EEXIST)
      st = tl_error_set(err, TL_ERR_CACHE, "cannot create '%s': %s", c->tcc.runtime_dir, strerror(errno));
    else if (tl_entry_write_new_file(tmp, empty_archive, 8, 0600) != 0 || rename(tmp, lib) != 0)
      st = tl_error_set(err, TL_ERR_CACHE, "cannot write '%s': %s", lib, strerror(errno));
    if (st) unlink(tmp);
  }
  free(lib);
  free(tmp);
  return st;
}

static void tcc_log(void *opaque, const char *msg) {
  tl_compiler *c = opaque;
  if (c->log_lines >= MAX_DIAG_LINES || c->log_len + 2 >= sizeof c->log) return;
  int n = snprintf(c->log + c->log_len, sizeof c->log - c->log_len, "%s%s",
                   c->log_len ? "\n" : "", msg);
  if (n > 0) c->log_len = c->log_len + (size_t)n < sizeof c->log ? c->log_len + (size_t)n : sizeof c->log - 1;
  c->log_lines++;
}

/* What kernel units call: the prelude's declarations (core/scalar.h, the GEMM's
 * buffers) and what tcc's code calls on its own. Given to each tier-1 state, which
 * then links nothing from disk (-nostdlib): looking up libm and libc's linker
 * scripts and libtcc1.a cost more than compiling a kernel. */
static void *sym_memset(void *d, int v, size_t n) { return memset(d, v, n); }
static void *sym_memcpy(void *d, const void *s, size_t n) { return memcpy(d, s, n); }
static void *sym_memmove(void *d, const void *s, size_t n) { return memmove(d, s, n); }
static void *sym_malloc(size_t n) { return malloc(n); }
static void sym_free(void *p) { free(p); }

static const struct {
  const char *name;
  const void *fn;
} unit_symbols[] = {
    {"expf", (const void *)expf},   {"logf", (const void *)logf},   {"sqrtf", (const void *)sqrtf},
    {"sinf", (const void *)sinf},   {"cosf", (const void *)cosf},   {"tanhf", (const void *)tanhf},
    {"powf", (const void *)powf},   {"fmodf", (const void *)fmodf}, {"fabsf", (const void *)fabsf},
    {"exp", (const void *)exp},     {"log", (const void *)log},     {"sqrt", (const void *)sqrt},
    {"sin", (const void *)sin},     {"cos", (const void *)cos},     {"tanh", (const void *)tanh},
    {"pow", (const void *)pow},     {"fmod", (const void *)fmod},   {"fabs", (const void *)fabs},
    {"erf", (const void *)erf},     {"erff", (const void *)erff},
    {"log1p", (const void *)log1p}, {"log1pf", (const void *)log1pf},
    {"expm1", (const void *)expm1}, {"expm1f", (const void *)expm1f},
    {"memset", (const void *)sym_memset}, {"memcpy", (const void *)sym_memcpy},
    {"memmove", (const void *)sym_memmove}, {"malloc", (const void *)sym_malloc},
    {"free", (const void *)sym_free},
};

void *tl_compiler_tcc_state(tl_compiler *c) {
  tcc_api *t = &c->tcc;
  void *s = t->new_state();
  if (!s) return NULL;
  c->log[0] = 0;
  c->log_len = 0;
  c->log_lines = 0;
  t->set_error_func(s, c, tcc_log);
  t->set_options(s, "-nostdlib");
  t->set_output_type(s, TCC_OUTPUT_MEMORY);
  for (size_t i = 0; i < sizeof tcc_helpers / sizeof tcc_helpers[0]; i++)
    t->add_symbol(s, tcc_helpers[i].name, tcc_helpers[i].fn);
  for (size_t i = 0; i < sizeof unit_symbols / sizeof unit_symbols[0]; i++)
    t->add_symbol(s, unit_symbols[i].name, unit_symbols[i].fn);
  t->define_symbol(s, "TL_GEMM_HOST", "1"); /* GEMM kernels call the library's routine */
  const void *gemm[TL_GEMM_HOST_FNS];
  tl_gemm_host_pick(gemm);
  t->add_symbol(s, "tl_gemm_host_f32", gemm[0]);
  t->add_symbol(s, "tl_gemm_host_f64", gemm[1]);
  t->add_symbol(s, "tl_conv_host_f32", gemm[2]); /* and convolution kernels its convolution */
  t->add_symbol(s, "tl_conv_host_f64", gemm[3]);
  t->define_symbol(s, "TL_SCALAR_HOST", "1"); /* and its builds of the costly scalar functions */
  size_t nhost;
  const tl_scalar_host_fn *host = tl_scalar_host_fns(&nhost);
  for (size_t i = 0; i < nhost; i++) t->add_symbol(s, host[i].name, host[i].fn);
  return s;
}

/* one source, in memory; libtcc keeps global state: hold tl_tcc_mutex */
static tl_status tcc_build_locked(tl_compiler *c, const char *source, const char *fn_name,
                                  void **handle, tl_kernel_fn *fn, tl_error *err) {
  tcc_api *t = &c->tcc;
  void *s = t->new_state();
  if (!s) return tl_error_set(err, TL_ERR_NOMEM, "libtcc: out of memory");
  c->log[0] = 0;
  c->log_len = 0;
  c->log_lines = 0;
  t->set_error_func(s, c, tcc_log);
  t->set_lib_path(s, t->runtime_dir);
  t->set_output_type(s, TCC_OUTPUT_MEMORY);
  for (size_t i = 0; t->stub_runtime && i < sizeof tcc_helpers / sizeof tcc_helpers[0]; i++)
    t->add_symbol(s, tcc_helpers[i].name, tcc_helpers[i].fn);
  void *sym = NULL;
  if (t->compile_string(s, source) < 0 || t->add_library(s, "m") < 0 ||
      t->relocate(s, TCC_RELOCATE_AUTO) < 0) {
    const char *advice = tcc_header_advice(c->log);
    tl_error_set(err, TL_ERR_COMPILER, "kernel compilation failed (tcc): %.*s%s", room_for(err, advice), c->log, advice);
  } else if (!(sym = t->get_symbol(s, fn_name))) {
    tl_error_set(err, TL_ERR_COMPILER, "kernel source does not define function '%s'", fn_name);
  }
  if (!sym) {
    t->delete_state(s);
    return TL_ERR_COMPILER;
  }
  tl_compiler_count(c, &c->stats.compiled, 1);
  *handle = s;
  *fn = as_kernel(sym);
  return TL_OK;
}

static tl_status tcc_build(tl_compiler *c, const char *source, const char *fn_name,
                           void **handle, tl_kernel_fn *fn, tl_error *err) {
  pthread_mutex_lock(&tl_tcc_mutex);
  tl_status st = tcc_build_locked(c, source, fn_name, handle, fn, err);
  pthread_mutex_unlock(&tl_tcc_mutex);
  return st;
}

/* ---- public API -------------------------------------------------------------------- */
tl_compiler *tl_compiler_create(const char *cc, const char *flags, const char *cache_dir,
                                tl_error *err) {
  if (!cc) cc = env_nonempty("TL_CC");
  if (!cc) cc = "cc";
  tl_compiler *c = calloc(1, sizeof *c);
  if (!c) {
    tl_error_set(err, TL_ERR_NOMEM, "out of memory");
    return NULL;
  }
  c->kind = strcmp(cc, "tcc") == 0 ? TL_COMPILER_TCC : TL_COMPILER_CC;
  c->cc_name = strdup(cc);
  const char *tiered = env_nonempty("TL_TIERED");
  c->tiered = !tiered || strcmp(tiered, "0") != 0;
  c->owner = getpid();
  int sync_ok = pthread_mutex_init(&c->mu, NULL) == 0;
  pthread_condattr_t monotonic; /* builders wait for a time (tiered.c): not the wall clock's */
  if (sync_ok && pthread_condattr_init(&monotonic) != 0) {
    pthread_mutex_destroy(&c->mu);
    sync_ok = 0;
  }
  if (sync_ok) pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
  if (sync_ok && (pthread_cond_init(&c->wake, &monotonic) || pthread_cond_init(&c->idle, NULL))) {
    pthread_mutex_destroy(&c->mu); /* a cond that failed to start needs no destroy: none is kept */
    sync_ok = 0;
  }
  if (sync_ok) pthread_condattr_destroy(&monotonic);
  if (!sync_ok) {
    free(c->cc_name);
    free(c);
    tl_error_set(err, TL_ERR_NOMEM, "out of memory");
    return NULL;
  }
  tl_status named = TL_OK;
  if (cache_dir) named = (c->cache_dir = strdup(cache_dir)) ? TL_OK : TL_ERR_NOMEM;
  else named = tl_entry_default_dir(&c->cache_dir);
  tl_status st = TL_OK;
  if (!c->cc_name || named)
    st = tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  else if (c->kind == TL_COMPILER_TCC)
    st = tcc_load(&c->tcc, err);
  else
    st = setup_cc(c, flags, err);
  if (!st && !c->cache_dir)
    st = tl_error_set(err, TL_ERR_CACHE, "no kernel cache directory: set TL_CACHE_DIR or HOME");
  if (!st) st = check_private_dir(c, c->cache_dir, err);
  if (st == TL_ERR_CACHE) { /* a read-only, full, foreign or odd cache: run without it */
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    if ((st = open_fallback(c, err)) == TL_OK) announce_fallback(c, why);
  }
  if (!st && c->kind == TL_COMPILER_TCC) st = tcc_runtime_dir(c, err);
  tl_error quiet = {0}; /* tier 1 needs libtcc in the process; without it, cc alone */
  if (!st && c->kind == TL_COMPILER_CC) c->tcc_ok = tcc_load(&c->tcc, &quiet) == TL_OK;
  if (st == TL_ERR_NOMEM) tl_error_set(err, TL_ERR_NOMEM, "out of memory");
  if (st) {
    tl_compiler_destroy(c);
    return NULL;
  }
  return c;
}

void tl_compiler_destroy(tl_compiler *c) {
  if (!c) return;
  tl_tiered_destroy(c); /* first: background builders use what follows */
  for (size_t i = 0; i < c->entries.len; i++) {
    release_handle(c, c->entries.data[i].handle);
    free(c->entries.data[i].fn_name);
  }
  tl_vec_free(&c->entries);
  tl_hset_free(&c->map);
  if (c->tcc.lib) dlclose(c->tcc.lib);
  free(c->tcc.runtime_dir);
  if (c->argv && c->argc_base > 1) free(c->argv[1]);
  free(c->argv);
  free(c->cc_name), free(c->cc_path), free(c->flags);
  if (c->fallback_dir) remove_dir_entries(c->fallback_dir);
  free(c->fallback_dir);
  free(c->cache_dir);
  pthread_cond_destroy(&c->wake);
  pthread_cond_destroy(&c->idle);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

tl_compiler_kind tl_compiler_get_kind(const tl_compiler *c) { return c->kind; }
const char *tl_compiler_cache_dir(const tl_compiler *c) { return c->cache_dir; }
tl_compiler_stats tl_compiler_get_stats(const tl_compiler *c) {
  tl_compiler *m = (tl_compiler *)c; /* the lock is not the value */
  pthread_mutex_lock(&m->mu);
  tl_compiler_stats s = c->stats;
  pthread_mutex_unlock(&m->mu);
  return s;
}
void tl_compiler_set_private_loads(tl_compiler *c, int on) { c->private_loads = on != 0; }

/* tag: NULL for tl_compiler_get's entries; units (renamed in batches) have their own */
void tl_compiler_key(const tl_compiler *c, const char *source, const char *tag, uint64_t key[2]) {
  tl_hash128 h;
  tl_hash128_init(&h);
  tl_hash128_str(&h, source);
  if (tag) tl_hash128_str(&h, tag);
  if (c->kind == TL_COMPILER_TCC)
    tl_hash128_str(&h, "tcc");
  else
    tl_hash128_bytes(&h, c->ident, sizeof c->ident);
  tl_hash128_final(&h, key);
}

tl_status tl_compiler_get(tl_compiler *c, const char *source, const char *fn_name,
                          tl_kernel_fn *out, tl_error *err) {
  if (!c || !source || !fn_name || !out)
    return tl_error_set(err, TL_ERR_ARG, "tl_compiler_get: NULL argument");
  if (!tl_compiler_is_identifier(fn_name))
    return tl_error_set(err, TL_ERR_ARG, "kernel name '%s' is not a C identifier", fn_name);
  uint64_t key[2];
  tl_compiler_key(c, source, NULL, key);
  mem_entry *e = map_find(c, key, fn_name);
  if (e) {
    tl_compiler_count(c, &c->stats.mem_hits, 1);
    *out = e->fn;
    return TL_OK;
  }
  void *handle = NULL;
  tl_kernel_fn fn = NULL;
  tl_status st = c->kind == TL_COMPILER_TCC ? tcc_build(c, source, fn_name, &handle, &fn, err)
                                            : cc_get(c, key, source, fn_name, &handle, &fn, err);
  if (st) return st;
  st = map_insert(c, key, fn_name, handle, fn, err);
  if (st) {
    release_handle(c, handle);
    return st;
  }
  *out = fn;
  return TL_OK;
}
