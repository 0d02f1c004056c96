/* rt_sys.h — the run-time library's system calls (rt_sys.c, LANGUAGE.md §10):
 * assert, System::, Env::, the program's arguments, File::, and the String methods.
 * Every failure is a run-time error at (line, col); none returns a sentinel. Strings
 * in are borrowed, strings out are new (owned by the caller). Positions in a string
 * count bytes, as `len()` does. */
#ifndef TL_LANG_RT_SYS_H
#define TL_LANG_RT_SYS_H

#include "lang/rt/rt.h"

TL_API void tlrt_assert(tlrt *R, bool cond, const tlrt_str *msg, int line, int col);
TL_API double tlrt_sys_time(tlrt *R);                                /* seconds since the Unix epoch */
TL_API void tlrt_sys_sleep(tlrt *R, int64_t ms, int line, int col);   /* ms < 0: an error */
/* ends the program with `code` (0..255): unwinds like a run-time error, without one */
TL_API _Noreturn void tlrt_sys_exit(tlrt *R, int64_t code, int line, int col);
TL_API int64_t tlrt_sys_memory_mb(tlrt *R);                           /* resident set, MiB */
TL_API int64_t tlrt_sys_memory_bytes(tlrt *R);                        /* resident set, bytes */
TL_API tlrt_str *tlrt_env_get(tlrt *R, const tlrt_str *name);         /* "" when unset */
TL_API void tlrt_env_set(tlrt *R, const tlrt_str *name, const tlrt_str *value, int line, int col);
TL_API int64_t tlrt_args_count(tlrt *R);
TL_API tlrt_str *tlrt_args_get(tlrt *R, int64_t i, int line, int col);
TL_API tlrt_str *tlrt_file_read(tlrt *R, const tlrt_str *path, int line, int col);
TL_API void tlrt_file_write(tlrt *R, const tlrt_str *path, const tlrt_str *text, int line, int col);
/* File::write (the seed language's): write_string, true when written, false on failure */
TL_API bool tlrt_file_write_ok(tlrt *R, const tlrt_str *path, const tlrt_str *text, int line, int col);
TL_API bool tlrt_file_exists(tlrt *R, const tlrt_str *path);
TL_API void tlrt_file_append(tlrt *R, const tlrt_str *path, const tlrt_str *text, int line, int col);
TL_API void tlrt_file_check_handle(tlrt *R, const tlrt_str *path, const tlrt_str *mode, const tlrt_str *op, int line, int col);
TL_API bool tlrt_path_is_dir(tlrt *R, const tlrt_str *path);
/* rt_regex.c: Regex::check (does the pattern compile), Regex::matches (a match anywhere
 * in text), Regex::replace_all (every match replaced); a bad pattern is a run-time error */
TL_API bool tlrt_regex_check(tlrt *R, const tlrt_str *pat);
TL_API bool tlrt_regex_matches(tlrt *R, const tlrt_str *pat, const tlrt_str *text, int line, int col);
TL_API tlrt_str *tlrt_regex_replace_all(tlrt *R, const tlrt_str *pat, const tlrt_str *text, const tlrt_str *rep, int line, int col);
TL_API bool tlrt_path_is_file(tlrt *R, const tlrt_str *path);
TL_API uint32_t tlrt_str_char_at(tlrt *R, const tlrt_str *s, int64_t i, int line, int col);
TL_API bool tlrt_str_contains(tlrt *R, const tlrt_str *s, const tlrt_str *sub);
TL_API tlrt_str *tlrt_str_substring(tlrt *R, const tlrt_str *s, int64_t start, int64_t len, int line, int col);
TL_API int64_t tlrt_str_to_i64(tlrt *R, const tlrt_str *s, int line, int col);
TL_API float tlrt_str_to_f32(tlrt *R, const tlrt_str *s, int line, int col);
TL_API tlrt_str *tlrt_str_from_int(tlrt *R, int64_t v);
/* is_empty, trim (ASCII whitespace), to_uppercase / to_lowercase (ASCII letters; other bytes
 * kept), starts_with, ends_with, replace (Rust's, every match left to right) */
TL_API tlrt_str *tlrt_str_trim(tlrt *R, const tlrt_str *s);
TL_API bool tlrt_str_is_empty(tlrt *R, const tlrt_str *s);
TL_API tlrt_str *tlrt_str_to_upper(tlrt *R, const tlrt_str *s);
TL_API tlrt_str *tlrt_str_to_lower(tlrt *R, const tlrt_str *s);
TL_API bool tlrt_str_starts_with(tlrt *R, const tlrt_str *s, const tlrt_str *p);
TL_API bool tlrt_str_ends_with(tlrt *R, const tlrt_str *s, const tlrt_str *p);
TL_API tlrt_str *tlrt_str_replace(tlrt *R, const tlrt_str *s, const tlrt_str *from, const tlrt_str *to, int line, int col);
/* Param::set_device(d): the CPU runs everything; a known device name is accepted */
TL_API void tlrt_set_device(tlrt *R, const tlrt_str *name, int line, int col);

#endif
