/* The run's HDF5 output in the H5MD layout (h5md.nongnu.org, version 1.1),
 * readable by h5py and MDAnalysis (tests/e2e/eam.sh output), string
 * attributes variable-length, units as the H5MD units module spells them:
 *   /h5md                            version, author, creator
 *   /particles/all/box               dimension 3, periodic, edges: step, time, value [frame][3][3] (A)
 *   /particles/all/{id,species}      per atom, by id (time-independent)
 *   /particles/all/position          step, time (ps), value [frame][atom][3] (A)
 *   /particles/all/velocity          likewise (Angstrom ps-1)
 *   /observables/<name>              step, time, value per frame: temperature (K),
 *                                    potential, kinetic and total energy (eV), pressure (bar)
 * plus the standard run attributes on the root (deck, ranks, PE grid). Atoms
 * are stored in id order in every frame. Frames are gathered on rank 0 and
 * written from there (collective calls, empty selections elsewhere). */
#ifndef MD_H5MD_H
#define MD_H5MD_H

#include "md_lammps.h"
#include "md_sim.h"
#include "wf_h5.h"
#include "wf_workload.h"

#define MD_H5MD_NOBS 5 /* temperature, potential, kinetic and total energy, pressure */

typedef struct md_h5md {
  wf_h5file f;
  long long natoms, nframes, frame;
  hid_t pos[3], vel[3], edges[3]; /* step, time, value datasets */
  hid_t obs[MD_H5MD_NOBS][3];
} md_h5md;

/* Create the file and its fixed parts for up to `nframes` trajectory
 * frames. Collective. */
int md_h5md_create(md_h5md *h, const wf_run *run, const char *path, const md_sim *sim,
                   long long nframes, wf_status *st);
/* Append the current positions, velocities, box and thermo quantities: the
 * time series grow by one frame and the file is flushed, so that after a
 * kill its temporary NAME.part.XXXXXX holds every frame written, readable. Collective. */
int md_h5md_frame(md_h5md *h, const md_sim *sim, wf_status *st);
/* Close and rename. A run that ended early (a blow-up, a signal) keeps the
 * frames written so far. Collective. */
int md_h5md_close(md_h5md *h, wf_status *st);
/* Drop the file (error path). Collective. */
void md_h5md_discard(md_h5md *h);

#endif
