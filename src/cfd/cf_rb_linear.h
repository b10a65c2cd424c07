/* Linear stability of Rayleigh-Benard convection between rigid walls, the
 * reference the convection run's physics check compares with. It shares
 * nothing with cf_rb: no grid, no stencil, no time stepping.
 *
 * A normal mode w = W(z) e^{i k x + sigma t} (thermal time units, z in
 * [-1/2, 1/2]) of u_t = -grad p + Pr lap u + Ra Pr T z^, T_t = lap T + w
 * obeys (sigma - L)(sigma - Pr L) L W = -Ra Pr k^2 W, L = D^2 - k^2. With
 * W = sum_j A_j cosh(q_j z) (the modes even about the mid-plane, the least
 * stable), p_j = q_j^2 - k^2 are the roots of
 *   Pr p^3 - sigma (1 + Pr) p^2 + sigma^2 p + Ra Pr k^2 = 0,
 * and the rigid walls (W = DW = 0, T = 0 at z = +-1/2) make a 3 x 3
 * determinant vanish (Chandrasekhar 1961, Hydrodynamic and Hydromagnetic
 * Stability, ch. II, sec. 15; there with sigma = 0). The growth rate is its
 * largest real zero in sigma; the neutral curve its zero in Ra at sigma = 0:
 * its minimum, 1707.76 at k = 3.117, is the published onset. */
#ifndef CF_RB_LINEAR_H
#define CF_RB_LINEAR_H

/* The growth rate of the least stable (even) mode at Ra, Pr and horizontal
 * wavenumber k (NAN when none is found in the range searched); *q_max the
 * largest |q_j| of its vertical structure (for the discretisation's error). */
double cf_rb_growth_rate(double ra, double pr, double k, double *q_max);
/* Ra on the neutral curve at wavenumber k (NAN when none below 1e9). */
double cf_rb_neutral_ra(double k);

#endif
