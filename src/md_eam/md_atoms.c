/* The atoms a rank holds (md_atoms.h): owned atoms then ghosts in growable arrays, and
 * adding and copying atoms. */
#include "md_atoms.h"

#include <stdlib.h>
#include <string.h>

void md_atoms_init(md_atoms *a) { memset(a, 0, sizeof *a); }

void md_atoms_free(md_atoms *a) {
  free(a->id), free(a->type), free(a->x), free(a->v), free(a->f), free(a->rho), free(a->fp);
  md_atoms_init(a);
}

int md_grow(void **p, size_t bytes) {
  void *q = realloc(*p, bytes);
  if (!q) return -1;
  *p = q;
  return 0;
}

int md_atoms_reserve(md_atoms *a, int n, wf_status *st) {
  if (n <= a->cap) return WF_OK;
  int cap = a->cap ? a->cap : 1024;
  while (cap < n) cap += cap / 2;
  size_t c = (size_t)cap;
  if (md_grow((void **)&a->id, c * sizeof *a->id) ||
      md_grow((void **)&a->type, c * sizeof *a->type) ||
      md_grow((void **)&a->x, c * sizeof *a->x) || md_grow((void **)&a->v, c * sizeof *a->v) ||
      md_grow((void **)&a->f, c * sizeof *a->f) || md_grow((void **)&a->rho, c * sizeof *a->rho) ||
      md_grow((void **)&a->fp, c * sizeof *a->fp))
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for %d atoms", n);
  a->cap = cap;
  return WF_OK;
}

int md_atoms_add(md_atoms *a, int64_t id, int type, const double x[3], const double v[3],
                 wf_status *st) {
  if (md_atoms_reserve(a, a->nlocal + 1, st) != WF_OK) return st->code;
  int i = a->nlocal++;
  a->id[i] = id;
  a->type[i] = type;
  memcpy(a->x[i], x, sizeof(md_vec));
  memcpy(a->v[i], v, sizeof(md_vec));
  return WF_OK;
}

void md_atoms_copy(md_atoms *a, int to, int from) {
  a->id[to] = a->id[from];
  a->type[to] = a->type[from];
  memcpy(a->x[to], a->x[from], sizeof(md_vec));
  memcpy(a->v[to], a->v[from], sizeof(md_vec));
}
