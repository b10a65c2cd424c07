/* MD checkpoints (md_checkpoint.h): step, box and every atom's id, species, position and
 * velocity in one HDF5 file; read back, checked, and shared out to the ranks that own them. */
#include "md_checkpoint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wf_checkpoint.h"
#include "wf_io.h"

enum { NVARS = 5 };

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
                        const md_atoms *a, long long step, wf_status *st) {
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
  int rc = wf_checkpoint_write(d->comm, path, step, state, v, NVARS, st);
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
static int validate(const char *path, long long step, const int64_t *id, const int64_t *type,
                    const double *x, const double *vel, size_t n, int nspecies, wf_status *st) {
  if (step < 0) return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': step %lld is negative", path, step);
  for (size_t i = 0; i < n; i++) {
    if (id[i] < 1)
      return wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom id %lld is not positive", path,
                     (long long)id[i]);
    if (type[i] < 0 || type[i] >= nspecies)
      return wf_fail(st, WF_ERR_INPUT,
                     "checkpoint '%s': atom %lld has species %lld, the potential has %d element(s)",
                     path, (long long)id[i], (long long)type[i], nspecies);
    for (int c = 0; c < 3; c++)
      if (!isfinite(x[3 * i + c]) || !isfinite(vel[3 * i + c]))
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

int md_checkpoint_adopt(const char *path, const md_checkpoint_data *c, const md_domain *d,
                        int nspecies, md_atoms *a, wf_status *st) {
  int rc = validate(path, c->step, c->id, c->species, c->x, c->v, c->natoms, nspecies, st);
  for (int k = 0; rc == WF_OK && k < 3; k++)
    if (c->box[k] != d->box.lo[k] || c->box[3 + k] != d->box.len[k])
      rc = wf_fail(st, WF_ERR_INPUT,
                   "checkpoint '%s' is of another box (%.6g A in %c, the deck gives %.6g A)", path,
                   c->box[3 + k], "xyz"[k], d->box.len[k]);
  /* Atoms leave the box between list builds, never by a box length. */
  for (size_t i = 0; rc == WF_OK && i < c->natoms; i++)
    for (int k = 0; k < 3; k++)
      if (fabs(c->x[3 * i + k] - (d->box.lo[k] + 0.5 * d->box.len[k])) > 1.5 * d->box.len[k]) {
        rc = wf_fail(st, WF_ERR_INPUT, "checkpoint '%s': atom %lld is at %c = %g, a box length "
                     "outside the box", path, (long long)c->id[i], "xyz"[k], c->x[3 * i + k]);
        break;
      }
  if (rc != WF_OK) return rc;
  a->nlocal = a->nghost = 0;
  for (size_t i = 0; i < c->natoms && rc == WF_OK; i++)
    if (md_domain_owns_atom(d, c->id[i], c->x + 3 * i))
      rc = md_atoms_add(a, c->id[i], (int)c->species[i], c->x + 3 * i, c->v + 3 * i, st);
  return rc;
}

int md_checkpoint_read(const char *path, const md_domain *d, long long natoms, int nspecies,
                       md_atoms *a, long long *step, wf_status *st) {
  /* every rank reads everything and keeps its own: restarts may use another
   * rank count */
  size_t n = (size_t)natoms;
  double *x = malloc(3 * n * sizeof *x), *vel = malloc(3 * n * sizeof *vel);
  int64_t *id = malloc(n * sizeof *id), *type = malloc(n * sizeof *type);
  if (!x || !vel || !id || !type) {
    free(x), free(vel), free(id), free(type);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory reading %lld atoms", natoms);
  }
  md_checkpoint_data c = {.natoms = n, .id = id, .species = type, .x = x, .v = vel};
  wf_ckpt_var v[NVARS];
  describe(v, c.box, id, type, x, vel, n, 0, n, d->rank, true);
  int rc = wf_checkpoint_read(d->comm, path, &c.step, v, NVARS, st);
  if (rc == WF_OK) {
    md_checkpoint_adopt(path, &c, d, nspecies, a, st);
    wf_status_agree(d->comm, st);
    rc = st->code;
  }
  if (rc == WF_OK) *step = c.step;
  free(x), free(vel), free(id), free(type);
  return rc;
}
