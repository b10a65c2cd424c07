/* The SC22 acoustic wave stencil: u_tt = v^2 lap(u) + s, 3D, isotropic,
 * 8th order in space (the 25-point Laplacian: 4 neighbours each way on
 * each axis), 2nd order in time (leapfrog). On the PE grid as st_mesh lays a
 * mesh: x and y over the PEs, z in PE memory, a 4-column halo.
 *
 * Boundaries: free (pressure release: u = 0 on the faces half a cell
 * outside the mesh, by odd reflection, which keeps the discrete operator
 * symmetric so leapfrog conserves its energy exactly), with an optional
 * absorbing sponge (Cerjan et al. 1985: u damped by a Gaussian taper in a
 * layer of cells inside every face). */
#ifndef CF_WAVE_H
#define CF_WAVE_H

#include <stdbool.h>

#include "st_mesh.h"
#include "wf_error.h"
#include "wf_halo.h"

#define CF_RADIUS 4 /* neighbours each way: the halo width */

/* Second-derivative coefficients, 8th order: c0 for the cell, ck for the
 * cells k away on either side (units of 1 / h^2). */
extern const double cf_c8[CF_RADIUS + 1];

/* The symbol of the 1D operator at wavenumber theta (radians a cell):
 * -sum ck e^{ik theta}, what it gives for sin(theta (i + 1/2)) over h^2. At
 * theta = pi it is largest: leapfrog is stable for (v dt / h)^2 <= 4 / (3
 * cf_symbol(pi)). */
double cf_symbol(double theta);
/* The largest stable step, h / v times 2 / sqrt(3 cf_symbol(pi)). */
double cf_dt_max(double h, double v);

struct cf_pencil; /* cf_wave_parts.h */

typedef struct cf_wave {
  const st_mesh *m;
  /* The pencil update's variant (cf_wave_use_kernel) and its name. */
  void (*sweep)(int rows, bool ends, const struct cf_pencil *p);
  const char *kernel;
  wf_halo halo;
  bool edge[4];                     /* this rank holds the mesh's -x, +x, -y, +y face */
  double *damp_x, *damp_y, *damp_z; /* sponge tapers per owned index (NULL: none) */
  /* The array the last step read as cur still owes its sponge taper: the
   * next step applies it as it reads that array as prev (one sweep less), or
   * cf_wave_settle does. */
  bool lagged;
} cf_wave;

/* The halo (and the global faces); a sponge of `sponge` cells (0: free
 * faces). The mesh: a CF_RADIUS-column halo and padded columns with
 * CF_RADIUS ghost cells (st_mesh_create_halo, st_mesh_pad_columns). Errors
 * (input): rank blocks thinner than the halo. */
int cf_wave_create(cf_wave *w, const st_mesh *m, wf_fabric *fab, int sponge, wf_status *st);
void cf_wave_free(cf_wave *w);

/* The variant of the update a step runs: "avx512" (8 cells a vector, a
 * pair of rows at once), "avx2" (4 cells a vector, a row at a time),
 * "generic" (avx2's code for any CPU), or "auto": the first of these this
 * CPU runs (what cf_wave_create picks). All give the same bits. Error
 * (input): a variant this CPU or build cannot run. */
int cf_wave_use_kernel(cf_wave *w, const char *kernel, wf_status *st);
/* Whether cf_wave_use_kernel would take `kernel` on this rank's CPU. */
bool cf_wave_kernel_runs(const char *kernel);

/* One step: prev <- 2 cur - prev + a lap(cur), a = (v dt / h)^2, then the
 * sponge on both: on prev at once, on cur when the next step reads it as its
 * prev (the caller swaps the two) or at cf_wave_settle. Exchanges cur's halo
 * (and reflects it at the faces, and into its columns' z ghosts). */
void cf_wave_step(cf_wave *w, double *cur, double *prev, double a);
/* Applies the sponge the last step owes its cur (pass that array) before
 * anything else reads it, its halo included; nothing without a sponge or
 * when already done. Collective. */
void cf_wave_settle(cf_wave *w, double *x);
/* The sum over owned cells of y lap(x) (times h^2); x's halo must be
 * current (as after a step that read it, and after cf_wave_settle). */
double cf_wave_dot_lap(const cf_wave *w, const double *x, const double *y);

#endif
