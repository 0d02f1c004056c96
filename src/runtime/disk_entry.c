/* disk_entry.c — files of a private cache of code, whoever makes them (cc's kernels,
 * OpenCL program binaries): the 128-bit keys that name them, the private directory,
 * entries checked before use (a regular file of ours that others cannot write, the
 * size and checksum recorded beside it in <key>.sum for that key), per-entry locks,
 * and writes that never follow or reuse an existing file.
 * in: paths, bytes; out: verdicts on entries, files written, locks held.
 *
 * Trust model: the directory is private (0700, ours), so nobody else can plant or swap
 * files in it; every entry is still checked because a crash, a full disk or a careless
 * chmod can leave a damaged one, and loading damaged code crashes the process. */
#include "runtime/disk_entry.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hash.h"

static const char *env_nonempty(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

static char *fmt(const char *f, ...) TL_PRINTF(1, 2);
static char *fmt(const char *f, ...) {
  va_list ap, again;
  va_start(ap, f);
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, f, ap);
  va_end(ap);
  char *s = n < 0 ? NULL : malloc((size_t)n + 1);
  if (s) vsnprintf(s, (size_t)n + 1, f, again);
  va_end(again);
  return s;
}

/* ---- hashing: keys of entries ------------------------------------------------------
 * Two independent 64-bit streams (FNV-1a, core/hash.h's mix, and a multiply-xorshift
 * mix), each put through the finalizer: 128 bits, so accidental key collisions are out
 * of reach. The second stream is the one hash mix of its own in the library: the two
 * halves of a key must not move together. Not cryptographic: the private directory is
 * what keeps others out. */
void tl_hash128_init(tl_hash128 *h) {
  h->a = TL_HASH_INIT;
  h->b = 0x9e3779b97f4a7c15ULL;
  h->len = 0;
}

/* Two independent 64-bit lanes over 8-byte words (a kernel's source, prelude
 * included, is hashed on every realize: a byte at a time cost more than the small
 * kernels it keys), then the tail a byte at a time. */
void tl_hash128_bytes(tl_hash128 *h, const void *p, size_t n) {
  const unsigned char *s = p;
  uint64_t a = h->a, b = h->b;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    a = tl_hash_mix(a, w);
    a ^= a >> 31;
    b = (b + w + 1) * 0xff51afd7ed558ccdULL;
    b ^= b >> 29;
  }
  for (; i < n; i++) {
    a = tl_hash_mix(a, s[i]);
    b = (b + s[i] + 1) * 0xff51afd7ed558ccdULL;
    b ^= b >> 29;
  }
  h->a = a;
  h->b = b;
  h->len += n;
}

/* the string and its terminator, so "ab"+"c" and "a"+"bc" differ */
void tl_hash128_str(tl_hash128 *h, const char *s) { tl_hash128_bytes(h, s, strlen(s) + 1); }

void tl_hash128_final(const tl_hash128 *h, uint64_t out[2]) {
  out[0] = tl_hash_final(h->a ^ h->len);
  out[1] = tl_hash_final(h->b + (h->a << 17 | h->a >> 47));
}


int tl_entry_write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* creates a new file (never follows or reuses an existing one) holding data */
int tl_entry_write_new_file(const char *path, const void *data, size_t n, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return -1;
  int rc = tl_entry_write_all(fd, data, n);
  int saved = errno;
  if (close(fd) != 0 && rc == 0) rc = -1;
  if (rc != 0) {
    unlink(path);
    errno = saved;
  }
  return rc;
}


/* mkdir -p with mode 0700; returns 0 or the first errno that is not EEXIST */
static int mkdir_p(const char *path) {
  char *p = strdup(path);
  if (!p) return ENOMEM;
  int rc = 0;
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s) continue;
    char saved = *s;
    *s = 0;
    if (mkdir(p, 0700) != 0 && errno != EEXIST) rc = errno;
    *s = saved;
    if (rc || !saved) break;
  }
  free(p);
  return rc;
}

/* the cache directory named by the environment into *dir (NULL when it names none);
 * TL_ERR_NOMEM when the name could not be allocated */
tl_status tl_entry_default_dir(char **dir) {
  const char *own = env_nonempty("TL_CACHE_DIR"), *xdg = env_nonempty("XDG_CACHE_HOME"), *home = env_nonempty("HOME");
  if (own) *dir = strdup(own);
  else if (xdg && xdg[0] == '/') *dir = fmt("%s/tl", xdg); /* XDG: relative paths are invalid */
  else if (home) *dir = fmt("%s/.cache/tl", home);
  else return *dir = NULL, TL_OK;
  return *dir ? TL_OK : TL_ERR_NOMEM;
}

/* is this one of the files the cache writes? (32 hex digits, then a dot) */
static int is_entry_name(const char *name) {
  size_t i = 0;
  while (i < 32 && ((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) i++;
  return i == 32 && name[32] == '.';
}

/* Empties a directory that others could write: after the chmod nobody else can
 * add files, but what they left (swapped, hard-linked or renamed entries of ours
 * pass the owner check) must go. */
void tl_entry_purge(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (!is_entry_name(e->d_name)) continue;
    char *p = fmt("%s/%s", dir, e->d_name);
    if (p) unlink(p);
    free(p);
  }
  if (d) closedir(d);
}

/* A directory of ours with a mode other than 0700 is made 0700 (and emptied when
 * others could write it): 1 if it was repaired, 0 if it was fine, -1 if chmod failed */
static int repair_dir_mode(const char *dir, const struct stat *st) {
  if ((st->st_mode & 0777) == 0700) return 0;
  if (chmod(dir, 0700) != 0) return -1;
  if (st->st_mode & (S_IWGRP | S_IWOTH)) {
    tl_entry_purge(dir);
    char *lib = fmt("%s/tcc-runtime/libtcc1.a", dir); /* tcc links it: not a stranger's */
    if (lib) unlink(lib);
    free(lib);
  }
  return 1;
}


/* Opens an entry file only if it is a regular file of ours that others cannot
 * write; fstat after open, so what is checked is what is read. */
int tl_entry_open_checked(const char *path, struct stat *st, tl_entry_state *why) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *why = errno == ENOENT ? TL_ENTRY_MISSING : errno == ELOOP ? TL_ENTRY_LINK : TL_ENTRY_FOREIGN;
    return -1;
  }
  *why = TL_ENTRY_OK;
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))
    *why = TL_ENTRY_LINK;
  else if (st->st_uid != getuid() || (st->st_mode & (S_IWGRP | S_IWOTH)))
    *why = TL_ENTRY_FOREIGN;
  if (*why == TL_ENTRY_OK) return fd;
  close(fd);
  errno = EPERM;
  return -1;
}

static int open_private(const char *path, struct stat *st) {
  tl_entry_state why;
  return tl_entry_open_checked(path, st, &why);
}

static int checksum_fd(int fd, uint64_t *sum, uint64_t *size) {
  unsigned char buf[1 << 14];
  tl_hash128 h;
  tl_hash128_init(&h);
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    tl_hash128_bytes(&h, buf, (size_t)n);
  }
  uint64_t out[2];
  tl_hash128_final(&h, out);
  *sum = out[0] ^ out[1];
  *size = h.len;
  return 0;
}

static tl_entry_state read_sum_file(const char *path, uint64_t *sum, uint64_t *size) {
  struct stat st;
  tl_entry_state why;
  int fd = tl_entry_open_checked(path, &st, &why);
  if (fd < 0) return why == TL_ENTRY_MISSING ? TL_ENTRY_SUM : why;
  char text[128];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return TL_ENTRY_SUM;
  text[n] = 0;
  unsigned long long s, z;
  char key[40];
  if (sscanf(text, "tl-sum %llu %llx %39s", &z, &s, key) != 3) return TL_ENTRY_SUM;
  /* the key it was built for: an entry renamed to another key is refused */
  const char *slash = strrchr(path, '/');
  if (strncmp(slash ? slash + 1 : path, key, 32) || strlen(key) != 32) return TL_ENTRY_SUM;
  *sum = s;
  *size = z;
  return TL_ENTRY_OK;
}

/* whether the .so matches the size and checksum recorded beside it */
tl_entry_state tl_entry_verify(const char *so, const char *sum) {
  struct stat st;
  tl_entry_state why;
  int fd = tl_entry_open_checked(so, &st, &why);
  if (fd < 0) return why;
  uint64_t want_sum = 0, want_size = 0, got_sum = 0, got_size = 0;
  why = read_sum_file(sum, &want_sum, &want_size);
  if (why == TL_ENTRY_OK && checksum_fd(fd, &got_sum, &got_size) != 0) why = TL_ENTRY_SIZE;
  if (why == TL_ENTRY_OK && (got_size != want_size || (uint64_t)st.st_size != got_size)) why = TL_ENTRY_SIZE;
  if (why == TL_ENTRY_OK && got_sum != want_sum) why = TL_ENTRY_SUM;
  close(fd);
  return why;
}


/* Takes the per-kernel lock <base>.lock (flock: processes and threads alike wait
 * for the one compiling this kernel). -1 when it cannot be had: the caller then
 * builds unlocked, which is still correct (private temporary names, atomic
 * renames), only perhaps twice. */
int tl_entry_take_lock(const char *lock) {
  int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == ELOOP && unlink(lock) == 0) /* a planted link: ours to remove */
    fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

void tl_entry_drop_lock(int fd) {
  if (fd < 0) return;
  flock(fd, LOCK_UN);
  close(fd);
}

/* the checksum and size of a freshly written private entry, its mode made what the
 * loader will demand (0700: compilers honour the umask); 0, or -1 with errno */
int tl_entry_checksum_file(const char *path, uint64_t *sum, uint64_t *size) {
  struct stat st;
  int fd = chmod(path, 0700) == 0 ? open_private(path, &st) : -1;
  int ok = fd >= 0 && checksum_fd(fd, sum, size) == 0;
  int saved = errno;
  if (fd >= 0) close(fd);
  errno = saved;
  return ok ? 0 : -1;
}

/* writes the .sum of the entry whose data file is `so` (through the private tmp_sum
 * and a rename): 0, or -1 */
int tl_entry_write_sum(const char *tmp_sum, const char *sum, const char *so, uint64_t size, uint64_t checksum) {
  char text[128];
  const char *slash = strrchr(so, '/');
  int n = snprintf(text, sizeof text, "tl-sum %llu %016llx %.32s\n", (unsigned long long)size,
                   (unsigned long long)checksum, slash ? slash + 1 : so);
  if (tl_entry_write_new_file(tmp_sum, text, (size_t)n, 0600) == 0 && rename(tmp_sum, sum) == 0) return 0;
  unlink(tmp_sum);
  return -1;
}

/* Is dir usable as a cache of code (ours, private, writable)? TL_OK, else
 * TL_ERR_CACHE saying why, the directory called `what` in the message; a wrong mode
 * of our own directory is repaired (*repaired = 1) rather than refused. */
tl_status tl_entry_check_private_dir(const char *dir, const char *what, int *repaired, tl_error *err) {
  struct stat st;
  *repaired = 0;
  if (stat(dir, &st) != 0) {
    int e = mkdir_p(dir);
    if (e || stat(dir, &st) != 0)
      return tl_error_set(err, TL_ERR_CACHE, "%s '%s' is not writable: %s", what, dir, strerror(e ? e : errno));
  }
  if (!S_ISDIR(st.st_mode)) return tl_error_set(err, TL_ERR_CACHE, "%s '%s' is not a directory", what, dir);
  if (st.st_uid != getuid())
    return tl_error_set(err, TL_ERR_CACHE,
                        "%s '%s' is owned by uid %u, not by this user "
                        "(uid %u): refusing to load code from it",
                        what, dir, (unsigned)st.st_uid, (unsigned)getuid());
  int r = repair_dir_mode(dir, &st);
  if (r < 0)
    return tl_error_set(err, TL_ERR_CACHE, "%s '%s' has mode %04o and cannot be made private: %s", what, dir,
                        (unsigned)(st.st_mode & 0777), strerror(errno));
  *repaired = r;
  if (access(dir, W_OK | X_OK) != 0)
    return tl_error_set(err, TL_ERR_CACHE, "%s '%s' is not writable: %s", what, dir, strerror(errno));
  return TL_OK;
}

/* ---- blobs ---- */
bool tl_blob_paths_of(const char *dir, const uint64_t key[2], const char *ext, tl_blob_paths *p) {
  int n = snprintf(p->base, sizeof p->base, "%s/%016llx%016llx", dir, (unsigned long long)key[0],
                   (unsigned long long)key[1]);
  if (n < 0 || (size_t)n >= sizeof p->base) return false;
  snprintf(p->data, sizeof p->data, "%s.%s", p->base, ext);
  snprintf(p->sum, sizeof p->sum, "%s.sum", p->base);
  snprintf(p->lock, sizeof p->lock, "%s.lock", p->base);
  return true;
}

unsigned char *tl_blob_read(const tl_blob_paths *p, size_t *len, tl_entry_state *why) {
  if ((*why = tl_entry_verify(p->data, p->sum)) != TL_ENTRY_OK) return NULL;
  struct stat st;
  int fd = tl_entry_open_checked(p->data, &st, why);
  if (fd < 0) return NULL;
  unsigned char *data = st.st_size > 0 ? malloc((size_t)st.st_size) : NULL;
  size_t got = 0;
  while (data && got < (size_t)st.st_size) {
    ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (data && got == (size_t)st.st_size) {
    *len = got;
    return data;
  }
  free(data);
  *why = TL_ENTRY_SIZE;
  return NULL;
}

bool tl_blob_store(const tl_blob_paths *p, const void *data, size_t len) {
  static atomic_uint seq; /* private names: threads of one process store at once */
  unsigned k = atomic_fetch_add(&seq, 1);
  char tmp[4300], tmp_sum[4300];
  snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", p->data, (long)getpid(), k);
  snprintf(tmp_sum, sizeof tmp_sum, "%s.%ld.%u.tmp", p->sum, (long)getpid(), k);
  uint64_t sum = 0, size = 0;
  if (tl_entry_write_new_file(tmp, data, len, 0600) == 0 && tl_entry_checksum_file(tmp, &sum, &size) == 0 &&
      tl_entry_write_sum(tmp_sum, p->sum, p->data, size, sum) == 0 && rename(tmp, p->data) == 0)
    return true;
  unlink(tmp);
  return false;
}
