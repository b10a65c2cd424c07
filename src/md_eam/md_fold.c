/* The fold mapping (md_fold.h): one atom per PE, each atom column of the crystal folded onto
 * a small tile of PEs so that neighbours in 3D stay a few hops apart; the fcc and bcc bases it
 * folds. */
#include "md_fold.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

int md_lattice_basis(const char *kind, const double (**basis)[3]) {
  static const double fcc[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  static const double bcc[2][3] = {{0, 0, 0}, {0.5, 0.5, 0.5}};
  bool is_fcc = strcmp(kind, "fcc") == 0;
  *basis = is_fcc ? fcc : bcc;
  return is_fcc ? 4 : 2;
}

md_fold md_fold_make(const char *kind, const int cells[3]) {
  md_fold f;
  const double(*basis)[3];
  f.nbasis = md_lattice_basis(kind, &basis);
  bool fcc = f.nbasis == 4;
  for (int a = 0; a < 3; a++) f.cells[a] = cells[a];
  for (int b = 0; b < f.nbasis; b++) {
    f.col_dx[b] = fcc ? (int)(2 * basis[b][0]) : b;
    f.col_dy[b] = fcc ? (int)(2 * basis[b][1]) : 0;
  }
  int nz = cells[2];
  f.fx = (int)ceil(sqrt((double)nz));
  f.fy = (nz + f.fx - 1) / f.fx;
  f.pe_x = 2 * cells[0] * f.fx;
  f.pe_y = (fcc ? 2 : 1) * cells[1] * f.fy;
  return f;
}

void md_fold_pe(const md_fold *f, int64_t id, int *x, int *y) {
  int64_t s = id - 1;
  int b = (int)(s % f->nbasis);
  s /= f->nbasis;
  int i = (int)(s % f->cells[0]);
  s /= f->cells[0];
  int j = (int)(s % f->cells[1]);
  int k = (int)(s / f->cells[1]);
  *x = (2 * i + f->col_dx[b]) * f->fx + k % f->fx;
  *y = ((f->nbasis == 4 ? 2 : 1) * j + f->col_dy[b]) * f->fy + k / f->fx;
}
