/* disk_entry.h — files of a private cache of code (cc's kernels, OpenCL binaries):
 * keys, the private directory, checked entries (<key>.EXT beside <key>.sum: "tl-sum
 * SIZE CHECKSUM KEY"), locks, careful writes.
 * in: paths and bytes; out: verdicts, files, locks. */
#ifndef TL_RUNTIME_DISK_ENTRY_H
#define TL_RUNTIME_DISK_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/error.h"

/* 128-bit keys: two independent 64-bit streams, each finalized */
typedef struct {
  uint64_t a, b, len;
} tl_hash128;
void tl_hash128_init(tl_hash128 *h);
void tl_hash128_bytes(tl_hash128 *h, const void *p, size_t n);
void tl_hash128_str(tl_hash128 *h, const char *s); /* with its terminator */
void tl_hash128_final(const tl_hash128 *h, uint64_t out[2]);

/* the cache directory the environment names (TL_CACHE_DIR, else $XDG_CACHE_HOME/tl,
 * else $HOME/.cache/tl) into *dir (malloc'd; NULL when none); TL_ERR_NOMEM */
tl_status tl_entry_default_dir(char **dir);
/* made if missing (0700); ours, a directory, private (a wrong mode of ours is repaired:
 * *repaired = 1, emptied when others could write it), writable; else TL_ERR_CACHE
 * saying why, the directory called `what` */
tl_status tl_entry_check_private_dir(const char *dir, const char *what, int *repaired, tl_error *err);
/* removes the entries (32 hex digits and a dot) of dir */
void tl_entry_purge(const char *dir);

/* why an entry was refused */
typedef enum {
  TL_ENTRY_OK,
  TL_ENTRY_MISSING,
  TL_ENTRY_LINK,    /* a symbolic link or not a regular file */
  TL_ENTRY_FOREIGN, /* another user's, or writable by others */
  TL_ENTRY_SIZE,    /* truncated or grown */
  TL_ENTRY_SUM,     /* the checksum differs, or the .sum is missing, bad or for another key */
  TL_ENTRY_LOAD     /* verified, but its user could not load it */
} tl_entry_state;

/* opens a regular file of ours that others cannot write (checked after the open), or
 * -1 with *why */
int tl_entry_open_checked(const char *path, struct stat *st, tl_entry_state *why);
/* does the data file match the size and checksum its .sum records for its key? */
tl_entry_state tl_entry_verify(const char *data, const char *sum);
/* checksum and size of a freshly written private entry (made 0700 first): 0, or -1 */
int tl_entry_checksum_file(const char *path, uint64_t *sum, uint64_t *size);
/* writes data's .sum through the private tmp_sum and a rename: 0, or -1 */
int tl_entry_write_sum(const char *tmp_sum, const char *sum, const char *data, uint64_t size, uint64_t checksum);

/* a new file (never follows or reuses one) holding the bytes: 0, or -1 with errno */
int tl_entry_write_new_file(const char *path, const void *data, size_t n, mode_t mode);
int tl_entry_write_all(int fd, const void *data, size_t n);

/* the entry's lock file, held (flock): the fd, or -1 (the caller goes on unlocked:
 * private names and atomic renames keep that correct, only perhaps built twice) */
int tl_entry_take_lock(const char *lock);
void tl_entry_drop_lock(int fd);

/* A blob: bytes a driver made from a key (an OpenCL program's binary, a kernel's PTX),
 * kept as <dir>/<key>.EXT beside <key>.sum, checked as every entry is. */
typedef struct {
  char base[4096], data[4200], sum[4200], lock[4200];
} tl_blob_paths;
/* the paths of key's blob (ext: "clbin", "ptx"); false when dir is too long */
bool tl_blob_paths_of(const char *dir, const uint64_t key[2], const char *ext, tl_blob_paths *p);
/* the verified blob's bytes (malloc'd), or NULL with *why */
unsigned char *tl_blob_read(const tl_blob_paths *p, size_t *len, tl_entry_state *why);
/* writes the blob (private names, the .sum first, the data renamed last): true when
 * stored; a failure leaves no entry and is not an error */
bool tl_blob_store(const tl_blob_paths *p, const void *data, size_t len);

#endif
