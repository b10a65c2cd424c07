/* The parts of `wafer cfd`'s wave and heat problems: the resolved deck
 * (cfd_workload.c, which also runs the heat equation), the fields' helpers
 * (cfd_fields.c) and the wave stencil's run (cfd_wave_run.c; its own parts:
 * cfd_wave_parts.h). Private to the workload; convection has its own
 * (cfd_convection.h, cfd_convection_parts.h). */
#ifndef CFD_PARTS_H
#define CFD_PARTS_H

#include <mpi.h>
#include <stdbool.h>

#include "cf_heat.h"
#include "st_mesh.h"
#include "wf_fabric.h"
#include "wf_model.h"
#include "wf_workload.h"

/* What the wave or heat run starts from: a point source (wave), the
 * slowest mode, or a Gaussian bump. */
typedef enum { CFD_INIT_SOURCE, CFD_INIT_MODE, CFD_INIT_GAUSSIAN } cfd_init;

/* The deck's [cfd] section for the wave and heat problems, resolved. */
typedef struct cfd_setup {
  int nx, ny, nz, steps, sponge, energy_every;
  int src[3], receiver_z;
  double h, v, cfl, dt, f0;
  bool free_faces;
  cfd_init init;
  wf_prec wafer_prec;
  bool sc22_kernel; /* model_counts = sc22: the model runs SC22's kernel (cf_model.h) */
  const char *kernel; /* the wave update's variant (cf_wave_use_kernel) */
} cfd_setup;

/* The initial field on the owned cells: the slowest mode of each axis's
 * boundary (the wave's free faces are Dirichlet ones), or a Gaussian bump
 * of 3 cells at the middle, or nothing (a source run). */
void cfd_initial_field(const st_mesh *m, const cfd_setup *s, const cf_bc bc[3], double *u);
/* Sum of x y over the owned cells. Collective. */
double cfd_mesh_dot(const st_mesh *m, wf_fabric *fab, const double *x, const double *y);
/* Whether every owned cell of u is finite, on every rank. Collective. */
bool cfd_all_finite(const st_mesh *m, wf_fabric *fab, const double *u);

/* problem = wave (or model_only): run, check, project and write it. */
int cfd_wave_run(wf_run *run, const cfd_setup *s, wf_status *st);

#endif
