/* The initial state of an MD run: atoms on an fcc/bcc lattice or read from a
 * LAMMPS data file (atom_style atomic), and Maxwell-Boltzmann velocities;
 * and the LAMMPS data file writer. Species are indices into the potential's
 * elements; a data file's type t is species t-1. */
#ifndef MD_SYSTEM_H
#define MD_SYSTEM_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "md_atoms.h"
#include "md_domain.h"
#include "wf_error.h"

/* LAMMPS metal units: Boltzmann's constant (eV/K), m v^2 -> eV, and
 * eV/A^3 -> bar; the same constants as LAMMPS's update.cpp, so that
 * temperatures and pressures agree to round-off. */
#define MD_BOLTZ 8.617343e-5
#define MD_MVV2E 1.0364269e-4
#define MD_NKTV2P 1.6021765e6

#define MD_MAX_SPECIES 8

typedef struct md_lattice {
  char kind[8]; /* "fcc" or "bcc" */
  double a;     /* lattice constant, A */
  int cells[3];
  int nspecies;
  int species[MD_MAX_SPECIES];     /* potential element indices */
  double fraction[MD_MAX_SPECIES]; /* share of each, summing to 1 */
  uint64_t seed;                   /* draws each atom's species */
} md_lattice;

/* The lattice's box: cells x a, from the origin. */
md_box md_lattice_box(const md_lattice *l);
/* The atoms of the lattice this rank owns (ids by site, the same on any
 * rank count). */
int md_lattice_fill(const md_lattice *l, const md_domain *d, md_atoms *a, wf_status *st);

/* A LAMMPS data file, parsed whole (every rank parses the broadcast text). */
typedef struct md_data {
  md_box box;
  long long natoms;
  int ntypes;
  int64_t *id;
  int *type; /* 0-based, as in the file minus one */
  md_vec *x, *v;
  bool has_velocities;
} md_data;

/* Errors name the file and line. */
int md_data_parse(md_data *data, const char *text, const char *name, wf_status *st);
void md_data_free(md_data *data);
/* Keep the atoms this rank owns; type t becomes species type_species[t]. */
int md_data_fill(const md_data *data, const int *type_species, const md_domain *d, md_atoms *a,
                 wf_status *st);

/* Velocities from a Maxwell-Boltzmann draw at `temperature` (K): Gaussian
 * components drawn per atom id from `seed`, total momentum removed, scaled
 * to exactly `temperature` with 3N - 3 degrees of freedom (as LAMMPS's
 * `velocity create`). Collective. */
void md_velocity_create(md_atoms *a, const double *mass, double temperature, uint64_t seed,
                        MPI_Comm comm);

/* Rank 0 receives (id, v[0], v[1], v[2]) rows of every rank's owned atoms,
 * sorted by id (malloc'ed; NULL elsewhere). Collective. */
int md_gather_vec(const md_atoms *a, const md_vec *v, MPI_Comm comm, double **rows,
                  long long *n, wf_status *st);

/* Write the owned atoms of all ranks as a LAMMPS data file (by id, full
 * precision, with Masses and Velocities). Rank 0 writes, atomically.
 * Collective. */
int md_data_write(const char *path, const char *title, const md_box *box, const md_atoms *a,
                  int nspecies, const double *mass, MPI_Comm comm, wf_status *st);

#endif
