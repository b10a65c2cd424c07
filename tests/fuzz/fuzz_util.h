/* Shared by the libFuzzer harnesses: the input as a NUL-terminated string. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* malloc'ed copy of data[0..size) with a NUL after it (NULL if out of memory). */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return NULL;
  memcpy(text, data, size);
  text[size] = '\0';
  return text;
}

/* A failed invariant: abort, so that libFuzzer records the input. */
#define FUZZ_ASSERT(cond)                                                                  \
  do {                                                                                     \
    if (!(cond)) __builtin_trap();                                                         \
  } while (0)

#endif
