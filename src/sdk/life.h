/* `wafer life`: the SDK's game of life example on the PE grid. */
#ifndef LIFE_H
#define LIFE_H

#include <stdbool.h>
#include <stdint.h>

#include "wf_workload.h"

extern const wf_workload wf_life_workload;

typedef enum { LIFE_RANDOM, LIFE_GLIDER } life_pattern;

/* The board: width x height cells, periodic or dead beyond its edges, and
 * its first generation. */
typedef struct life_board {
  long long width, height;
  bool periodic;
  life_pattern pattern;
  double density; /* LIFE_RANDOM: the chance a cell starts alive */
  uint64_t seed;
  long generations;
} life_board;

/* Whether cell (x, y) is alive in the first generation: the problem's
 * definition, which the kernel and the serial reference both take. The
 * glider (LIFE_GLIDER) sits with its 3 x 3 box's corner at (1, 1) and
 * travels one cell in +x and +y every four generations. */
static inline bool life_glider_cell(long long x, long long y) {
  return (x == 1 && y == 0) || (x == 2 && y == 1) || (y == 2 && x >= 0 && x <= 2);
}
bool life_initial(const life_board *b, long long x, long long y);

/* The serial reference (life_check.c): the whole board on one rank, every
 * cell's eight neighbours counted by index arithmetic, generation after
 * generation; the digest (sdk_grid.h) of the last. Polls wf_signal_stop()
 * every 64 rows; *stopped when it asked to stop. */
uint64_t life_reference_digest(const void *board, bool *stopped);

#endif
