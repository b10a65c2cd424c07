/* MD checkpoints (md_checkpoint.h): step, box and every atom's id, species, position and
 * velocity, with the positions at the last list build, in one HDF5 file; read back,
 * checked, and shared out to the ranks that own them. */
#include "md_checkpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_checkpoint.h"
#include "wf_io.h"

enum { NVARS = 5, NBUILD = 2 };

/* The datasets, each rank's slice [offset, offset + count) of natoms rows. */
static void describe(wf_ckpt_var v[NVARS], double *box, int64_t *id, int64_t *type, double *x,
                     double *vel, unsigned long long natoms, unsigned long long offset,
                     unsigned long long count, int rank, bool read_all) {
  unsigned long long box_count = read_all || rank == 0 ? 6 : 0;
  v[0] = (wf_ckpt_var){"box", WF_F64, box, 6, 0, box_count};
  v[1] = (wf_ckpt_var){"id", WF_I64, id, natoms, offset, count};
  v[2] = (wf_ckpt_var){"species", WF_I64, type, natoms, offset, count};
  v[3] = (wf_ckpt_var){"position", WF_F64, x, 3 * natoms, 3 * offset, 3 * count};
  v[4] = (wf_ckpt_var){"velocity", WF_F64, vel, 3 * natoms, 3 * offset, 3 * count};
}

int md_checkpoint_write(const char *path, const char *state, const md_domain *d,
                        const md_atoms *a, const md_vec *x_build, long long last_build,
                        long long step, wf_status *st) {
  unsigned long long n = (unsigned long long)a->nlocal, offset = 0, natoms;
  MPI_Exscan(&n, &offset, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, d->comm);
  if (d->rank == 0) offset = 0;
  MPI_Allreduce(&n, &natoms, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, d->comm);
  double box[6];
  for (int c = 0; c < 3; c++) box[c] = d->box.lo[c], box[3 + c] = d->box.len[c];
  int64_t *type = malloc((n + 1) * sizeof *type);
  if (!type) return wf_fail(st, WF_ERR_RUNTIME, "out of memory"); /* not collective: fatal */
  for (unsigned long long i = 0; i < n; i++) type[i] = a->type[i];
  wf_ckpt_var v[NVARS];
  describe(v, box, a->id, type, (double *)a->x, (double *)a->v, natoms, offset, n, d->rank, false);
  /* read back as series (wf_checkpoint_read_series): optional, files written before them
   * restart from their current positions */
  double build_step = (double)last_build;
  wf_ckpt_var build[NBUILD] = {
      {"position_at_build", WF_F64, (void *)x_build, 3 * natoms, 3 * offset, 3 * n},
      {"last_build", WF_F64, &build_step, 1, 0, d->rank == 0 ? 1 : 0}};
  int rc = wf_checkpoint_write_more(d->comm, path, step, state, v, NVARS, build, NBUILD, st);
  free(type);
  return rc;
}

static int by_id(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* What a checkpoint holds must be a state this code can run: a step >= 0,
 * ids >= 1 and unique, species of the potential, finite numbers. The same
 * test on every rank (each reads everything), so no agreement is needed. */
static int validate(const char *path, const md_checkpoint_data *c, int nspecies, wf_status *st) {
  const int64_t *id = c->id, *type = c->species;
  const double *x = c->x, *vel = c->v;
  size_t n = c->natoms;
  long long step = c->step;
  if (step < 0) return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': step %lld is negative", path, step);
  if (c->x_build && (c->last_build < 0 || c->last_build > step))
    return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': its last list build (step %lld) is not "
                   "in 0..%lld, its step", path, c->last_build, step);
  for (size_t i = 0; i < n; i++) {
    if (id[i] < 1)
      return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom id %lld is not positive", path,
                     (long long)id[i]);
    if (type[i] < 0 || type[i] >= nspecies)
      return wf_fail(st, WF_ERR_INPUT,
                     "checkpoint '%s': atom %lld has species %lld, the potential has %d element(s)",
                     path, (long long)id[i], (long long)type[i], nspecies);
    for (int k = 0; k < 3; k++)
      if (!isfinite(x[3 * i + k]) || !isfinite(vel[3 * i + k]) ||
          (c->x_build && !isfinite(c->x_build[3 * i + k])))
        return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom %lld has a non-finite position or velocity",
                       path, (long long)id[i]);
  }
  int64_t *sorted = malloc((n + 1) * sizeof *sorted);
  if (!sorted) return wf_fail(st, WF_ERR_RUNTIME, "out of memory checking '%s'", path);
  memcpy(sorted, id, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, by_id);
  int rc = WF_OK;
  for (size_t i = 1; i < n && rc == WF_OK; i++)
    if (sorted[i] == sorted[i - 1])
      rc = wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom id %lld appears twice", path,
                   (long long)sorted[i]);
  free(sorted);
  return rc;
}

/* Atoms leave the box between list builds, never by a box length. */
static int check_inside(const char *path, const md_domain *d, const int64_t *id, const double *x,
                        size_t n, wf_status *st) {
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++)
      if (fabs(x[3 * i + k] - (d->box.lo[k] + 0.5 * d->box.len[k])) > 1.5 * d->box.len[k])
        return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom %lld is at %c = %g, a box "
                       "length outside the box", path, (long long)id[i], "xyz"[k], x[3 * i + k]);
  return WF_OK;
}

void md_resume_free(md_resume *r) {
  free(r->atoms);
  r->atoms = NULL, r->n = 0;
}

const double *md_resume_position(const md_resume *r, int64_t id) {
  const md_resume_atom *at = bsearch(&id, r->atoms, r->n, sizeof *r->atoms, by_id);
  return at ? at->x : NULL;
}

/* Where a list build leaves atoms in the columns mapping: in the box (the
 * fold mapping keeps them unwrapped). */
static int check_wrapped(const char *path, const md_domain *d, const int64_t *id, const double *x,
                         size_t n, wf_status *st) {
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++)
      if (!(x[3 * i + k] >= d->box.lo[k] && x[3 * i + k] < d->box.lo[k] + d->box.len[k]))
        return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom %lld's position at the last list "
                       "build is outside the box (%c = %g), where no build leaves an atom", path,
                       (long long)id[i], "xyz"[k], x[3 * i + k]);
  return WF_OK;
}

int md_checkpoint_adopt(const char *path, const md_checkpoint_data *c, const md_domain *d,
                        int nspecies, md_atoms *a, md_resume *r, wf_status *st) {
  /* taken right after a build (a periodic checkpoint): the atoms are where
   * that build left them, `x` */
  bool between = c->x_build && c->last_build != c->step;
  *r = (md_resume){.last_build = between ? c->last_build : c->step, .path = path};
  int rc = validate(path, c, nspecies, st);
  for (int k = 0; rc == WF_OK && k < 3; k++)
    if (c->box[k] != d->box.lo[k] || c->box[3 + k] != d->box.len[k])
      rc = wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' is of another box (%.6g A in %c, the deck gives %.6g A)", path,
                   c->box[3 + k], "xyz"[k], d->box.len[k]);
  if (rc == WF_OK) rc = check_inside(path, d, c->id, c->x, c->natoms, st);
  if (rc == WF_OK && between)
    rc = d->fold_mode ? check_inside(path, d, c->id, c->x_build, c->natoms, st)
                      : check_wrapped(path, d, c->id, c->x_build, c->natoms, st);
  if (rc != WF_OK) return rc;
  /* the owners and places of the last build; the step's positions kept aside */
  const double *at = between ? c->x_build : c->x;
  if (between && !(r->atoms = malloc((c->natoms + 1) * sizeof *r->atoms)))
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory reading '%s'", path);
  a->nlocal = a->nghost = 0;
  for (size_t i = 0; i < c->natoms && rc == WF_OK; i++)
    if (md_domain_owns_atom(d, c->id[i], at + 3 * i)) {
      rc = md_atoms_add(a, c->id[i], (int)c->species[i], at + 3 * i, c->v + 3 * i, st);
      if (between) {
        r->atoms[r->n].id = c->id[i];
        memcpy(r->atoms[r->n++].x, c->x + 3 * i, sizeof(md_vec));
      }
    }
  if (between) qsort(r->atoms, r->n, sizeof *r->atoms, by_id);
  return rc;
}

/* The positions at the last list build and its step, into c (x_build NULL
 * when the file has none: one written before they were kept). Collective. */
static int read_build(MPI_Comm comm, const char *path, md_checkpoint_data *c, double **x_build,
                      wf_status *st) {
  unsigned long long n = 0, nstep = 0;
  double *step = NULL;
  *x_build = NULL;
  if (wf_checkpoint_read_series(comm, path, "position_at_build", 3 * c->natoms, x_build, &n, st) !=
          WF_OK ||
      wf_checkpoint_read_series(comm, path, "last_build", 1, &step, &nstep, st) != WF_OK) {
    free(step);
    return st->code;
  }
  int rc = WF_OK;
  if (n == 0 && nstep == 0) {
    c->x_build = NULL;
  } else if (n != 3 * c->natoms || nstep != 1) {
    rc = wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': position_at_build holds %llu values and "
                 "last_build %llu (expected %zu and 1)", path, n, nstep, 3 * c->natoms);
  } else if (!(fabs(step[0]) <= 0x1p62 && step[0] == floor(step[0]))) { /* before the cast */
    rc = wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': last_build %g is not a step", path, step[0]);
  } else { /* a step, checked against the checkpoint's own in validate() */
    c->x_build = *x_build;
    c->last_build = (long long)step[0];
  }
  free(step);
  return rc;
}

/* A run that checked its lists at the checkpoint's step (neigh_delay steps
 * or more after the last build) rebuilt them if an atom had moved more than
 * half the skin since: a checkpoint between builds whose atoms did is not a
 * state a run wrote (its lists would miss pairs). The run's own test, on
 * every atom (each rank reads all). */
static int check_moves(const char *path, const md_checkpoint_data *c, double skin, int neigh_delay,
                       wf_status *st) {
  if (!c->x_build || c->last_build == c->step || c->step - c->last_build < neigh_delay)
    return WF_OK;
  const double trigger = 0.25 * skin * skin;
  for (size_t i = 0; i < c->natoms; i++) {
    const double *x = c->x + 3 * i, *b = c->x_build + 3 * i;
    double dx = x[0] - b[0], dy = x[1] - b[1], dz = x[2] - b[2];
    if (dx * dx + dy * dy + dz * dz > trigger)
      return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom %lld moved %g A since the last list "
                     "build (step %lld), more than half the skin (%g A): the run would have "
                     "rebuilt its lists", path, (long long)c->id[i],
                     sqrt(dx * dx + dy * dy + dz * dz), c->last_build, skin);
  }
  return WF_OK;
}

int md_checkpoint_read(const char *path, const md_domain *d, long long natoms, int nspecies,
                       double skin, int neigh_delay, md_atoms *a, long long *step, md_resume *r,
                       wf_status *st) {
  /* every rank reads everything and keeps its own: restarts may use another
   * rank count */
  *r = (md_resume){0};
  size_t n = (size_t)natoms;
  double *x = malloc(3 * n * sizeof *x), *vel = malloc(3 * n * sizeof *vel), *x_build = NULL;
  int64_t *id = malloc(n * sizeof *id), *type = malloc(n * sizeof *type);
  if (!x || !vel || !id || !type) {
    free(x), free(vel), free(id), free(type);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory reading %lld atoms", natoms);
  }
  md_checkpoint_data c = {.natoms = n, .id = id, .species = type, .x = x, .v = vel};
  wf_ckpt_var v[NVARS];
  describe(v, c.box, id, type, x, vel, n, 0, n, d->rank, true);
  int rc = wf_checkpoint_read(d->comm, path, &c.step, v, NVARS, st);
  if (rc == WF_OK) rc = read_build(d->comm, path, &c, &x_build, st);
  if (rc == WF_OK) {
    if (md_checkpoint_adopt(path, &c, d, nspecies, a, r, st) == WF_OK)
      check_moves(path, &c, skin, neigh_delay, st);
    wf_status_agree(d->comm, st);
    rc = st->code;
  }
  if (rc == WF_OK) *step = c.step;
  else md_resume_free(r);
  free(x), free(vel), free(id), free(type), free(x_build);
  return rc;
}
