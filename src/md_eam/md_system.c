/* The initial state of an MD run (md_system.h): atoms on an fcc or bcc lattice or from a
 * LAMMPS data file, Maxwell-Boltzmann velocities drawn per atom id, and the data file writer. */
#include "md_system.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_io.h"
#include "wf_memory.h"
#include "wf_random.h"

/* ---- lattices -------------------------------------------------------------- */

md_box md_lattice_box(const md_lattice *l) {
  md_box b = {{0, 0, 0}, {0, 0, 0}};
  for (int a = 0; a < 3; a++) b.len[a] = l->cells[a] * l->a;
  return b;
}

static int species_of(const md_lattice *l, int64_t id) {
  if (l->nspecies == 1) return l->species[0];
  double u = wf_uniform(l->seed, (uint64_t)id), sum = 0;
  for (int s = 0; s < l->nspecies - 1; s++)
    if (u < (sum += l->fraction[s])) return l->species[s];
  return l->species[l->nspecies - 1];
}

int md_lattice_fill(const md_lattice *l, const md_domain *d, md_atoms *a, wf_status *st) {
  const double(*basis)[3];
  int nb = md_lattice_basis(l->kind, &basis);
  const double zero[3] = {0, 0, 0};
  /* only the cells that can hold this rank's sites */
  int lo[2], hi[2];
  for (int ax = 0; ax < 2; ax++) {
    lo[ax] = (int)floor((d->sub_lo[ax] - d->box.lo[ax]) / l->a) - 1;
    hi[ax] = (int)ceil((d->sub_hi[ax] - d->box.lo[ax]) / l->a) + 1;
    lo[ax] = lo[ax] < 0 ? 0 : lo[ax];
    hi[ax] = hi[ax] > l->cells[ax] ? l->cells[ax] : hi[ax];
  }
  for (int k = 0; k < l->cells[2]; k++)
    for (int j = lo[1]; j < hi[1]; j++)
      for (int i = lo[0]; i < hi[0]; i++)
        for (int b = 0; b < nb; b++) {
          double x[3] = {(i + basis[b][0]) * l->a, (j + basis[b][1]) * l->a,
                         (k + basis[b][2]) * l->a};
          int64_t id = (((int64_t)k * l->cells[1] + j) * l->cells[0] + i) * nb + b + 1;
          if (!md_domain_owns_atom(d, id, x)) continue;
          if (md_atoms_add(a, id, species_of(l, id), x, zero, st) != WF_OK) return st->code;
        }
  return WF_OK;
}

/* ---- LAMMPS data files ------------------------------------------------------ */

typedef struct lines {
  char *buf; /* a copy of the text, cut into lines */
  char *next;
  const char *name;
  int line;
  long long total; /* lines in the text: a bound on what it can hold */
} lines;

/* The next line with its comment removed and trailing blanks cut; NULL at
 * the end. */
static char *next_line(lines *L) {
  if (!L->next) return NULL;
  char *s = L->next, *nl = strchr(s, '\n');
  if (nl) *nl = 0, L->next = nl + 1;
  else L->next = NULL;
  L->line++;
  char *hash = strchr(s, '#');
  if (hash) *hash = 0;
  size_t n = strlen(s);
  while (n && strchr(" \t\r", s[n - 1])) s[--n] = 0;
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

static char *next_nonblank(lines *L) {
  char *s;
  while ((s = next_line(L)) && !*s) {}
  return s;
}

/* Exactly `n` numbers from a line (more are allowed when `extra_ok`, e.g.
 * image flags). */
static int numbers(lines *L, const char *s, double *v, int n, bool extra_ok, const char *what,
                   wf_status *st) {
  char *end;
  for (int k = 0; k < n; k++) {
    errno = 0;
    v[k] = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v[k]))
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: expected %d numbers (%s), got '%s'", L->name,
                     L->line, n, what, s);
    s = end;
  }
  while (*s == ' ' || *s == '\t') s++;
  if (*s && !extra_ok)
    return wf_fail(st, WF_ERR_INPUT, "%s:%d: unexpected '%s' after the %s", L->name, L->line, s,
                   what);
  return WF_OK;
}

static int header(md_data *D, lines *L, const char *s, wf_status *st) {
  double v[2];
  static const char *bounds[3] = {"xlo xhi", "ylo yhi", "zlo zhi"};
  for (int a = 0; a < 3; a++)
    if (strstr(s, bounds[a])) {
      if (sscanf(s, "%lf %lf", &v[0], &v[1]) != 2 || !(v[1] > v[0]) || !isfinite(v[1] - v[0]))
        return wf_fail(st, WF_ERR_INPUT, "%s:%d: expected 'lo hi %s' with finite lo < hi",
                       L->name, L->line, bounds[a]);
      D->box.lo[a] = v[0];
      D->box.len[a] = v[1] - v[0];
      return WF_OK;
    }
  if (strstr(s, "xy xz yz"))
    return wf_fail(st, WF_ERR_INPUT, "%s:%d: triclinic boxes are not supported", L->name, L->line);
  long long n;
  char word[32], word2[32];
  int k = sscanf(s, "%lld %31s %31s", &n, word, word2);
  if (k >= 2 && strcmp(word, "atoms") == 0 && n >= 1) {
    if (n > L->total - L->line) /* one line per atom at least */
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: %lld atoms, but the file has only %lld more lines",
                     L->name, L->line, n, L->total - L->line);
    D->natoms = n;
    return WF_OK;
  }
  if (k == 3 && strcmp(word, "atom") == 0 && strcmp(word2, "types") == 0 && n >= 1 &&
      n <= MD_MAX_SPECIES) {
    D->ntypes = (int)n;
    return WF_OK;
  }
  if (k >= 2 && n == 0) return WF_OK; /* "0 bonds" and the like */
  return wf_fail(st, WF_ERR_INPUT,
                 "%s:%d: '%s' is not a header line wafer reads (atoms, atom types (1..%d), "
                 "xlo xhi, ylo yhi, zlo zhi)",
                 L->name, L->line, s, MD_MAX_SPECIES);
}

static int alloc_data(md_data *D, wf_status *st) {
  size_t n = (size_t)D->natoms;
  D->id = malloc(n * sizeof *D->id);
  D->type = malloc(n * sizeof *D->type);
  D->x = malloc(n * sizeof *D->x);
  D->v = calloc(n, sizeof *D->v);
  if (!D->id || !D->type || !D->x || !D->v)
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for %lld atoms", D->natoms);
  return WF_OK;
}

/* The atoms' ids in order, with where each sits in the Atoms section: finds
 * duplicates, and each Velocities line's atom by binary search. */
typedef struct id_slot {
  int64_t id;
  long long at;
} id_slot;

static int cmp_slot(const void *a, const void *b) {
  int64_t x = ((const id_slot *)a)->id, y = ((const id_slot *)b)->id;
  return (x > y) - (x < y);
}

static int index_ids(const md_data *D, const char *name, id_slot **index, wf_status *st) {
  id_slot *slots = malloc(((size_t)D->natoms + 1) * sizeof *slots);
  if (!slots) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  for (long long i = 0; i < D->natoms; i++) slots[i] = (id_slot){D->id[i], i};
  qsort(slots, (size_t)D->natoms, sizeof *slots, cmp_slot);
  for (long long i = 1; i < D->natoms; i++)
    if (slots[i].id == slots[i - 1].id) {
      long long twice = slots[i].id;
      free(slots);
      return wf_fail(st, WF_ERR_INPUT, "%s: atom id %lld appears twice", name, twice);
    }
  *index = slots;
  return WF_OK;
}

/* Ids are integers read as doubles: exact up to 2^53. */
static bool valid_id(double id) { return id == floor(id) && id >= 1 && id <= 9007199254740992.0; }

static int section_atoms(md_data *D, lines *L, wf_status *st) {
  if (alloc_data(D, st) != WF_OK) return st->code;
  for (long long i = 0; i < D->natoms; i++) {
    char *s = next_nonblank(L);
    if (!s)
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: the Atoms section ends after %lld of %lld atoms",
                     L->name, L->line, i, D->natoms);
    double v[5];
    if (numbers(L, s, v, 5, true, "id type x y z", st) != WF_OK) return st->code;
    if (!valid_id(v[0]) || v[1] != floor(v[1]) || v[1] < 1 || v[1] > D->ntypes)
      return wf_fail(st, WF_ERR_INPUT,
                     "%s:%d: atom id must be an integer in 1..2^53 and type one of 1..%d",
                     L->name, L->line, D->ntypes);
    /* Atoms outside the box are wrapped into it (as LAMMPS does); one more
     * than 2^20 box lengths away would keep less than 2^-32 of a box length
     * of its place after the wrap: a damaged file, not a position. */
    for (int c = 0; c < 3; c++)
      if (D->box.len[c] > 0 && !(fabs((v[2 + c] - D->box.lo[c]) / D->box.len[c]) < 1048576.0))
        return wf_fail(st, WF_ERR_INPUT,
                       "%s:%d: atom %.0f at %g is more than 2^20 box lengths outside the box: "
                       "its place in the box would be lost to rounding",
                       L->name, L->line, v[0], v[2 + c]);
    D->id[i] = (int64_t)v[0];
    D->type[i] = (int)v[1] - 1;
    memcpy(D->x[i], v + 2, sizeof(md_vec));
  }
  return WF_OK;
}

/* The Masses section: one "type mass" line a type, each mass finite and
 * positive. The run takes its masses from the potential (as LAMMPS's
 * pair_style eam does); the section is checked, not used. */
static int section_masses(const md_data *D, lines *L, wf_status *st) {
  if (!D->ntypes)
    return wf_fail(st, WF_ERR_INPUT, "%s:%d: Masses before the 'atom types' line", L->name,
                   L->line);
  for (int t = 0; t < D->ntypes; t++) {
    char *s = next_nonblank(L);
    double v[2];
    if (!s)
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: the Masses section ends after %d of %d types",
                     L->name, L->line, t, D->ntypes);
    if (numbers(L, s, v, 2, false, "type mass", st) != WF_OK) return st->code;
    if (v[0] != floor(v[0]) || v[0] < 1 || v[0] > D->ntypes || !(v[1] > 0))
      return wf_fail(st, WF_ERR_INPUT,
                     "%s:%d: a mass line is 'type mass' with type one of 1..%d and a positive "
                     "mass (got '%s')",
                     L->name, L->line, D->ntypes, s);
  }
  return WF_OK;
}

static int section_velocities(md_data *D, const id_slot *index, lines *L, wf_status *st) {
  if (!D->id)
    return wf_fail(st, WF_ERR_INPUT, "%s:%d: Velocities before Atoms", L->name, L->line);
  for (long long i = 0; i < D->natoms; i++) {
    char *s = next_nonblank(L);
    if (!s)
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: the Velocities section ends after %lld of %lld",
                     L->name, L->line, i, D->natoms);
    double v[4];
    if (numbers(L, s, v, 4, false, "id vx vy vz", st) != WF_OK) return st->code;
    if (!valid_id(v[0]))
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: atom id must be an integer in 1..2^53", L->name,
                     L->line);
    const id_slot key = {(int64_t)v[0], 0};
    const id_slot *slot = bsearch(&key, index, (size_t)D->natoms, sizeof *index, cmp_slot);
    if (!slot)
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: velocity of atom %.0f, which is not in Atoms",
                     L->name, L->line, v[0]);
    memcpy(D->v[slot->at], v + 1, sizeof(md_vec));
  }
  D->has_velocities = true;
  return WF_OK;
}

int md_data_parse(md_data *D, const char *text, const char *name, wf_status *st) {
  memset(D, 0, sizeof *D);
  lines L = {strdup(text), NULL, name, 0, 0};
  if (!L.buf) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  for (const char *c = text; *c; c++) L.total += *c == '\n' || !c[1];
  L.next = L.buf;
  next_line(&L); /* the title */
  int rc = WF_OK;
  bool box[3] = {false, false, false};
  id_slot *index = NULL;
  char *s;
  bool body = false; /* past the header: a section has begun */
  while (rc == WF_OK && (s = next_nonblank(&L))) {
    if (s[0] >= 'A' && s[0] <= 'Z') body = true;
    if (strcmp(s, "Masses") == 0) {
      rc = section_masses(D, &L, st);
    } else if (strncmp(s, "Atoms", 5) == 0) {
      if (!D->natoms || !D->ntypes)
        rc = wf_fail(st, WF_ERR_INPUT, "%s:%d: Atoms before the 'atoms' and 'atom types' lines",
                     name, L.line);
      else if (D->id)
        rc = wf_fail(st, WF_ERR_INPUT, "%s:%d: a second Atoms section", name, L.line);
      else if ((rc = section_atoms(D, &L, st)) == WF_OK)
        rc = index_ids(D, name, &index, st);
    } else if (strcmp(s, "Velocities") == 0) {
      rc = section_velocities(D, index, &L, st);
    } else if (s[0] >= 'A' && s[0] <= 'Z') {
      rc = wf_fail(st, WF_ERR_INPUT,
                   "%s:%d: section '%s' is not supported (atom_style atomic: Masses, Atoms, "
                   "Velocities)",
                   name, L.line, s);
    } else if (body) {
      rc = wf_fail(st, WF_ERR_INPUT, "%s:%d: '%s': the header ends at the first section", name,
                   L.line, s);
    } else {
      rc = header(D, &L, s, st);
      for (int a = 0; a < 3; a++) box[a] = box[a] || D->box.len[a] > 0;
    }
  }
  if (rc == WF_OK && !D->id)
    rc = wf_fail(st, WF_ERR_INPUT, "%s: no Atoms section: not a LAMMPS data file?", name);
  if (rc == WF_OK && !(box[0] && box[1] && box[2]))
    rc = wf_fail(st, WF_ERR_INPUT, "%s: the box needs xlo xhi, ylo yhi and zlo zhi lines", name);
  free(index);
  free(L.buf);
  if (rc != WF_OK) md_data_free(D);
  return rc;
}

void md_data_free(md_data *D) {
  free(D->id), free(D->type), free(D->x), free(D->v);
  memset(D, 0, sizeof *D);
}

int md_data_fill(const md_data *D, const int *type_species, const md_domain *d, md_atoms *a,
                 wf_status *st) {
  for (long long i = 0; i < D->natoms; i++) {
    double x[3];
    for (int c = 0; c < 3; c++) { /* into the box, as LAMMPS does with image flags */
      double f = (D->x[i][c] - D->box.lo[c]) / D->box.len[c];
      x[c] = D->box.lo[c] + (f - floor(f)) * D->box.len[c];
      if (x[c] >= D->box.lo[c] + D->box.len[c]) x[c] = D->box.lo[c];
    }
    if (!md_domain_owns_atom(d, D->id[i], x)) continue;
    if (md_atoms_add(a, D->id[i], type_species[D->type[i]], x, D->v[i], st) != WF_OK)
      return st->code;
  }
  return WF_OK;
}

/* ---- velocities ------------------------------------------------------------- */

/* Standard normal for (atom id, component): Box-Muller on two counter-based
 * uniforms, so the draw does not depend on which rank holds the atom. */
static double gaussian(uint64_t seed, int64_t id, int c) {
  uint64_t k = (uint64_t)id * 6 + 2 * (uint64_t)c;
  double u1 = wf_uniform(seed, k), u2 = wf_uniform(seed, k + 1);
  return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2);
}

void md_velocity_create(md_atoms *a, const double *mass, double temperature, uint64_t seed,
                        MPI_Comm comm) {
  double local[5] = {0, 0, 0, 0, 0}, sum[5]; /* momentum, mass, count */
  for (int i = 0; i < a->nlocal; i++) {
    double m = mass[a->type[i]];
    for (int c = 0; c < 3; c++) {
      a->v[i][c] = gaussian(seed, a->id[i], c) / sqrt(m);
      local[c] += m * a->v[i][c];
    }
    local[3] += m;
    local[4] += 1;
  }
  MPI_Allreduce(local, sum, 5, MPI_DOUBLE, MPI_SUM, comm);
  double mv2 = 0, total;
  for (int i = 0; i < a->nlocal; i++) {
    double m = mass[a->type[i]];
    for (int c = 0; c < 3; c++) {
      a->v[i][c] -= sum[c] / sum[3];
      mv2 += m * a->v[i][c] * a->v[i][c];
    }
  }
  MPI_Allreduce(&mv2, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
  double dof = 3 * sum[4] - 3, t = total * MD_MVV2E / (dof * MD_BOLTZ);
  double scale = t > 0 ? sqrt(temperature / t) : 0;
  for (int i = 0; i < a->nlocal; i++)
    for (int c = 0; c < 3; c++) a->v[i][c] *= scale;
}

/* ---- gathering and writing ---------------------------------------------------- */

static int cmp_row(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Rank 0 receives every rank's `n` rows of `width` doubles (the first one
 * the atom id) and sorts them by id; *all is malloc'ed there, NULL elsewhere. */
static int gather_rows(const double *mine, int n, int width, MPI_Comm comm, double **all,
                       long long *total_rows, wf_status *st) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int count = n * width, total = 0;
  int *counts = NULL, *displs = NULL;
  *all = NULL;
  if (rank == 0) {
    counts = wf_alloc_small((size_t)nranks, sizeof *counts, "counts");
    displs = wf_alloc_small((size_t)nranks, sizeof *displs, "offsets");
  }
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
  if (rank == 0) {
    for (int r = 0; r < nranks; r++) displs[r] = total, total += counts[r];
    *all = malloc(((size_t)total + 1) * sizeof **all);
  }
  MPI_Gatherv(mine, count, MPI_DOUBLE, *all, counts, displs, MPI_DOUBLE, 0, comm);
  free(counts), free(displs);
  wf_status_clear(st);
  *total_rows = total / width;
  if (rank == 0 && *all) qsort(*all, (size_t)*total_rows, (size_t)width * sizeof **all, cmp_row);
  if (rank == 0 && !*all) wf_fail(st, WF_ERR_RUNTIME, "out of memory gathering %d values", total);
  wf_status_bcast(comm, st);
  return st->code;
}

int md_gather_vec(const md_atoms *a, const md_vec *v, MPI_Comm comm, double **rows, long long *n,
                  wf_status *st) {
  double *mine = malloc(((size_t)a->nlocal * 4 + 1) * sizeof *mine);
  if (!mine) return wf_fail(st, WF_ERR_RUNTIME, "out of memory"); /* not collective: fatal */
  for (int i = 0; i < a->nlocal; i++) {
    mine[4 * i] = (double)a->id[i];
    memcpy(mine + 4 * i + 1, v[i], sizeof(md_vec));
  }
  int rc = gather_rows(mine, a->nlocal, 4, comm, rows, n, st);
  free(mine);
  return rc;
}

enum { ROW = 8 }; /* id, type, x, v */

int md_data_write(const char *path, const char *title, const md_box *box, const md_atoms *a,
                  int nspecies, const double *mass, MPI_Comm comm, wf_status *st) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  double *mine = malloc(((size_t)a->nlocal * ROW + 1) * sizeof *mine);
  if (!mine) return wf_fail(st, WF_ERR_RUNTIME, "out of memory"); /* not collective: fatal */
  for (int i = 0; i < a->nlocal; i++) {
    double *r = mine + (size_t)i * ROW;
    r[0] = (double)a->id[i];
    r[1] = a->type[i] + 1;
    memcpy(r + 2, a->x[i], sizeof(md_vec));
    memcpy(r + 5, a->v[i], sizeof(md_vec));
  }
  double *all;
  long long natoms;
  int rc = gather_rows(mine, a->nlocal, ROW, comm, &all, &natoms, st);
  free(mine);
  if (rc != WF_OK) return rc;
  if (rank == 0) {
    size_t cap = 256 + (size_t)natoms * 260 + (size_t)nspecies * 40, len = 0;
    char *text = malloc(cap);
    if (!text) {
      wf_fail(st, WF_ERR_RUNTIME, "out of memory writing %s", path);
    } else {
#define PUT(...) len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__)
      PUT("%s\n\n%lld atoms\n%d atom types\n\n", title, natoms, nspecies);
      const char *names[3] = {"x", "y", "z"};
      for (int c = 0; c < 3; c++)
        PUT("%.17g %.17g %slo %shi\n", box->lo[c], box->lo[c] + box->len[c], names[c], names[c]);
      PUT("\nMasses\n\n");
      for (int t = 0; t < nspecies; t++) PUT("%d %.17g\n", t + 1, mass[t]);
      PUT("\nAtoms # atomic\n\n");
      for (long long i = 0; i < natoms; i++) {
        const double *r = all + i * ROW;
        PUT("%.0f %.0f %.17g %.17g %.17g\n", r[0], r[1], r[2], r[3], r[4]);
      }
      PUT("\nVelocities\n\n");
      for (long long i = 0; i < natoms; i++) {
        const double *r = all + i * ROW;
        PUT("%.0f %.17g %.17g %.17g\n", r[0], r[5], r[6], r[7]);
      }
#undef PUT
      wf_write_text_atomic(path, text, st);
    }
    free(text);
  }
  free(all);
  wf_status_bcast(comm, st);
  return st->code;
}
