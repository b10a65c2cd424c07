/* The explicit heat equation, u_t = kappa lap(u): the 7-point Laplacian and
 * forward Euler, on the mesh as st_mesh lays it (x, y over the PEs, z in PE
 * memory, a 1-column halo). Each axis has its own boundary: Dirichlet (u =
 * 0 half a cell outside: odd reflection), Neumann (no flux: even
 * reflection), periodic, or mixed (Dirichlet at the low face, Neumann at
 * the high). */
#ifndef CF_HEAT_H
#define CF_HEAT_H

#include <stdbool.h>

#include "st_mesh.h"
#include "wf_error.h"
#include "wf_halo.h"

typedef enum { CF_DIRICHLET, CF_NEUMANN, CF_PERIODIC, CF_MIXED } cf_bc;

typedef struct cf_heat {
  const st_mesh *m;
  wf_halo halo;
  cf_bc bc[3];
  bool edge[4]; /* this rank holds the mesh's -x, +x, -y, +y face */
} cf_heat;

int cf_heat_create(cf_heat *h, const st_mesh *m, wf_fabric *fab, const cf_bc bc[3], wf_status *st);
void cf_heat_free(cf_heat *h);

/* next = cur + r lap(cur), r = kappa dt / h^2 (stable for r <= 1/6).
 * Exchanges cur's halo and fills the faces' ghosts. */
void cf_heat_step(cf_heat *h, double *cur, double *next, double r);

/* The slowest-decaying non-constant mode of an axis of n cells with
 * boundary bc: its value at cell g, and its wavenumber in radians a cell
 * (the 7-point operator gives it 2 - 2 cos(theta) / h^2 per axis). */
double cf_heat_mode(cf_bc bc, int g, int n);
double cf_heat_theta(cf_bc bc, int n);

#endif
