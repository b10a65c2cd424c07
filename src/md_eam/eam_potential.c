/* EAM potential files (eam_potential.h): a reader for DYNAMO funcfl and setfl files that
 * checks every number, and the cubic splines LAMMPS builds from their tables. */
#include "eam_potential.h"

#include "wf_io.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tokenizer that knows line numbers ---------------------------------- */

typedef struct reader {
  const char *p;
  const char *name;
  int line;
  wf_status *st;
} reader;

/* Move to the start of the next line. */
static void skip_line(reader *r) {
  while (*r->p && *r->p != '\n') r->p++;
  if (*r->p == '\n') r->p++, r->line++;
}

/* The next whitespace-separated token, or NULL at the end of the text. With
 * same_line, a token on a later line is not taken (returns NULL). */
static const char *token(reader *r, int *len, bool same_line) {
  for (;;) {
    while (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\f') r->p++;
    if (*r->p != '\n') break;
    if (same_line) return NULL;
    r->p++, r->line++;
  }
  if (!*r->p) return NULL;
  const char *t = r->p;
  while (*r->p && !strchr(" \t\r\f\n", *r->p)) r->p++;
  *len = (int)(r->p - t);
  return t;
}

static int number(reader *r, double *v, const char *what, bool same_line) {
  int len;
  const char *t = token(r, &len, same_line);
  if (!t)
    return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: %s: expected %s", r->name, r->line,
                   same_line ? "line too short" : "file ends early", what);
  char buf[64], *end;
  snprintf(buf, sizeof buf, "%.*s", len < 63 ? len : 63, t);
  if (len > 63)
    return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: '%s...' is too long for a number (%s)", r->name,
                   r->line, buf, what);
  errno = 0;
  *v = strtod(buf, &end);
  if (end == buf || *end || errno == ERANGE || !isfinite(*v))
    return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: '%s' is not a finite number (%s)", r->name,
                   r->line, buf, what);
  return WF_OK;
}

/* An integer in [min, max] (table sizes are bounded: a file cannot ask for
 * more memory than any real potential needs). */
static int integer(reader *r, int *v, const char *what, int min, int max) {
  double d;
  if (number(r, &d, what, true) != WF_OK) return r->st->code;
  if (!(d >= min && d <= max) || d != floor(d))
    return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: %s = %g: expected an integer in [%d, %d]",
                   r->name, r->line, what, d, min, max);
  *v = (int)d;
  return WF_OK;
}

/* A mass in amu: positive (the integrator divides by it). */
static int mass_of(reader *r, double *m) {
  if (number(r, m, "mass", true) != WF_OK) return r->st->code;
  if (!(*m > 0 && *m <= 1e6))
    return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: mass %g: expected a positive mass in amu", r->name,
                   r->line, *m);
  return WF_OK;
}

/* Table values are bounded so that the splines' differences and products
 * stay finite: no potential's energies or densities come near 1e100. */
#define EAM_MAX_VALUE 1e100

/* n values, several to a line, into v[1..n] (1-based like the tables). */
static int values(reader *r, double *v, int n, const char *what) {
  for (int i = 1; i <= n; i++) {
    int line = r->line;
    if (number(r, &v[i], what, false) != WF_OK) {
      if (!*r->p)
        return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: file ends after %d of the %d values of %s",
                       r->name, line, i - 1, n, what);
      return r->st->code;
    }
    if (fabs(v[i]) > EAM_MAX_VALUE)
      return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: %s value %g is beyond +-%g", r->name, r->line,
                     what, v[i], EAM_MAX_VALUE);
  }
  return WF_OK;
}

/* ---- LAMMPS's spline: 5-point derivative estimates, cubic per interval ---- */

static int spline(eam_spline *s, const double *f, int n, double delta) {
  s->n = n;
  s->delta = delta;
  s->inv_delta = 1.0 / delta;
  s->c = calloc((size_t)n + 1, sizeof *s->c);
  if (!s->c) return -1;
  double(*c)[7] = s->c;
  for (int m = 1; m <= n; m++) c[m][6] = f[m];
  c[1][5] = c[2][6] - c[1][6];
  c[2][5] = 0.5 * (c[3][6] - c[1][6]);
  c[n - 1][5] = 0.5 * (c[n][6] - c[n - 2][6]);
  c[n][5] = c[n][6] - c[n - 1][6];
  for (int m = 3; m <= n - 2; m++)
    c[m][5] = ((c[m - 2][6] - c[m + 2][6]) + 8.0 * (c[m + 1][6] - c[m - 1][6])) / 12.0;
  for (int m = 1; m <= n - 1; m++) {
    c[m][4] = 3.0 * (c[m + 1][6] - c[m][6]) - 2.0 * c[m][5] - c[m + 1][5];
    c[m][3] = c[m][5] + c[m + 1][5] - 2.0 * (c[m + 1][6] - c[m][6]);
  }
  c[n][4] = 0.0;
  c[n][3] = 0.0;
  for (int m = 1; m <= n; m++) {
    c[m][2] = c[m][5] / delta;
    c[m][1] = 2.0 * c[m][4] / delta;
    c[m][0] = 3.0 * c[m][3] / delta;
  }
  return 0;
}

/* funcfl re-gridding: 4-point Lagrange interpolation of table t (1-based,
 * nt points, spacing dt) at x, as LAMMPS's file2array does. */
static double lagrange4(const double *t, int nt, double dt, double x) {
  const double sixth = 1.0 / 6.0;
  double p = x / dt + 1.0;
  int k = (int)p;
  k = k < nt - 2 ? k : nt - 2;
  k = k > 2 ? k : 2;
  p -= k;
  p = p < 2.0 ? p : 2.0;
  double c1 = -sixth * p * (p - 1.0) * (p - 2.0), c2 = 0.5 * (p * p - 1.0) * (p - 2.0);
  double c3 = -0.5 * p * (p + 1.0) * (p - 2.0), c4 = sixth * p * (p * p - 1.0);
  return c1 * t[k - 1] + c2 * t[k] + c3 * t[k + 1] + c4 * t[k + 2];
}

static int header_grid(reader *r, eam_potential *p) {
  if (integer(r, &p->nrho, "Nrho", 5, EAM_MAX_POINTS) || number(r, &p->drho, "drho", true) ||
      integer(r, &p->nr, "Nr", 5, EAM_MAX_POINTS) || number(r, &p->dr, "dr", true) ||
      number(r, &p->cut, "cutoff", true))
    return r->st->code;
  /* bounded so that the grids' inverses and extents stay finite */
  if (!(p->drho >= 1e-30 && p->drho <= 1e30) || !(p->dr >= 1e-30 && p->dr <= 1e30) ||
      !(p->cut > 0 && p->cut <= 1e30))
    return wf_fail(r->st, WF_ERR_INPUT,
                   "%s:%d: drho, dr and the cutoff must be positive (between 1e-30 and 1e30)",
                   r->name, r->line);
  skip_line(r);
  return WF_OK;
}

/* "Cu" for 29: funcfl files name their element by atomic number only. */
static void element_symbol(int z, char *out, size_t len) {
  static const char *const symbols =
      "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As "
      "Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd "
      "Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu ";
  const char *s = symbols;
  for (int i = 1; i < z && *s; i++) s = strchr(s, ' ') + 1;
  if (z < 1 || !*s) snprintf(out, len, "Z%d", z);
  else snprintf(out, len, "%.*s", (int)(strchr(s, ' ') - s), s);
}

/* Lattice constant and type after the mass, lower-cased ("FCC" -> "fcc").
 * Optional in funcfl files (LAMMPS reads only the number and the mass). */
static int lattice_of(reader *r, eam_potential *p, int i, bool required) {
  int len;
  if (!required) {
    const char *save = r->p;
    bool present = token(r, &len, true) != NULL;
    r->p = save;
    if (!present) return WF_OK;
  }
  if (number(r, &p->lattice_a[i], "lattice constant", true) != WF_OK) return r->st->code;
  const char *t = token(r, &len, true);
  if (!t)
    return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: expected the lattice type of %s", r->name, r->line,
                   p->element[i]);
  for (int k = 0; k < len && k < 7; k++) p->lattice[i][k] = (char)tolower((unsigned char)t[k]);
  p->lattice[i][len < 7 ? len : 7] = 0;
  return WF_OK;
}

static int parse_funcfl(reader *r, eam_potential *p) {
  skip_line(r); /* comment */
  int z = 0;
  if (integer(r, &z, "atomic number", 0, 999) || mass_of(r, &p->mass[0])) return r->st->code;
  element_symbol(z, p->element[0], sizeof p->element[0]);
  if (lattice_of(r, p, 0, false) != WF_OK) return r->st->code;
  skip_line(r);
  if (header_grid(r, p) != WF_OK) return r->st->code;
  double *frho = calloc((size_t)p->nrho + 1, sizeof *frho);
  double *zr = calloc((size_t)p->nr + 1, sizeof *zr), *rhor = calloc((size_t)p->nr + 1, sizeof *rhor);
  int rc = !frho || !zr || !rhor ? wf_fail(r->st, WF_ERR_RUNTIME, "out of memory") : WF_OK;
  if (rc == WF_OK && (values(r, frho, p->nrho, "F(rho)") || values(r, zr, p->nr, "Z(r)") ||
                      values(r, rhor, p->nr, "rho(r)")))
    rc = r->st->code;
  if (rc == WF_OK) {
    /* LAMMPS's grid for one funcfl file: rmax = (Nr - 1) dr, nr = rmax / dr
     * rounded, that is Nr - 1 points (likewise for rho). */
    int nrho = (int)(((p->nrho - 1) * p->drho) / p->drho + 0.5);
    int nr = (int)(((p->nr - 1) * p->dr) / p->dr + 0.5);
    double *f = calloc((size_t)nrho + 1, sizeof *f), *d = calloc((size_t)nr + 1, sizeof *d);
    double *z2 = calloc((size_t)nr + 1, sizeof *z2);
    if (!f || !d || !z2) rc = wf_fail(r->st, WF_ERR_RUNTIME, "out of memory");
    for (int m = 1; rc == WF_OK && m <= nrho; m++)
      f[m] = lagrange4(frho, p->nrho, p->drho, (m - 1) * p->drho);
    for (int m = 1; rc == WF_OK && m <= nr; m++) {
      double x = (m - 1) * p->dr, zi = lagrange4(zr, p->nr, p->dr, x);
      d[m] = lagrange4(rhor, p->nr, p->dr, x);
      z2[m] = 27.2 * 0.529 * zi * zi;
    }
    p->rhomax = (p->nrho - 1) * p->drho;
    p->nrho = nrho;
    p->nr = nr;
    if (rc == WF_OK && (spline(&p->frho[0], f, nrho, p->drho) || spline(&p->rhor[0], d, nr, p->dr) ||
                        spline(&p->z2r[0], z2, nr, p->dr)))
      rc = wf_fail(r->st, WF_ERR_RUNTIME, "out of memory");
    free(f), free(d), free(z2);
  }
  p->nelements = 1;
  free(frho), free(zr), free(rhor);
  return rc;
}

/* Read n values and spline them. */
static int table(reader *r, double *buf, int n, double delta, eam_spline *s, const char *what) {
  if (values(r, buf, n, what) != WF_OK) return r->st->code;
  if (spline(s, buf, n, delta) != 0) return wf_fail(r->st, WF_ERR_RUNTIME, "out of memory");
  return WF_OK;
}

static int parse_setfl(reader *r, eam_potential *p) {
  for (int i = 0; i < 3; i++) skip_line(r); /* comments */
  int n = 0, len = 0;
  if (integer(r, &n, "number of elements", 1, EAM_MAX_ELEMENTS) != WF_OK) return r->st->code;
  if (n > EAM_MAX_ELEMENTS)
    return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: %d elements; wafer reads at most %d", r->name,
                   r->line, n, EAM_MAX_ELEMENTS);
  for (int i = 0; i < n; i++) {
    const char *t = token(r, &len, true);
    if (!t)
      return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: the line announces %d elements but names %d",
                     r->name, r->line, n, i);
    snprintf(p->element[i], sizeof p->element[i], "%.*s", len < 7 ? len : 7, t);
  }
  if (token(r, &len, true))
    return wf_fail(r->st, WF_ERR_INPUT, "%s:%d: the line announces %d elements but names more",
                   r->name, r->line, n);
  skip_line(r);
  p->nelements = n;
  if (header_grid(r, p) != WF_OK) return r->st->code;
  p->rhomax = (p->nrho - 1) * p->drho;
  double *buf = calloc((size_t)(p->nrho > p->nr ? p->nrho : p->nr) + 1, sizeof *buf);
  if (!buf) return wf_fail(r->st, WF_ERR_RUNTIME, "out of memory");
  int rc = WF_OK;
  char what[64];
  for (int i = 0; i < n && rc == WF_OK; i++) {
    double z;
    if (number(r, &z, "atomic number", false) || mass_of(r, &p->mass[i]) ||
        lattice_of(r, p, i, true) != WF_OK) {
      rc = r->st->code;
      break;
    }
    skip_line(r);
    snprintf(what, sizeof what, "F(rho) of %s", p->element[i]);
    rc = table(r, buf, p->nrho, p->drho, &p->frho[i], what);
    snprintf(what, sizeof what, "rho(r) of %s", p->element[i]);
    if (rc == WF_OK) rc = table(r, buf, p->nr, p->dr, &p->rhor[i], what);
  }
  for (int i = 0; i < n && rc == WF_OK; i++)
    for (int j = 0; j <= i && rc == WF_OK; j++) {
      snprintf(what, sizeof what, "r*phi(r) of %s-%s", p->element[i], p->element[j]);
      rc = table(r, buf, p->nr, p->dr, &p->z2r[eam_pair(i, j)], what);
    }
  free(buf);
  return rc;
}

int eam_parse(eam_potential *p, const char *text, const char *name, eam_format format,
              wf_status *st) {
  memset(p, 0, sizeof *p);
  snprintf(p->path, sizeof p->path, "%s", name);
  wf_status_clear(st);
  reader r = {.p = text, .name = name, .line = 1, .st = st};
  int rc = format == EAM_FUNCFL ? parse_funcfl(&r, p) : parse_setfl(&r, p);
  if (rc != WF_OK) eam_free(p);
  return rc;
}

static bool ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && strcmp(s + a - b, tail) == 0;
}

static int parse_named(eam_potential *p, char *text, const char *path, wf_status *st) {
  eam_format fmt = ends_with(path, ".alloy") ? EAM_SETFL : EAM_FUNCFL;
  int rc = eam_parse(p, text, path, fmt, st);
  free(text);
  return rc;
}

int eam_read(eam_potential *p, const char *path, wf_status *st) {
  char *text;
  if (wf_read_text(path, "EAM potential", WF_MAX_TABLE_BYTES, &text, st) != WF_OK) return st->code;
  return parse_named(p, text, path, st);
}

int eam_read_bcast(eam_potential *p, const char *path, MPI_Comm comm, wf_status *st) {
  char *text;
  if (wf_read_text_bcast(comm, path, "EAM potential", WF_MAX_TABLE_BYTES, &text, st) != WF_OK) return st->code;
  return parse_named(p, text, path, st);
}

void eam_free(eam_potential *p) {
  for (int i = 0; i < EAM_MAX_ELEMENTS; i++) {
    free(p->frho[i].c), free(p->rhor[i].c);
    p->frho[i].c = p->rhor[i].c = NULL;
  }
  for (int i = 0; i < EAM_MAX_ELEMENTS * (EAM_MAX_ELEMENTS + 1) / 2; i++) {
    free(p->z2r[i].c);
    p->z2r[i].c = NULL;
  }
}

int eam_element(const eam_potential *p, const char *name) {
  for (int i = 0; i < p->nelements; i++)
    if (strcmp(p->element[i], name) == 0) return i;
  return -1;
}
