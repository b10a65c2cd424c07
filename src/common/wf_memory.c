/* Allocation helpers (wf_memory.h): large arrays on transparent huge pages, small
 * bookkeeping arrays whose failure ends the job, and the check that a run fits in the
 * node's free memory. */
#ifndef _DEFAULT_SOURCE /* (smpicc defines it first) */
#define _DEFAULT_SOURCE /* madvise(2), MADV_HUGEPAGE: Linux */
#endif
#include "wf_memory.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "wf_io.h"

void *wf_alloc_large(size_t bytes) {
  const size_t huge = (size_t)2 << 20;
  if (bytes < huge) return malloc(bytes ? bytes : 1);
  bytes = (bytes + huge - 1) / huge * huge;
  void *a = aligned_alloc(huge, bytes);
  if (a) madvise(a, bytes, MADV_HUGEPAGE); /* advice: failure is harmless */
  return a;
}

void *wf_alloc_small(size_t count, size_t size, const char *what) {
  void *a = calloc(count ? count : 1, size ? size : 1);
  if (!a) {
    fprintf(stderr, "wafer: error: out of memory for %s (%zu x %zu bytes): ending the job\n", what,
            count, size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return a;
}

/* A number (bytes) from the first line of `path` that starts with `key`
 * (NULL: the first line); `scale` multiplies it. -1 when absent or "max". */
static double read_figure(const char *path, const char *key, double scale) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[256];
  double v = -1;
  while (fgets(line, sizeof line, f)) {
    if (key && strncmp(line, key, strlen(key)) != 0) continue;
    char *end;
    double x = strtod(key ? line + strlen(key) : line, &end);
    if (end != (key ? line + strlen(key) : line)) v = x * scale;
    break;
  }
  fclose(f);
  return v;
}

double wf_memory_available(void) {
  double avail = read_figure("/proc/meminfo", "MemAvailable:", 1024.0);
  /* The cgroup this process sees (a container's, or a batch job's where
   * its cgroup is mounted as the root, v2 then v1): its limit less its use,
   * the page cache it could reclaim (inactive files) not counted as use. */
  double limit = read_figure("/sys/fs/cgroup/memory.max", NULL, 1);
  double used = read_figure("/sys/fs/cgroup/memory.current", NULL, 1);
  double cache = read_figure("/sys/fs/cgroup/memory.stat", "inactive_file ", 1);
  if (limit < 0) {
    limit = read_figure("/sys/fs/cgroup/memory/memory.limit_in_bytes", NULL, 1);
    used = read_figure("/sys/fs/cgroup/memory/memory.usage_in_bytes", NULL, 1);
    cache = read_figure("/sys/fs/cgroup/memory/memory.stat", "total_inactive_file ", 1);
  }
  if (limit > 0 && limit < 1e18 && used >= 0) {
    if (cache > 0) used = used > cache ? used - cache : 0;
    double room = limit > used ? limit - used : 0;
    if (avail < 0 || room < avail) avail = room;
  }
  return avail; /* -1: unknown */
}

int wf_memory_fits(MPI_Comm comm, double need, const char *what, const char *fix,
                   wf_status *st) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local, nlocal;
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &nlocal);
  double total = 0;
  MPI_Reduce(&need, &total, 1, MPI_DOUBLE, MPI_SUM, 0, node);
  MPI_Comm_free(&node);
  wf_status_clear(st);
  if (local == 0) {
    double avail = wf_memory_available();
    if (avail >= 0 && total > avail)
      wf_fail(st, WF_ERR_INPUT,
              "%s: about %.3g GB of memory needed on this node (%d rank%s, about %.3g GB "
              "each), and the node has %.3g GB free: %s",
              what, total / 1e9, nlocal, nlocal == 1 ? "" : "s", total / nlocal / 1e9,
              avail / 1e9, fix);
  }
  wf_status_agree(comm, st);
  return st->code;
}
