/* Energy and forces of a periodic configuration with an EAM potential, by
 * brute force over all pairs (minimum image): the direct evaluation the
 * end-to-end test compares with LAMMPS, through wafer's potential reader.
 * usage: eam_energy POTENTIAL DATAFILE ELEMENT...   (one element per atom type)
 * Prints "energy E", then "id fx fy fz" per atom, by id. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eam_potential.h"

typedef struct atoms {
  int n, ntypes;
  double box[3];
  int *id, *type;
  double *x; /* 3n */
} atoms;

static int read_data(const char *path, atoms *a) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[512];
  double lo, hi;
  memset(a, 0, sizeof *a);
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, " atoms")) sscanf(line, "%d", &a->n);
    else if (strstr(line, "atom types")) sscanf(line, "%d", &a->ntypes);
    else if (strstr(line, "xlo xhi") && sscanf(line, "%lf %lf", &lo, &hi) == 2) a->box[0] = hi - lo;
    else if (strstr(line, "ylo yhi") && sscanf(line, "%lf %lf", &lo, &hi) == 2) a->box[1] = hi - lo;
    else if (strstr(line, "zlo zhi") && sscanf(line, "%lf %lf", &lo, &hi) == 2) a->box[2] = hi - lo;
    else if (strncmp(line, "Atoms", 5) == 0) break;
  }
  a->id = malloc(sizeof(int) * a->n);
  a->type = malloc(sizeof(int) * a->n);
  a->x = malloc(sizeof(double) * 3 * a->n);
  int k = 0;
  while (k < a->n && fgets(line, sizeof line, f)) {
    int id, t;
    double x, y, z;
    if (sscanf(line, "%d %d %lf %lf %lf", &id, &t, &x, &y, &z) != 5) continue;
    a->id[k] = id, a->type[k] = t - 1;
    a->x[3 * k] = x, a->x[3 * k + 1] = y, a->x[3 * k + 2] = z;
    k++;
  }
  fclose(f);
  return k == a->n ? 0 : -1;
}

/* Minimum-image separation x_i - x_j. */
static double separation(const atoms *a, int i, int j, double d[3]) {
  double r2 = 0;
  for (int c = 0; c < 3; c++) {
    d[c] = a->x[3 * i + c] - a->x[3 * j + c];
    d[c] -= a->box[c] * round(d[c] / a->box[c]);
    r2 += d[c] * d[c];
  }
  return r2;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: eam_energy POTENTIAL DATAFILE ELEMENT...\n");
    return 2;
  }
  eam_potential p;
  wf_status st;
  if (eam_read(&p, argv[1], &st) != WF_OK) {
    fprintf(stderr, "%s\n", st.msg);
    return 2;
  }
  atoms a;
  if (read_data(argv[2], &a) != 0 || a.ntypes != argc - 3) {
    fprintf(stderr, "cannot read %s, or not one element per atom type\n", argv[2]);
    return 2;
  }
  int elem[EAM_MAX_ELEMENTS];
  for (int t = 0; t < a.ntypes; t++)
    if ((elem[t] = eam_element(&p, argv[3 + t])) < 0 && !(p.nelements == 1 && t == 0)) {
      fprintf(stderr, "element %s is not in %s\n", argv[3 + t], argv[1]);
      return 2;
    } else if (elem[t] < 0) {
      elem[t] = 0; /* funcfl: one unnamed element */
    }
  for (int c = 0; c < 3; c++)
    if (a.box[c] <= 2 * p.cut) {
      fprintf(stderr, "box shorter than twice the cutoff\n");
      return 2;
    }
  const double cutsq = p.cut * p.cut;
  double *rho = calloc((size_t)a.n, sizeof *rho), *fp = calloc((size_t)a.n, sizeof *fp);
  double *f = calloc(3 * (size_t)a.n, sizeof *f), energy = 0, d[3], deriv;
  for (int i = 0; i < a.n; i++)
    for (int j = i + 1; j < a.n; j++) {
      double r2 = separation(&a, i, j, d);
      if (r2 >= cutsq) continue;
      double r = sqrt(r2);
      rho[i] += eam_eval(&p.rhor[elem[a.type[j]]], r, &deriv);
      rho[j] += eam_eval(&p.rhor[elem[a.type[i]]], r, &deriv);
    }
  for (int i = 0; i < a.n; i++) energy += eam_embed(&p, elem[a.type[i]], rho[i], &fp[i]);
  for (int i = 0; i < a.n; i++)
    for (int j = i + 1; j < a.n; j++) {
      double r2 = separation(&a, i, j, d);
      if (r2 >= cutsq) continue;
      double r = sqrt(r2), rhoip, rhojp, z2p;
      int ei = elem[a.type[i]], ej = elem[a.type[j]];
      eam_eval(&p.rhor[ei], r, &rhoip); /* density at j due to i, derivative */
      eam_eval(&p.rhor[ej], r, &rhojp);
      double z2 = eam_eval(&p.z2r[eam_pair(ei, ej)], r, &z2p);
      double phi = z2 / r, phip = z2p / r - phi / r;
      double fpair = -(fp[i] * rhojp + fp[j] * rhoip + phip) / r;
      energy += phi;
      for (int c = 0; c < 3; c++) f[3 * i + c] += d[c] * fpair, f[3 * j + c] -= d[c] * fpair;
    }
  printf("energy %.17g\n", energy);
  for (int id = 1; id <= a.n; id++)
    for (int k = 0; k < a.n; k++)
      if (a.id[k] == id) printf("%d %.17g %.17g %.17g\n", id, f[3 * k], f[3 * k + 1], f[3 * k + 2]);
  eam_free(&p);
  free(rho), free(fp), free(f), free(a.id), free(a.type), free(a.x);
  return 0;
}
