/* The atoms a rank holds: its own (0 .. nlocal-1), then ghost copies of
 * neighbours' atoms (nlocal .. nlocal+nghost-1) that its own atoms interact
 * with. Positions, velocities and forces are xyz triples (array of structs:
 * a neighbour's three coordinates are one cache line away, not three).
 * Metal units: Angstrom, ps, eV, amu. */
#ifndef MD_ATOMS_H
#define MD_ATOMS_H

#include <stdint.h>

#include "wf_error.h"

typedef double md_vec[3];

typedef struct md_atoms {
  int nlocal, nghost, cap;
  int64_t *id;     /* 1-based, global, unique; ghosts carry their owner's id */
  int *type;       /* species: index into the potential's elements */
  md_vec *x, *v, *f;
  double *rho, *fp; /* EAM host density and F'(rho) */
} md_atoms;

void md_atoms_init(md_atoms *a);
void md_atoms_free(md_atoms *a);
/* *p reallocated to `bytes`, keeping its contents: 0, or -1 with *p as it
 * was (out of memory). */
int md_grow(void **p, size_t bytes);
/* Room for at least n atoms (own + ghost); keeps the contents. */
int md_atoms_reserve(md_atoms *a, int n, wf_status *st);
/* Append an owned atom (ghosts must be cleared first). */
int md_atoms_add(md_atoms *a, int64_t id, int type, const double x[3], const double v[3],
                 wf_status *st);
/* Copy atom `from` over atom `to` (id, type, x, v). */
void md_atoms_copy(md_atoms *a, int to, int from);

#endif
