/* Failure injection for the tests (wf_fault.h): whether WAFER_FAULT names this site and rank. */
#include "wf_fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool wf_fault(const char *site, MPI_Comm comm) {
  const char *spec = getenv("WAFER_FAULT");
  if (!spec) return false;
  const char *at = strchr(spec, '@');
  size_t len = strlen(site);
  if (!at || (size_t)(at - spec) != len || strncmp(spec, site, len) != 0) return false;
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (atoi(at + 1) != rank) return false;
  fprintf(stderr, "wafer: WAFER_FAULT: injecting a failure at %s on rank %d\n", site, rank);
  return true;
}
