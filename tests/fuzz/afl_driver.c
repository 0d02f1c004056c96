/* afl_driver.c — the AFL++ entry: `fuzz_NAME` reads one input (a file named on the
 * command line, else stdin) and runs the harness NAME on it, in AFL++'s persistent mode
 * when built with afl-clang-fast. A leak found by a harness aborts, so AFL records it
 * as a crash. Built by `make fuzz` with -DTL_FUZZ_HARNESS=tl_fuzz_NAME. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef __AFL_LOOP
#define __AFL_LOOP(n) (tl_fuzz_once++ == 0)
static int tl_fuzz_once;
#endif

#define FUZZ_MAX_INPUT (1 << 20)

/* the whole of fd (up to the limit) */
static size_t fuzz_read(int fd, uint8_t *buf) {
  size_t n = 0;
  ssize_t got;
  while (n < FUZZ_MAX_INPUT && (got = read(fd, buf + n, FUZZ_MAX_INPUT - n)) > 0) n += (size_t)got;
  return n;
}

int main(int argc, char **argv) {
  static uint8_t buf[FUZZ_MAX_INPUT];
  while (__AFL_LOOP(1000)) {
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    if (argc > 1 && !f) return 2;
    size_t n = fuzz_read(f ? fileno(f) : 0, buf);
    if (f) fclose(f);
    if (TL_FUZZ_HARNESS(buf, n) != 0) abort();
  }
  return 0;
}
