/* The point source's balance, a check of `wafer cfd`'s wave run: while the
 * wavefield has not reached a face or the sponge, the discrete Laplacian
 * sums to zero over the mesh (a consistent stencil's coefficients add up to
 * zero), so leapfrog's sum of u follows the source alone:
 *   S_{n+1} = 2 S_n - S_{n-1} + q_n,   q_n = dt^2 v^2 r(n dt) / h^3,
 * S_n the sum of u^n over the cells, from rest (S_0 = S_{-1} = 0). The
 * reference is the wavelet's definition and this recurrence; the run's
 * sums come from its field. */
#ifndef CF_WAVE_BALANCE_H
#define CF_WAVE_BALANCE_H

#include <mpi.h>

#include "st_mesh.h"
#include "wf_error.h"
#include "wf_fabric.h"

typedef struct cf_balance {
  int steps;        /* S_1 .. S_steps are compared */
  double *sum, *abs; /* S_n and the sum of |u^n|, n = 0 .. steps */
} cf_balance;

/* Steps the balance holds for a source at `src` of an nx x ny x nz mesh
 * whose faces have a `sponge` (0: none): the field after n steps reaches
 * 4 (n - 1) cells from the source (the stencil's reach), and must stay 4
 * cells inside the faces (the stencil reads no ghost) and out of the
 * sponge. At least 1 (u^1 is the source's cell alone). */
int cf_balance_steps(const int n[3], const int src[3], int sponge);
int cf_balance_create(cf_balance *b, int steps, wf_status *st);
void cf_balance_free(cf_balance *b);
/* Record u^n (n <= steps) over the owned cells. Collective. */
void cf_balance_record(cf_balance *b, int n, const st_mesh *m, wf_fabric *fab, const double *u);
/* The largest |S_n - reference| / allowed over n = 1 .. steps (<= 1
 * agrees): a = (v dt / h)^2, the source's Ricker wavelet of peak frequency
 * f0 delayed by 1.2 / f0, cells the mesh's count. */
double cf_balance_check(const cf_balance *b, double dt, double v, double h, double f0, double a,
                        double cells);

#endif
