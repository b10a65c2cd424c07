/* The stencil workload's test problems on the unit 7-point operator (st_op.h):
 * right-hand sides, a manufactured solution and the exact eigenvalues the
 * checks compare with. */
#ifndef ST_PROBLEM_H
#define ST_PROBLEM_H

#include <stdbool.h>

#include "st_mesh.h"

/* b on the owned cells: "ones", "random" (uniform in [-1, 1), from `seed`
 * and each cell's global index: the same on any rank count) or
 * "manufactured" (and the solution into exact). */
void st_problem_rhs(const st_mesh *m, const bool periodic[3], const char *rhs, long seed, double *b,
                    double *exact);
/* The two largest distinct eigenvalues of the unit 7-point operator on an
 * n[0] x n[1] x n[2] mesh, each axis periodic or Dirichlet. */
void st_problem_lambda(const int n[3], const bool periodic[3], double *first, double *second);

#endif
