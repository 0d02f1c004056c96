/* test_cache_attack.c — the on-disk kernel cache under load and under attack: 2 and 8
 * processes compiling the same kernels at once; entries replaced by another user's
 * file, a symbolic link, a FIFO, a truncated file, flipped bytes, a wrong .sum, a
 * swapped pair; a directory with the wrong mode; a cache on a read-only or full file
 * system (a tmpfs mounted in a private mount namespace, root only) or made
 * unwritable, at start and mid-run. Each attack must be detected (its counter),
 * the kernel rebuilt and computing the right values, and the rebuilt entry a disk hit
 * afterwards. Every test uses its own temporary directory. */

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/compiler.h"
#include "test.h"

/* kernel i writes out[j] = j * (i + 2) + 1 */
static void kernel_src(int i, char *src, size_t cap, char *name, size_t ncap) {
  snprintf(name, ncap, "k_att%d", i);
  snprintf(src, cap,
           "typedef long long int64_t;\n"
           "void k_att%d(void *const *b, int64_t s, int64_t e) {\n"
           "  int64_t *o = (int64_t *)b[0];\n"
           "  for (int64_t j = s; j < e; j++) o[j] = j * %d + 1;\n"
           "}\n",
           i, i + 2);
}

/* gets kernel i from c and checks its values; 0 when right */
static int get_and_check(tl_compiler *c, int i, tl_error *err) {
  char src[512], name[32];
  kernel_src(i, src, sizeof src, name, sizeof name);
  tl_kernel_fn fn = NULL;
  if (tl_compiler_get(c, src, name, &fn, err) != TL_OK || !fn) return 1;
  int64_t out[64] = {0};
  void *bufs[1] = {out};
  fn(bufs, 0, 64);
  int bad = 0;
  for (int j = 0; j < 64; j++) bad += out[j] != (int64_t)j * (i + 2) + 1;
  return bad;
}


/* counts dir's files by suffix (".so", ".sum", ".lock"); "" counts the others */
static int count_suffix(const char *dir, const char *suffix) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    const char *dot = strrchr(e->d_name, '.');
    int known = dot && (!strcmp(dot, ".so") || !strcmp(dot, ".sum") || !strcmp(dot, ".lock"));
    if (*suffix ? dot && !strcmp(dot, suffix) : !known) n++;
  }
  if (d) closedir(d);
  return n;
}

static tl_compiler *new_cc(const char *dir) {
  tl_error err = {0};
  tl_compiler *c = tl_compiler_create(NULL, NULL, dir, &err);
  if (!c) tl_test_fail(__FILE__, __LINE__, "tl_compiler_create: %s", err.msg);
  return c;
}

/* a fresh compiler gets kernels [0, n) and checks them; its stats */
static tl_compiler_stats get_all(const char *dir, int n) {
  tl_compiler_stats s = {0};
  tl_compiler *c = new_cc(dir);
  tl_error err = {0};
  if (!c) return s;
  for (int i = 0; i < n; i++) {
    int bad = get_and_check(c, i, &err);
    if (bad) tl_test_fail(__FILE__, __LINE__, "kernel %d: %d wrong values (%s)", i, bad, err.msg);
  }
  s = tl_compiler_get_stats(c);
  tl_compiler_destroy(c);
  return s;
}

/* ---- many processes, the same kernels ---------------------------------------------- */
enum { NKERNELS = 4 };

/* nproc children wait on a pipe, then all get the same kernels (each from its own
 * starting kernel, so every lock sees contention); each reports its stats */
static void race(int nproc) {
  char *dir = tl_test_tmpdir();
  int go[2], back[2];
  CHECK(pipe(go) == 0 && pipe(back) == 0);
  pid_t pids[8];
  for (int p = 0; p < nproc; p++) {
    pids[p] = fork();
    if (pids[p] == 0) {
      close(go[1]);
      char b;
      if (read(go[0], &b, 1) < 0) _exit(3);
      tl_error err = {0};
      tl_compiler *c = tl_compiler_create(NULL, NULL, dir, &err);
      int bad = !c;
      for (int k = 0; c && k < NKERNELS; k++) bad += get_and_check(c, (k + p) % NKERNELS, &err) != 0;
      tl_compiler_stats s = c ? tl_compiler_get_stats(c) : (tl_compiler_stats){0};
      uint64_t rep[3] = {s.compiled, s.disk_hits, s.disk_rejects};
      if (write(back[1], rep, sizeof rep) != sizeof rep) bad++;
      tl_compiler_destroy(c);
      _exit(bad ? 1 : 0);
    }
  }
  close(go[0]);
  close(back[1]);
  close(go[1]); /* release them all at once */
  uint64_t compiled = 0, hits = 0, rejects = 0, rep[3];
  while (read(back[0], rep, sizeof rep) == sizeof rep) compiled += rep[0], hits += rep[1], rejects += rep[2];
  close(back[0]);
  for (int p = 0; p < nproc; p++) {
    int status = 0;
    CHECK(waitpid(pids[p], &status, 0) == pids[p]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  /* each kernel compiled exactly once over all processes, the rest disk hits */
  CHECK_INT(compiled, NKERNELS);
  CHECK_INT(hits, (uint64_t)nproc * NKERNELS - NKERNELS);
  CHECK_INT(rejects, 0);
  /* every entry whole, no temporary left behind */
  CHECK_INT(count_suffix(dir, ".so"), NKERNELS);
  CHECK_INT(count_suffix(dir, ".sum"), NKERNELS);
  CHECK_INT(count_suffix(dir, ""), 0);
  tl_compiler_stats s = get_all(dir, NKERNELS);
  CHECK_INT(s.disk_hits, NKERNELS);
  CHECK_INT(s.compiled, 0);
  tl_test_rm_tree(dir);
}

TEST(cache_two_processes_compile_once) { race(2); }
TEST(cache_eight_processes_compile_once) { race(8); }

/* ---- attacks on an entry --------------------------------------------------------- */
/* the entry of kernel 0 in dir (its .so path), the only one there */
static char *entry_so(const char *dir) {
  DIR *d = opendir(dir);
  char *found = NULL;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    const char *dot = strrchr(e->d_name, '.');
    if (dot && !strcmp(dot, ".so") && !found) found = tl_test_path(dir, e->d_name);
  }
  if (d) closedir(d);
  return found;
}

/* the path of so with ".so" replaced by ext */
static char *sibling(const char *so, const char *ext) {
  size_t n = strlen(so) - 3;
  char *r = malloc(n + strlen(ext) + 1);
  memcpy(r, so, n);
  strcpy(r + n, ext);
  return r;
}

static char *sum_of(const char *so) { return sibling(so, ".sum"); }

static void copy_file(const char *from, const char *to) {
  char buf[1 << 15];
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0700);
  ssize_t n;
  while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0) CHECK(write(out, buf, (size_t)n) == n);
  close(in), close(out);
}

static void att_owner(const char *so, const char *dir) {
  (void)dir;
  CHECK(chown(so, 12345, 12345) == 0);
}
static void att_mode(const char *so, const char *dir) {
  (void)dir;
  CHECK(chmod(so, 0722) == 0);
}
/* a link to a copy of the very same, valid .so: refused all the same */
static void att_symlink(const char *so, const char *dir) {
  char *elsewhere = tl_test_path(dir, "../attack-copy.so");
  copy_file(so, elsewhere);
  CHECK(unlink(so) == 0 && symlink(elsewhere, so) == 0);
  free(elsewhere);
}
static void att_dangling(const char *so, const char *dir) {
  (void)dir;
  CHECK(unlink(so) == 0 && symlink("/nonexistent/tl.so", so) == 0);
}
static void att_fifo(const char *so, const char *dir) {
  (void)dir;
  CHECK(unlink(so) == 0 && mkfifo(so, 0600) == 0);
}
static void att_truncate(const char *so, const char *dir) {
  (void)dir;
  struct stat st;
  CHECK(stat(so, &st) == 0 && truncate(so, st.st_size / 3) == 0);
}
static void att_empty(const char *so, const char *dir) {
  (void)dir;
  CHECK(truncate(so, 0) == 0);
}
static void att_flip(const char *so, const char *dir) {
  (void)dir;
  int fd = open(so, O_RDWR);
  struct stat st;
  unsigned char b = 0;
  CHECK(fd >= 0 && fstat(fd, &st) == 0);
  CHECK(pread(fd, &b, 1, st.st_size / 2 + 7) == 1);
  b ^= 0x5a;
  CHECK(pwrite(fd, &b, 1, st.st_size / 2 + 7) == 1);
  close(fd);
}
static void att_wrong_sum(const char *so, const char *dir) {
  (void)dir;
  char *sum = sum_of(so);
  FILE *f = fopen(sum, "r+");
  char line[128] = {0};
  CHECK(f && fgets(line, sizeof line, f));
  char *hex = strchr(line + 7, ' ') + 1; /* "tl-sum SIZE CHECKSUM KEY" */
  hex[0] = hex[0] == '0' ? '1' : '0';
  rewind(f);
  fputs(line, f);
  fclose(f);
  free(sum);
}
static void att_garbage_sum(const char *so, const char *dir) {
  (void)dir;
  char *sum = sum_of(so);
  FILE *f = fopen(sum, "w");
  fputs("not a checksum\n", f);
  fclose(f);
  free(sum);
}

typedef struct {
  const char *name;
  void (*attack)(const char *so, const char *dir);
  size_t counter; /* offset of the counter in tl_compiler_stats */
  int root_only;
} attack;

#define AT(f) offsetof(tl_compiler_stats, f)
static const attack attacks[] = {
    {"another user's file", att_owner, AT(rejects_foreign), 1},
    {"writable by others", att_mode, AT(rejects_foreign), 0},
    {"symlink to a valid copy", att_symlink, AT(rejects_link), 0},
    {"dangling symlink", att_dangling, AT(rejects_link), 0},
    {"fifo", att_fifo, AT(rejects_link), 0},
    {"truncated", att_truncate, AT(rejects_size), 0},
    {"emptied", att_empty, AT(rejects_size), 0},
    {"flipped byte", att_flip, AT(rejects_sum), 0},
    {"wrong checksum in .sum", att_wrong_sum, AT(rejects_sum), 0},
    {"garbage .sum", att_garbage_sum, AT(rejects_sum), 0},
};

static uint64_t counter(tl_compiler_stats s, size_t off) {
  uint64_t v;
  memcpy(&v, (char *)&s + off, sizeof v);
  return v;
}

TEST(cache_attacked_entries_rebuilt) {
  int tried = 0, detected = 0;
  for (size_t a = 0; a < sizeof attacks / sizeof attacks[0]; a++) {
    if (attacks[a].root_only && geteuid() != 0) continue;
    char *top = tl_test_tmpdir(), *dir = tl_test_path(top, "cache");
    get_all(dir, 1);
    char *so = entry_so(dir);
    CHECK(so != NULL);
    if (!so) continue;
    attacks[a].attack(so, dir);
    tried++;
    tl_compiler_stats s = get_all(dir, 1); /* values checked inside */
    int ok = counter(s, attacks[a].counter) == 1 && s.disk_rejects == 1 && s.compiled == 1 && s.disk_hits == 0;
    if (!ok)
      tl_test_fail(__FILE__, __LINE__, "attack '%s': rejects %llu (this kind %llu), compiled %llu, hits %llu",
                   attacks[a].name, (unsigned long long)s.disk_rejects,
                   (unsigned long long)counter(s, attacks[a].counter), (unsigned long long)s.compiled,
                   (unsigned long long)s.disk_hits);
    detected += ok;
    s = get_all(dir, 1); /* the rebuilt entry is whole */
    CHECK_INT(s.disk_hits, 1);
    CHECK_INT(s.disk_rejects, 0);
    struct stat st;
    CHECK(lstat(so, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 0777) == 0700);
    free(so), free(dir);
    tl_test_rm_tree(top);
  }
  printf("  cache attacks on entries: %d tried, %d detected and rebuilt\n", tried, detected);
  CHECK_INT(detected, tried);
  CHECK(tried >= 9);
}

/* two entries swapped, each with its own valid .sum: the .sum names its key */
TEST(cache_swapped_entries_rebuilt) {
  char *dir = tl_test_tmpdir();
  get_all(dir, 2);
  char names[2][256];
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strlen(e->d_name) == 35 && !strcmp(e->d_name + 32, ".so") && n < 2) snprintf(names[n++], 256, "%.32s", e->d_name);
  if (d) closedir(d);
  CHECK_INT(n, 2);
  if (n == 2) {
    const char *ext[2] = {".so", ".sum"};
    for (int k = 0; k < 2; k++) { /* a <-> b through a third name */
      char a[512], b[512], t[512];
      snprintf(a, sizeof a, "%s/%s%s", dir, names[0], ext[k]);
      snprintf(b, sizeof b, "%s/%s%s", dir, names[1], ext[k]);
      snprintf(t, sizeof t, "%s/swap", dir);
      CHECK(rename(a, t) == 0 && rename(b, a) == 0 && rename(t, b) == 0);
    }
    tl_compiler_stats s = get_all(dir, 2);
    CHECK_INT(s.rejects_sum, 2);
    CHECK_INT(s.compiled, 2);
    s = get_all(dir, 2);
    CHECK_INT(s.disk_hits, 2);
  }
  tl_test_rm_tree(dir);
}

/* a planted symbolic link as a kernel's lock file: removed, the lock taken */
TEST(cache_planted_lock_link) {
  char *dir = tl_test_tmpdir();
  get_all(dir, 1);
  char *so = entry_so(dir), *lock = sibling(so, ".lock");
  char *target = tl_test_path(dir, "../victim");
  CHECK(unlink(lock) == 0 && symlink(target, lock) == 0 && unlink(so) == 0);
  tl_compiler_stats s = get_all(dir, 1);
  CHECK_INT(s.compiled, 1);
  struct stat st;
  CHECK(lstat(lock, &st) == 0 && S_ISREG(st.st_mode));
  CHECK(access(target, F_OK) != 0); /* nothing written through the link */
  free(so), free(lock), free(target);
  tl_test_rm_tree(dir);
}

/* the directory's mode: open to others, it is made 0700 and emptied; only readable
 * by others, made 0700 and kept */
TEST(cache_dir_wrong_mode_repaired) {
  static const struct {
    mode_t mode;
    int purged;
  } cases[] = {{0777, 1}, {0770, 1}, {0702, 1}, {0755, 0}, {0711, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *dir = tl_test_tmpdir();
    get_all(dir, 2);
    CHECK(chmod(dir, cases[i].mode) == 0);
    tl_compiler_stats s = get_all(dir, 2);
    struct stat st;
    CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
    CHECK_INT(s.dir_repairs, 1);
    CHECK_INT(s.compiled, cases[i].purged ? 2 : 0);
    CHECK_INT(s.disk_hits, cases[i].purged ? 0 : 2);
    CHECK_INT(s.fallback, 0);
    tl_test_rm_tree(dir);
  }
}

/* ---- a cache that cannot be written ----------------------------------------------
 * In a child: stderr to a file, a tmpfs of `kb` KiB mounted on dir in a mount
 * namespace of its own (gone when the child exits). Returns 0 if it could not mount
 * (not root, no namespaces): the caller says the case was skipped. */
static int mount_tmpfs(const char *dir, int kb) {
  char opt[64];
  snprintf(opt, sizeof opt, "size=%dk,mode=0700", kb);
  /* the source and type strings are ignored by a propagation change and a remount, but
   * NULL there is reported by valgrind's memcheck as a bad syscall argument */
  return unshare(CLONE_NEWNS) == 0 && mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) == 0 &&
         mount("tmpfs", dir, "tmpfs", 0, opt) == 0;
}

static int remount_ro(const char *dir) { return mount("none", dir, "tmpfs", MS_REMOUNT | MS_RDONLY, NULL) == 0; }

/* fills the file system of dir until it is full */
static void fill(const char *dir) {
  char *f = tl_test_path(dir, "filler");
  int fd = open(f, O_WRONLY | O_CREAT, 0600);
  static const char block[4096];
  while (fd >= 0 && write(fd, block, sizeof block) > 0) {
  }
  close(fd);
  free(f);
}

enum { FS_RO_START, FS_FULL_START, FS_RO_MIDRUN, FS_FULL_MIDRUN, FS_NCASES };

/* in the child: the case's steps; 0 when all went right, else the failing step */
static int fs_case(int which, const char *dir) {
  tl_compiler_reset_notice();
  tl_error err = {0};
  if (which == FS_RO_START && !remount_ro(dir)) return 10;
  if (which == FS_FULL_START) fill(dir);
  tl_compiler *c = tl_compiler_create(NULL, NULL, dir, &err);
  if (!c) return 11;
  if (get_and_check(c, 0, &err)) return 12;
  int before = (int)tl_compiler_get_stats(c).fallback;
  if (which == FS_RO_MIDRUN && !remount_ro(dir)) return 13;
  if (which == FS_FULL_MIDRUN) fill(dir);
  if (which >= FS_RO_MIDRUN && before != 0) return 14; /* the cache worked until now */
  for (int i = 1; i < 3; i++)
    if (get_and_check(c, i, &err)) return 15;
  if (tl_compiler_get_stats(c).fallback != 1) return 16;
  tl_compiler_destroy(c);
  /* a second compiler in the same process: works, and says nothing more */
  c = tl_compiler_create(NULL, NULL, dir, &err);
  if (!c || get_and_check(c, 3, &err)) return 17;
  tl_compiler_destroy(c);
  return 0;
}

static const char *const fs_names[] = {"read-only at start", "full at start", "read-only mid-run", "full mid-run"};

TEST(cache_on_readonly_or_full_fs) {
  int ran = 0;
  for (int which = 0; which < FS_NCASES; which++) {
    char *top = tl_test_tmpdir(), *dir = tl_test_path(top, "mnt"), *log = tl_test_path(top, "stderr");
    mkdir(dir, 0700);
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 2);
      int rc = mount_tmpfs(dir, 64) ? fs_case(which, dir) : 99;
      free(top), free(dir), free(log); /* what the parent made: the child's to free too */
      _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
    if (rc == 99) {
      printf("  (%s: skipped, cannot mount a tmpfs here)\n", fs_names[which]);
    } else {
      ran++;
      if (rc) tl_test_fail(__FILE__, __LINE__, "%s: step %d failed", fs_names[which], rc);
      /* said exactly once on stderr, naming the cache */
      FILE *f = fopen(log, "r");
      char line[2048];
      int said = 0;
      while (f && fgets(line, sizeof line, f))
        if (strstr(line, "compiling kernels in a private temporary directory instead")) said++;
      if (f) fclose(f);
      if (said != 1) tl_test_fail(__FILE__, __LINE__, "%s: said %d times on stderr", fs_names[which], said);
    }
    free(dir), free(log);
    tl_test_rm_tree(top);
  }
  printf("  read-only / full file system cases run: %d of %d\n", ran, FS_NCASES);
}

/* without mounts: a cache directory made unwritable (mode 0500, binds non-root users
 * only), at start and mid-run; and one replaced by a file mid-run (binds root too) */
TEST(cache_made_unwritable_midrun) {
  char *top = tl_test_tmpdir(), *dir = tl_test_path(top, "cache");
  tl_compiler_reset_notice();
  tl_compiler *c = new_cc(dir);
  tl_error err = {0};
  if (c) {
    CHECK_INT(get_and_check(c, 0, &err), 0);
    CHECK_INT(tl_compiler_get_stats(c).fallback, 0);
    char *moved = tl_test_path(top, "moved");
    CHECK(rename(dir, moved) == 0); /* the cache path is now a regular file */
    int fd = open(dir, O_WRONLY | O_CREAT, 0600);
    close(fd);
    CHECK_INT(get_and_check(c, 1, &err), 0);
    CHECK_INT(tl_compiler_get_stats(c).fallback, 1);
    CHECK_INT(get_and_check(c, 0, &err), 0); /* still loaded */
    CHECK_INT(get_and_check(c, 2, &err), 0);
    tl_compiler_destroy(c);
    free(moved);
  }
  if (geteuid() != 0) { /* a mode only binds non-root users */
    char *ro = tl_test_path(top, "ro");
    c = new_cc(ro);
    CHECK_INT(get_and_check(c, 0, &err), 0);
    CHECK(chmod(ro, 0500) == 0); /* mid-run: the next kernel goes to the fallback */
    CHECK_INT(get_and_check(c, 1, &err), 0);
    CHECK_INT(tl_compiler_get_stats(c).fallback, 1);
    tl_compiler_destroy(c);
    /* at start, our own directory's mode is repaired rather than worked around */
    tl_compiler_stats s = get_all(ro, 2);
    CHECK_INT(s.dir_repairs, 1);
    CHECK_INT(s.fallback, 0);
    CHECK_INT(s.disk_hits, 1);
    free(ro);
  }
  free(dir);
  tl_test_rm_tree(top);
}

/* through a context: a truncated entry counted in tl_get_stats, the values right */
#include "tl.h"
TEST(cache_attack_seen_by_context) {
  char *dir = tl_test_tmpdir();
  for (int round = 0; round < 3; round++) {
    tl_ctx *ctx = tl_init();
    CHECK_INT(tl_set_cache_dir(ctx, dir), TL_OK);
    tl_tensor *y = tl_mul_scalar(tl_arange(ctx, TL_F64, 0, 6, 1), 1.5);
    double v[6] = {0};
    CHECK_INT(tl_to_host(y, v, sizeof v), TL_OK);
    CHECK_NEAR(v[5], 7.5, 0);
    tl_stats s = tl_get_stats(ctx);
    if (round == 0) CHECK(s.kernels_compiled >= 1);
    if (round == 1) CHECK(s.disk_cache_rejects >= 1 && s.kernels_compiled == s.disk_cache_rejects);
    if (round == 2) CHECK(s.disk_cache_rejects == 0 && s.kernels_compiled == 0);
    CHECK_INT(s.kernel_cache_fallback, 0);
    TEST_SHUTDOWN(ctx);
    DIR *d = opendir(dir); /* truncate every entry after the first round */
    struct dirent *e;
    while (round == 0 && d && (e = readdir(d))) {
      const char *dot = strrchr(e->d_name, '.');
      char *p = tl_test_path(dir, e->d_name);
      if (dot && !strcmp(dot, ".so")) CHECK(truncate(p, 100) == 0);
      free(p);
    }
    if (d) closedir(d);
  }
  tl_test_rm_tree(dir);
}

/* `tl run` with an unusable cache (a path through a regular file): the program and its
 * kernels compile elsewhere, the output is right, the note comes once for both the
 * program's compiler and the engine's */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  char *buf = calloc(1, 1 << 16);
  if (f) {
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = 0;
    fclose(f);
  }
  return buf;
}

TEST(cache_unusable_for_tl_run) {
  char *top = tl_test_tmpdir(), *prog = tl_test_path(top, "p.tl"), *file = tl_test_path(top, "file");
  char *cache = tl_test_path(file, "cache"), *out = tl_test_path(top, "out"), *errp = tl_test_path(top, "err");
  FILE *f = fopen(prog, "w");
  fputs("fn main() {\n  let x = Tensor::arange(0, 8) as f32;\n  println(\"{}\", (x * 2.0 - 1.0).sum().item());\n}\n", f);
  fclose(f);
  close(open(file, O_CREAT | O_WRONLY, 0600));
  pid_t pid = fork();
  if (pid == 0) {
    setenv("TL_CACHE_DIR", cache, 1);
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600), e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(o, 1), dup2(e, 2);
    execl("build/tl", "tl", "run", prog, (char *)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char *o = slurp(out), *e = slurp(errp);
  CHECK_STR(o, "48.0\n"); /* sum of 2x - 1 over x = 0..7 */
  const char *note = "compiling kernels in a private temporary directory instead (not kept)";
  const char *first = strstr(e, note);
  CHECK(first != NULL);
  if (first) CHECK(strstr(first + 1, note) == NULL);
  CHECK(strstr(e, cache) != NULL); /* it names the cache it could not use */
  free(o), free(e), free(prog), free(file), free(cache), free(out), free(errp);
  tl_test_rm_tree(top);
}
