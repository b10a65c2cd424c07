/* The wave stencil checked against coefficients it does not share.
 *
 * The reference: the central second difference of order 2r, whose
 * coefficients solve the Taylor conditions sum_k c_k k^2 = 1, sum_k c_k
 * k^2m = 0 (m = 2..r), in closed form (Fornberg 1988):
 *   c_k = 2 (-1)^(k+1) (r!)^2 / (k^2 (r - k)! (r + k)!),  c_0 = -2 sum c_k,
 * computed here from factorials, never from cf_c8. A standing mode
 * prod_d sin(theta_d (i_d + 1/2)) with free faces is an eigenvector of the
 * discrete operator with eigenvalue -sum_d sigma(theta_d) / h^2, sigma the
 * symbol below. */
#ifndef CF_WAVE_PROBE_H
#define CF_WAVE_PROBE_H

#include "st_mesh.h"
#include "wf_error.h"
#include "wf_fabric.h"

/* c_k of the order-2r central second difference (k = 0..r). */
double cf_reference_coeff(int r, int k);
/* -sum_k c_k e^{ik theta} over k = -r..r, for the coefficients above. */
double cf_reference_symbol(int r, double theta);

/* One step of the run's own stencil (cf_wave_step: this rank grid, its halo,
 * the faces' reflections, the vector and scalar paths) on a standing mode
 * with free faces, from rest, against (1 - a lambda) times the mode, lambda
 * from cf_reference_symbol. *worst: the largest error over the cells as a
 * fraction of what round-off allows (docs/cfd.md): at most 1 when the
 * stencil is right. `cur` and `prev` are the run's fields, overwritten; the
 * fabric's counters are left as they were. Collective. */
int cf_wave_probe(const st_mesh *m, wf_fabric *fab, double a, double *cur, double *prev,
                  double *worst, wf_status *st);

#endif
