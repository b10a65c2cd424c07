/* One EAM simulation on this rank (md_sim.h): the velocity Verlet step with an optional
 * Berendsen thermostat, re-neighbouring when the lists go stale, and the thermo quantities. */
#include "md_sim.h"

#include <math.h>
#include <string.h>

#include "wf_io.h"

/* Atoms back into the box and onto their owners, sorted, ghosts rebuilt,
 * lists built: LAMMPS's pbc + exchange + borders + neighbor->build. */
static int reneighbor(md_sim *s, wf_status *st) {
  double t0 = MPI_Wtime();
  if (md_domain_migrate(&s->dom, &s->atoms, st) != WF_OK ||
      md_neigh_sort(&s->nl, &s->dom, &s->atoms, st) != WF_OK ||
      md_domain_borders(&s->dom, &s->atoms, st) != WF_OK ||
      md_neigh_build(&s->nl, &s->dom, &s->atoms, st) != WF_OK)
    return st->code;
  eam_work_reserve(&s->work, &s->nl, s->atoms.nlocal, st);
  wf_status_agree(s->dom.comm, st);
  if (st->code != WF_OK) return st->code;
  s->last_build = s->step;
  s->seconds_neigh += MPI_Wtime() - t0;
  return WF_OK;
}

static void compute_forces(md_sim *s) {
  double t0 = MPI_Wtime();
  eam_compute(s->pot, &s->nl, &s->dom, &s->atoms, &s->work, &s->sums);
  s->seconds_force += MPI_Wtime() - t0;
}

/* A restart between list builds: the lists were just built where the run
 * last built them; the atoms move on to where they were at the step (every
 * owned atom has its position in r), their ghosts with them. */
static int resume_positions(md_sim *s, const md_resume *r, wf_status *st) {
  md_atoms *a = &s->atoms;
  int rc = WF_OK;
  for (int i = 0; i < a->nlocal && rc == WF_OK; i++) {
    const double *at = md_resume_position(r, a->id[i]);
    if (at) memcpy(a->x[i], at, sizeof(md_vec));
    else
      rc = wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom %lld has moved to another rank's "
                   "region since its last list build's positions placed it", r->path,
                   (long long)a->id[i]);
  }
  wf_status_agree(s->dom.comm, st);
  if (st->code != WF_OK) return st->code;
  md_domain_forward_x(&s->dom, a);
  s->last_build = r->last_build;
  return WF_OK;
}

int md_sim_start(md_sim *s, const md_params *par, const eam_potential *pot, md_atoms *atoms,
                 const md_domain *dom, long long step, const md_resume *resume, wf_status *st) {
  memset(s, 0, sizeof *s);
  s->par = *par;
  s->work.kernel = par->kernel ? par->kernel : eam_simd_pick(NULL);
  s->pot = pot;
  for (int e = 0; e < pot->nelements; e++) s->mass[e] = pot->mass[e];
  s->dom = *dom;
  s->atoms = *atoms;
  md_atoms_init(atoms);
  /* a rank may own no atom: its arrays must still exist */
  if (md_atoms_reserve(&s->atoms, 1, st) != WF_OK) return st->code;
  s->step = step;
  long long n = s->atoms.nlocal;
  MPI_Allreduce(&n, &s->natoms, 1, MPI_LONG_LONG, MPI_SUM, s->dom.comm);
  md_neigh_init(&s->nl, pot->cut, par->skin, par->overlap);
  if (reneighbor(s, st) != WF_OK) return st->code;
  if (resume && resume->last_build != step && resume_positions(s, resume, st) != WF_OK)
    return st->code;
  compute_forces(s);
  return WF_OK;
}

void md_sim_free(md_sim *s) {
  eam_work_free(&s->work);
  md_neigh_free(&s->nl);
  md_atoms_free(&s->atoms);
  md_domain_free(&s->dom);
}

/* v += dt/2 F / m in LAMMPS's units and order of operations (fix nve). */
static void half_kick(md_sim *s) {
  const double dtf = 0.5 * s->par.dt * (1.0 / MD_MVV2E);
  md_atoms *a = &s->atoms;
  for (int i = 0; i < a->nlocal; i++) {
    const double dtfm = dtf / s->mass[a->type[i]];
    for (int c = 0; c < 3; c++) a->v[i][c] += dtfm * a->f[i][c];
  }
}

static void berendsen(md_sim *s) {
  md_thermo_row t = md_sim_thermo(s);
  if (!(t.temp > 0)) return;
  double lambda = sqrt(1.0 + s->par.dt / s->par.berendsen_damp * (s->par.berendsen_t / t.temp - 1.0));
  md_atoms *a = &s->atoms;
  for (int i = 0; i < a->nlocal; i++)
    for (int c = 0; c < 3; c++) a->v[i][c] *= lambda;
}

int md_sim_step(md_sim *s, bool rebuild, wf_status *st) {
  md_atoms *a = &s->atoms;
  half_kick(s);
  for (int i = 0; i < a->nlocal; i++)
    for (int c = 0; c < 3; c++) a->x[i][c] += s->par.dt * a->v[i][c];
  s->step++;
  if (rebuild ||
      (s->step - s->last_build >= s->par.neigh_delay && md_neigh_stale(&s->nl, a, s->dom.fab))) {
    if (reneighbor(s, st) != WF_OK) {
      if (st->code == WF_ERR_INPUT) { /* overlapping atoms, mid-run: not the input's fault */
        st->code = WF_ERR_RUNTIME;
        wf_wrap(st, "the run has blown up (timestep too large?)");
      }
      return st->code;
    }
  } else {
    double t0 = MPI_Wtime();
    md_domain_forward_x(&s->dom, a);
    s->seconds_comm += MPI_Wtime() - t0;
  }
  compute_forces(s);
  half_kick(s);
  if (s->par.berendsen_damp > 0) berendsen(s);
  return WF_OK;
}

md_thermo_row md_sim_thermo(const md_sim *s) {
  const md_atoms *a = &s->atoms;
  double local[3] = {0, s->sums.embed + s->sums.pair, s->sums.virial}, sum[3];
  for (int i = 0; i < a->nlocal; i++)
    local[0] += s->mass[a->type[i]] *
                (a->v[i][0] * a->v[i][0] + a->v[i][1] * a->v[i][1] + a->v[i][2] * a->v[i][2]);
  MPI_Allreduce(local, sum, 3, MPI_DOUBLE, MPI_SUM, s->dom.comm);
  /* as LAMMPS's compute temp, thermo ke and compute pressure; one atom has
   * no degree of freedom once the centre of mass is fixed: temperature 0 */
  const double dof = 3.0 * (double)s->natoms - 3.0;
  const double tfactor = dof > 0 ? MD_MVV2E / (dof * MD_BOLTZ) : 0;
  const md_box *b = &s->dom.box;
  md_thermo_row r = {.step = s->step};
  r.temp = sum[0] * tfactor;
  r.ke = r.temp * 0.5 * dof * MD_BOLTZ;
  r.pe = sum[1];
  r.etotal = r.pe + r.ke;
  r.press = (dof * MD_BOLTZ * r.temp + sum[2]) / 3.0 / (b->len[0] * b->len[1] * b->len[2]) *
            MD_NKTV2P;
  return r;
}
