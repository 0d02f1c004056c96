/* rt_sys.c — system calls of compiled TL programs (rt_sys.h, LANGUAGE.md §10). */
#include "lang/rt/rt_sys.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/strbuf.h" /* a file read whole */

void tlrt_assert(tlrt *R, bool cond, const tlrt_str *msg, int line, int col) {
  if (!cond) tlrt_fail(R, line, col, "assertion failed: %.*s", (int)(msg->len > 600 ? 600 : msg->len), msg->data);
}

double tlrt_sys_time(tlrt *R) {
  (void)R;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tlrt_sys_sleep(tlrt *R, int64_t ms, int line, int col) {
  if (ms < 0) tlrt_fail(R, line, col, "cannot sleep a negative time (%" PRId64 " ms)", ms);
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR) {
  }
}

_Noreturn void tlrt_sys_exit(tlrt *R, int64_t code, int line, int col) {
  if (code < 0 || code > 255) tlrt_fail(R, line, col, "exit code %" PRId64 " is outside 0..255", code);
  R->exiting = true;
  R->exit_code = (int)code;
  if (!R->on_error) exit((int)code);
  longjmp(*R->on_error, 2);
}

int64_t tlrt_sys_memory_bytes(tlrt *R) {
  (void)R;
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  long page = sysconf(_SC_PAGESIZE);
  return (int64_t)resident * (page > 0 ? page : 4096);
}

int64_t tlrt_sys_memory_mb(tlrt *R) { return tlrt_sys_memory_bytes(R) / (1024 * 1024); }

/* a String as a C string for the C library: one with a NUL inside is refused */
static const char *c_text(tlrt *R, const tlrt_str *s, const char *what, int line, int col) {
  if (memchr(s->data, 0, (size_t)s->len)) tlrt_fail(R, line, col, "%s holds a NUL character", what);
  return s->data;
}

tlrt_str *tlrt_env_get(tlrt *R, const tlrt_str *name) {
  const char *v = memchr(name->data, 0, (size_t)name->len) ? NULL : getenv(name->data);
  return tlrt_str_new(R, v ? v : "", -1);
}

/* setenv for this process and the programs it starts; a name that is empty or holds
 * `=` or NUL, or a value holding NUL, is an error (setenv would refuse or cut it) */
void tlrt_env_set(tlrt *R, const tlrt_str *name, const tlrt_str *value, int line, int col) {
  if (name->len == 0 || memchr(name->data, '=', (size_t)name->len) || memchr(name->data, 0, (size_t)name->len) ||
      memchr(value->data, 0, (size_t)value->len))
    tlrt_fail(R, line, col, "Env::set: the name must be non-empty without `=` or NUL, and the value without NUL");
  if (setenv(name->data, value->data, 1) != 0) tlrt_fail(R, line, col, "Env::set: %s", strerror(errno));
}

int64_t tlrt_args_count(tlrt *R) { return R->argc > 0 ? R->argc : 0; }

tlrt_str *tlrt_args_get(tlrt *R, int64_t i, int line, int col) {
  if (i < 0 || i >= tlrt_args_count(R))
    tlrt_fail(R, line, col, "args_get(%" PRId64 ") is out of range: args_count() is %" PRId64, i, tlrt_args_count(R));
  return tlrt_str_new(R, R->argv[i], -1);
}

tlrt_str *tlrt_file_read(tlrt *R, const tlrt_str *path, int line, int col) {
  const char *p = c_text(R, path, "a file name", line, col);
  FILE *f = fopen(p, "rb");
  if (!f) tlrt_fail(R, line, col, "cannot open %s: %s", p, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    tlrt_fail(R, line, col, "cannot read %s: it is a directory", p);
  }
  tl_strbuf text = {0};
  int bad = tl_strbuf_read(&text, f) ? 0 : errno;
  fclose(f);
  if (bad) {
    tl_strbuf_free(&text);
    tlrt_fail(R, line, col, "cannot read %s: %s", p, strerror(bad));
  }
  size_t n = text.len;
  char *buf = tl_strbuf_take(&text);
  if (!buf) tlrt_fail(R, line, col, "out of memory reading %s", p);
  tlrt_str *s = tlrt_str_new(R, buf, (int64_t)n);
  free(buf);
  return s;
}

/* writes text to path; 0 or the errno of the failure */
static int write_file(const char *p, const tlrt_str *text) {
  FILE *f = fopen(p, "wb");
  if (!f) return errno ? errno : EIO;
  size_t put = fwrite(text->data, 1, (size_t)text->len, f);
  int bad = put != (size_t)text->len ? (errno ? errno : EIO) : 0;
  if (fclose(f) && !bad) bad = errno ? errno : EIO;
  return bad;
}

void tlrt_file_write(tlrt *R, const tlrt_str *path, const tlrt_str *text, int line, int col) {
  const char *p = c_text(R, path, "a file name", line, col);
  int bad = write_file(p, text);
  if (bad) tlrt_fail(R, line, col, "cannot write %s: %s", p, strerror(bad));
}

bool tlrt_file_write_ok(tlrt *R, const tlrt_str *path, const tlrt_str *text, int line, int col) {
  return write_file(c_text(R, path, "a file name", line, col), text) == 0;
}

bool tlrt_file_exists(tlrt *R, const tlrt_str *path) {
  (void)R;
  struct stat st;
  return !memchr(path->data, 0, (size_t)path->len) && stat(path->data, &st) == 0;
}

/* File::append: text added at the end of path (made if missing), an error on failure */
void tlrt_file_append(tlrt *R, const tlrt_str *path, const tlrt_str *text, int line, int col) {
  const char *p = c_text(R, path, "a file name", line, col);
  FILE *f = fopen(p, "ab");
  if (!f) tlrt_fail(R, line, col, "cannot open %s: %s", p, strerror(errno));
  size_t put = fwrite(text->data, 1, (size_t)text->len, f);
  int bad = put != (size_t)text->len ? (errno ? errno : EIO) : 0;
  if (fclose(f) && !bad) bad = errno ? errno : EIO;
  if (bad) tlrt_fail(R, line, col, "cannot write %s: %s", p, strerror(bad));
}

/* File::check_handle(path, mode, op), what the library's File handle (front/stdlib.c)
 * checks: op "open" takes a mode "r" (the file must be there), "w" (emptied, made if
 * missing) or "a" (made if missing); "read" and "write" say a handle opened the other
 * way round is the wrong one */
void tlrt_file_check_handle(tlrt *R, const tlrt_str *path, const tlrt_str *mode, const tlrt_str *op, int line, int col) {
  const char *p = c_text(R, path, "a file name", line, col), *m = c_text(R, mode, "a mode", line, col);
  const char *o = c_text(R, op, "an operation", line, col);
  bool r = !strcmp(m, "r"), w = !strcmp(m, "w"), a = !strcmp(m, "a");
  if (!strcmp(o, "open")) {
    if (!r && !w && !a) tlrt_fail(R, line, col, "File::open(%s, \"%.40s\"): the mode is \"r\", \"w\" or \"a\"", p, m);
    FILE *f = fopen(p, r ? "rb" : w ? "wb" : "ab");
    if (!f) tlrt_fail(R, line, col, "cannot open %s: %s", p, strerror(errno));
    fclose(f);
  } else if (!strcmp(o, "read") && !r) {
    tlrt_fail(R, line, col, "cannot read %s: the handle was opened for writing (mode \"%s\")", p, m);
  } else if (!strcmp(o, "write") && r) {
    tlrt_fail(R, line, col, "cannot write %s: the handle was opened for reading (mode \"r\")", p);
  }
}

/* Path::is_dir / Path::is_file: false when the path is neither (or cannot be seen) */
static bool path_mode_is(const tlrt_str *path, mode_t kind) {
  struct stat st;
  return !memchr(path->data, 0, (size_t)path->len) && stat(path->data, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

bool tlrt_path_is_dir(tlrt *R, const tlrt_str *path) {
  (void)R;
  return path_mode_is(path, S_IFDIR);
}

bool tlrt_path_is_file(tlrt *R, const tlrt_str *path) {
  (void)R;
  return path_mode_is(path, S_IFREG);
}

/* ---- strings: positions are byte offsets; one inside a character is an error ---- */

static bool is_boundary(const tlrt_str *s, int64_t i) {
  return i == 0 || i == s->len || ((unsigned char)s->data[i] & 0xC0) != 0x80;
}

uint32_t tlrt_str_char_at(tlrt *R, const tlrt_str *s, int64_t i, int line, int col) {
  if (i < 0 || i >= s->len)
    tlrt_fail(R, line, col, "index %" PRId64 " is out of range for a string of length %" PRId64, i, s->len);
  if (!is_boundary(s, i)) tlrt_fail(R, line, col, "index %" PRId64 " is inside a character", i);
  const unsigned char *p = (const unsigned char *)s->data + i;
  int n = p[0] < 0x80 ? 1 : p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : 4;
  uint32_t c = n == 1 ? p[0] : n == 2 ? p[0] & 0x1F : n == 3 ? p[0] & 0x0F : p[0] & 0x07;
  for (int k = 1; k < n && i + k < s->len; k++) c = (c << 6) | (p[k] & 0x3F);
  return c;
}

bool tlrt_str_contains(tlrt *R, const tlrt_str *s, const tlrt_str *sub) {
  (void)R;
  if (!sub->len) return true;
  return s->len >= sub->len && memmem(s->data, (size_t)s->len, sub->data, (size_t)sub->len) != NULL;
}

tlrt_str *tlrt_str_substring(tlrt *R, const tlrt_str *s, int64_t start, int64_t len, int line, int col) {
  if (start < 0 || len < 0 || start > s->len || len > s->len - start)
    tlrt_fail(R, line, col, "substring(%" PRId64 ", %" PRId64 ") is out of range for a string of length %" PRId64, start, len,
              s->len);
  if (!is_boundary(s, start) || !is_boundary(s, start + len))
    tlrt_fail(R, line, col, "substring(%" PRId64 ", %" PRId64 ") cuts a character", start, len);
  return tlrt_str_new(R, s->data + start, len);
}

/* the text for a message: at most 60 bytes of it */
#define SHOWN(s) (int)((s)->len > 60 ? 60 : (s)->len), (s)->data

int64_t tlrt_str_to_i64(tlrt *R, const tlrt_str *s, int line, int col) {
  const char *p = s->data, *end = p + s->len;
  bool neg = false;
  if (p < end && (*p == '-' || *p == '+')) neg = *p++ == '-';
  if (p == end) tlrt_fail(R, line, col, "`%.*s` is not an integer", SHOWN(s));
  uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  for (; p < end; p++) {
    if (*p < '0' || *p > '9') tlrt_fail(R, line, col, "`%.*s` is not an integer", SHOWN(s));
    unsigned d = (unsigned)(*p - '0');
    if (v > (lim - d) / 10) tlrt_fail(R, line, col, "`%.*s` does not fit in an i64", SHOWN(s));
    v = v * 10 + d;
  }
  return neg ? (int64_t)(0 - v) : (int64_t)v;
}

float tlrt_str_to_f32(tlrt *R, const tlrt_str *s, int line, int col) {
  /* Rust's f32::from_str: no spaces, decimal digits with an optional exponent, or
   * inf / infinity / nan */
  const char *p = s->data;
  bool ok = s->len > 0 && !memchr(p, 0, (size_t)s->len);
  for (int64_t i = 0; ok && i < s->len; i++)
    if (strchr(" \t\n\r\v\fxXpP", p[i])) ok = false; /* no spaces, no hex floats */
  char *end = NULL;
  float v = ok ? strtof(p, &end) : 0.0f;
  if (!ok || end != p + s->len) tlrt_fail(R, line, col, "`%.*s` is not a number", SHOWN(s));
  return v;
}

/* ASCII whitespace, as Rust's trim sees it for ASCII text */
static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool tlrt_str_is_empty(tlrt *R, const tlrt_str *s) {
  (void)R;
  return s->len == 0;
}

tlrt_str *tlrt_str_trim(tlrt *R, const tlrt_str *s) {
  int64_t a = 0, b = s->len;
  while (a < b && is_space(s->data[a])) a++;
  while (b > a && is_space(s->data[b - 1])) b--;
  return tlrt_str_new(R, s->data + a, b - a);
}

/* the ASCII letters mapped to one case; other bytes (UTF-8 too) are kept */
static tlrt_str *ascii_case(tlrt *R, const tlrt_str *s, bool upper) {
  tlrt_str *r = tlrt_str_new(R, s->data, s->len);
  for (int64_t i = 0; i < r->len; i++) {
    char c = r->data[i];
    if (upper && c >= 'a' && c <= 'z') r->data[i] = (char)(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') r->data[i] = (char)(c - 'A' + 'a');
  }
  return r;
}

tlrt_str *tlrt_str_to_upper(tlrt *R, const tlrt_str *s) { return ascii_case(R, s, true); }
tlrt_str *tlrt_str_to_lower(tlrt *R, const tlrt_str *s) { return ascii_case(R, s, false); }

bool tlrt_str_starts_with(tlrt *R, const tlrt_str *s, const tlrt_str *p) {
  (void)R;
  return s->len >= p->len && !memcmp(s->data, p->data, (size_t)p->len);
}

bool tlrt_str_ends_with(tlrt *R, const tlrt_str *s, const tlrt_str *p) {
  (void)R;
  return s->len >= p->len && !memcmp(s->data + s->len - p->len, p->data, (size_t)p->len);
}

/* does a match of from start at byte i? an empty from matches at each character
 * boundary, the end too (Rust: "ab".replace("", "-") is "-a-b-") */
static bool match_at(const tlrt_str *s, int64_t i, const tlrt_str *from) {
  if (!from->len) return i == s->len || (s->data[i] & 0xC0) != 0x80;
  return i <= s->len - from->len && !memcmp(s->data + i, from->data, (size_t)from->len);
}

/* the matches of from in s, left to right, not overlapping; with out, the result
 * written there */
static int64_t replace_pass(const tlrt_str *s, const tlrt_str *from, const tlrt_str *to, char *out) {
  int64_t count = 0, o = 0;
  for (int64_t i = 0; i <= s->len;) {
    if (match_at(s, i, from)) {
      count++;
      if (out) memcpy(out + o, to->data, (size_t)to->len), o += to->len;
      if (from->len) {
        i += from->len;
        continue;
      }
    }
    if (i == s->len) break;
    if (out) out[o++] = s->data[i];
    i++;
  }
  return count;
}

tlrt_str *tlrt_str_replace(tlrt *R, const tlrt_str *s, const tlrt_str *from, const tlrt_str *to, int line, int col) {
  const int64_t max = (int64_t)1 << 40; /* as every String */
  int64_t count = replace_pass(s, from, to, NULL), grow = to->len - from->len;
  if (grow > 0 && count > (max - s->len) / grow)
    tlrt_fail(R, line, col, "replace: the result would be longer than %" PRId64 " bytes", max);
  int64_t n = s->len + count * grow;
  tlrt_str *out = tlrt_obj_new(R, sizeof *out + (size_t)n + 1, NULL); /* as tlrt_str_new */
  out->len = n;
  replace_pass(s, from, to, out->data);
  out->data[n] = '\0';
  return out;
}

tlrt_str *tlrt_str_from_int(tlrt *R, int64_t v) {
  char b[32];
  snprintf(b, sizeof b, "%" PRId64, v);
  return tlrt_str_new(R, b, -1);
}

/* ---- devices: the CPU is the only one; every known name is accepted and runs there ---- */

void tlrt_set_device(tlrt *R, const tlrt_str *name, int line, int col) {
  static const char *const known[] = {"auto", "cpu", "cuda", "metal"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(name->data, known[i]) && strlen(known[i]) == (size_t)name->len) return;
  tlrt_fail(R, line, col, "unknown device `%.*s` (Device::Auto, Device::Cpu, Device::Cuda or Device::Metal)", SHOWN(name));
}
