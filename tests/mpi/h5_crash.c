/* Writes a field, then dies before closing the file, as a crashed run would.
 * tests/e2e/h5_crash.sh checks that nothing appears under the final name. */
#include <stdlib.h>

#include "wf_decomp.h"
#include "wf_h5.h"
#include "wf_io.h"

int main(int argc, char **argv) {
  wf_mpi_io_prefer_romio();
  MPI_Init(&argc, &argv);
  if (argc < 2) return 2;
  wf_status st;
  wf_decomp dc;
  if (wf_decomp_create(&dc, MPI_COMM_WORLD, 16, 16, 0, 0, &st) != WF_OK) return 2;
  double *v = calloc((size_t)dc.nx * dc.ny, sizeof *v);
  unsigned long long g[2] = {16, 16}, o[2] = {dc.y0, dc.x0}, c[2] = {dc.ny, dc.nx};
  wf_h5_block b = {.ndim = 2, .global = g, .offset = o, .count = c};
  wf_h5file f;
  if (wf_h5_create(&f, MPI_COMM_WORLD, argv[1], &st) != WF_OK) return 1;
  wf_h5_write(&f, "field", WF_F64, &b, v, true, &st);
  MPI_Barrier(MPI_COMM_WORLD);
  abort(); /* crash with the file open */
}
