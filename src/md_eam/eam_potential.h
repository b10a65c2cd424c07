/* EAM potentials read as LAMMPS's pair_style eam (DYNAMO funcfl, one
 * element) and eam/alloy (DYNAMO setfl, several elements) read them, so that
 * energies and forces agree with LAMMPS to round-off:
 *  - funcfl: the tables are re-gridded as LAMMPS does (4-point Lagrange onto
 *    nr - 1 and nrho - 1 points) and the effective charge Z(r) becomes
 *    r phi(r) = 27.2 * 0.529 * Z(r)^2 (LAMMPS's Hartree and Bohr constants);
 *  - setfl: the tables are used as given (r phi(r) for each element pair);
 *  - every table becomes LAMMPS's cubic spline (7 coefficients per node).
 * Units: metal (Angstrom, eV, amu). */
#ifndef EAM_POTENTIAL_H
#define EAM_POTENTIAL_H

#include <mpi.h>
#include <stdbool.h>

#include "wf_error.h"

#define EAM_MAX_ELEMENTS 8
/* Points of a table: real files have up to about 10^4; more is refused. */
#define EAM_MAX_POINTS 1000000

/* A table on a uniform grid, as a spline. Nodes are 1-based like LAMMPS's:
 * node m (1 <= m <= n) sits at x = (m - 1) * delta; c[m][0..6] are the
 * coefficients (c[m][6] is the value, c[m][0..2] the derivative's). */
typedef struct eam_spline {
  int n;
  double delta, inv_delta;
  double (*c)[7];
} eam_spline;

typedef struct eam_potential {
  char path[512];
  int nelements;
  char element[EAM_MAX_ELEMENTS][8]; /* funcfl: the symbol of its atomic number */
  double mass[EAM_MAX_ELEMENTS];
  double lattice_a[EAM_MAX_ELEMENTS];     /* the file's lattice constant (A) */
  char lattice[EAM_MAX_ELEMENTS][8];      /* and lattice type, lower case: "fcc", "bcc" */
  int nrho, nr;
  double drho, dr, cut, rhomax;
  eam_spline frho[EAM_MAX_ELEMENTS]; /* embedding energy F(rho) of element i */
  eam_spline rhor[EAM_MAX_ELEMENTS]; /* density rho(r) contributed by element i */
  eam_spline z2r[EAM_MAX_ELEMENTS * (EAM_MAX_ELEMENTS + 1) / 2]; /* r phi(r), pair (i >= j) */
} eam_potential;

typedef enum { EAM_FUNCFL, EAM_SETFL } eam_format;

/* Parse potential text (`name` for messages: "name:line: ..."). */
int eam_parse(eam_potential *p, const char *text, const char *name, eam_format format,
              wf_status *st);
/* Read a file; the format from the name: *.eam.alloy or *.alloy is setfl,
 * other *.eam files funcfl. */
int eam_read(eam_potential *p, const char *path, wf_status *st);
/* The same, read by rank 0 and broadcast. Collective. */
int eam_read_bcast(eam_potential *p, const char *path, MPI_Comm comm, wf_status *st);
void eam_free(eam_potential *p);

/* Index of an element by name, or -1. */
int eam_element(const eam_potential *p, const char *name);
/* Table index of the pair (i, j), symmetric. */
static inline int eam_pair(int i, int j) { return i >= j ? i * (i + 1) / 2 + j : j * (j + 1) / 2 + i; }

/* The spline at x: value, and its derivative in *d. Beyond the table the
 * last interval is extrapolated no further (as LAMMPS clamps p to 1). */
static inline double eam_eval(const eam_spline *s, double x, double *d) {
  double p = x * s->inv_delta + 1.0;
  int m = p < s->n - 1 ? (int)p : s->n - 1; /* compared before the cast: any x is safe */
  m = m > 1 ? m : 1;
  p -= m;
  p = p < 1.0 ? p : 1.0;
  const double *c = s->c[m];
  *d = (c[0] * p + c[1]) * p + c[2];
  return ((c[3] * p + c[4]) * p + c[5]) * p + c[6];
}

/* Embedding energy F(rho) of element i and F'(rho): past rhomax, linear
 * continuation (LAMMPS's energy-conserving extension). */
static inline double eam_embed(const eam_potential *p, int i, double rho, double *fprime) {
  double f = eam_eval(&p->frho[i], rho, fprime);
  if (rho > p->rhomax) f += *fprime * (rho - p->rhomax);
  return f;
}

#endif
