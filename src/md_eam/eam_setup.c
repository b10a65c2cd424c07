/* `wafer eam`'s deck (eam_setup.h): the [eam] section's keys and their
 * checks; the section resolved (the potential, the lattice or data file, the
 * run's parameters); then the domain and the atoms. */
#include "eam_setup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "md_fold.h"
#include "wf_io.h"
#include "wf_memory.h"
#include "wf_parse.h"
#include "wf_reference.h"
#include "wf_wafer.h"

/* ---- the [eam] section: its keys ---- */

static int check_cells(const char *v, char *why, size_t len) {
  long long c[3];
  int rc = wf_parse_dims(v, 3, 1, EAM_MAX_CELLS_AXIS, c);
  if (rc == WF_PARSE_OK && c[0] * c[1] * c[2] * 4 <= EAM_MAX_ATOMS) return 0;
  if (rc == WF_PARSE_SYNTAX)
    snprintf(why, len, "expected NXxNYxNZ unit cells, e.g. 8x8x8");
  else
    snprintf(why, len, "each axis 1 .. %d cells, and at most %lld atoms in all", EAM_MAX_CELLS_AXIS,
             EAM_MAX_ATOMS);
  return -1;
}

static int check_positive(const char *v, char *why, size_t len) {
  if (strtod(v, NULL) > 0) return 0;
  snprintf(why, len, "must be > 0");
  return -1;
}

static const wf_key eam_keys[] = {
    {"potential", WF_KEY_STRING, "Cu_u3.eam", 0, 0, NULL,
     "EAM file: *.eam is DYNAMO funcfl (pair_style eam), *.eam.alloy setfl (eam/alloy); a bare "
     "name not found here is looked up in $LAMMPS_POTENTIALS, then " EAM_LAMMPS_POTENTIALS,
     NULL},
    {"elements", WF_KEY_STRING, "", 0, 0, NULL,
     "lattice: its elements (several: a random mix by atom id); data file: the element of each "
     "atom type. '' = the potential's first element (lattice) or all of them in order (data)",
     NULL},
    {"fractions", WF_KEY_STRING, "", 0, 0, NULL,
     "lattice with several elements: the share of each, e.g. '0.7 0.3' ('' = equal)", NULL},
    {"lattice", WF_KEY_CHOICE, "potential", 0, 0, "potential|fcc|bcc",
     "crystal structure ('potential': the one the potential file gives for the first element)",
     NULL},
    {"lattice_constant", WF_KEY_REAL, "0", 0, 100, NULL,
     "lattice constant in A (0: the potential file's)", NULL},
    {"cells", WF_KEY_STRING, "8x8x8", 0, 0, NULL, "unit cells of the crystal, NXxNYxNZ",
     check_cells},
    {"data", WF_KEY_INPUT, "", 0, 0, NULL,
     "LAMMPS data file (atom_style atomic) to start from instead of a lattice", NULL},
    {"mapping", WF_KEY_CHOICE, "columns", 0, 0, "columns|fold",
     "columns: a PE owns the atoms in its x-y column of the box, atoms migrate as they move; "
     "fold: one lattice site per PE, the crystal folded onto the PE grid (the wafer's mapping; "
     "lattice runs, [wafer] pe_grid must be the fold's, which the error gives)",
     NULL},
    {"velocities", WF_KEY_CHOICE, "create", 0, 0, "create|data",
     "create: Maxwell-Boltzmann at `temperature`; data: the data file's Velocities section", NULL},
    {"temperature", WF_KEY_REAL, "1600", 0, 1e6, NULL, "initial temperature (K)", NULL},
    {"seed", WF_KEY_INT, "376847", 0, 2147483647, NULL,
     "seed of the velocity draw (and of the species mix)", NULL},
    {"dt", WF_KEY_REAL, "0.005", 0, 1, NULL, "timestep (ps)", check_positive},
    {"steps", WF_KEY_INT, "100", 0, 1e9, NULL, "timesteps to run", NULL},
    {"thermo", WF_KEY_INT, "50", 0, 1e9, NULL,
     "thermo output every N steps (0: first and last step only)", NULL},
    {"skin", WF_KEY_REAL, "1.0", 0, 10, NULL,
     "neighbour list skin (A): lists hold pairs within cutoff + skin", NULL},
    {"kernel", WF_KEY_CHOICE, "auto", 0, 0, "auto|avx512|avx2|scalar",
     "the force loops' variant (auto: the widest this CPU runs; all give the same bits)", NULL},
    {"neigh_delay", WF_KEY_INT, "0", 0, 1e6, NULL,
     "steps after a list build before displacements are checked again (LAMMPS neigh_modify "
     "delay)",
     NULL},
    {"overlap", WF_KEY_REAL, "0.5", 0, 10, NULL,
     "atoms closer than this (A) are overlapping: an input error", NULL},
    {"thermostat", WF_KEY_CHOICE, "none", 0, 0, "none|berendsen",
     "none: NVE; berendsen: velocity rescaling towards `temperature` (LAMMPS fix temp/berendsen)",
     NULL},
    {"damp", WF_KEY_REAL, "0.1", 0, 1e6, NULL, "thermostat time constant (ps)", check_positive},
    {"model_only", WF_KEY_BOOL, "false", 0, 0, NULL,
     "only project this lattice onto the wafer (no atoms, no run): for the published systems",
     NULL},
    {"crosscheck", WF_KEY_CHOICE, "auto", 0, 0, "auto|none|lammps",
     "run LAMMPS from the same data file and compare the thermo rows and the forces at step "
     "min(steps, crosscheck_steps); auto: when `lmp` runs here, else the run says the check is "
     "unavailable",
     NULL},
    {"crosscheck_steps", WF_KEY_INT, "200", 0, 1e9, NULL,
     "thermo rows are compared value by value up to this step; beyond it chaos amplifies "
     "round-off and only the energy drift is compared",
     NULL},
    {"lmp", WF_KEY_STRING, "lmp", 0, 0, NULL, "the LAMMPS command for the cross-check", NULL},
    {"plot", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "PNG of temperature and energy drift against time, with LAMMPS's rows ('' = none; needs "
     "python3-matplotlib)",
     NULL},
    {"write_data", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "write the final state as a LAMMPS data file ('' = none)", NULL},
    {"dump_every", WF_KEY_INT, "0", 0, 1e9, NULL,
     "trajectory frames in the [output] file (H5MD) every N steps (0: first and last only)", NULL},
    {"checkpoint", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "HDF5 checkpoint file, rewritten every checkpoint_every steps and at the end ('' = none)",
     wf_key_hdf5},
    {"checkpoint_every", WF_KEY_INT, "0", 0, 1e9, NULL,
     "steps between checkpoints (0: only at the end); a restart from one with the same "
     "checkpoint_every continues bit for bit (each checkpoint's step rebuilds the lists)",
     NULL},
    {"restart", WF_KEY_INPUT, "", 0, 0, NULL,
     "continue from this checkpoint (same deck otherwise; eam.steps stays the last step)", wf_key_hdf5},
};
static const wf_section eam_section = {
    "eam", "EAM molecular dynamics on the PE grid (atoms bound to PEs by x-y position), "
           "checked against LAMMPS.",
    eam_keys, (int)(sizeof eam_keys / sizeof eam_keys[0]),
    "restart",
    "dt steps thermo model_only crosscheck crosscheck_steps lmp dump_every checkpoint_every"};
const wf_section *const eam_sections[] = {&eam_section};

/* ---- the section, resolved ---- */

/* A potential named without a directory that is not here is looked for among
 * LAMMPS's: where LAMMPS_POTENTIALS says (LAMMPS's own variable, which a
 * centre's LAMMPS module sets), then where Debian's lammps-data puts them. */
static void resolve_potential(const char *name, char *path, size_t len) {
  snprintf(path, len, "%s", name);
  if (strchr(name, '/') || access(name, R_OK) == 0) return;
  const char *env = getenv("LAMMPS_POTENTIALS");
  const char *dirs[] = {env && env[0] ? env : NULL, EAM_LAMMPS_POTENTIALS};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
    char alt[1024];
    if (!dirs[i]) continue;
    snprintf(alt, sizeof alt, "%s/%s", dirs[i], name);
    if (access(alt, R_OK) == 0) {
      snprintf(path, len, "%s", alt);
      return;
    }
  }
}

/* Species from the `elements` key: element indices of the potential. */
static int parse_elements(const wf_deck *d, const eam_potential *pot, int *species, int *n,
                          wf_status *st) {
  char buf[WF_DECK_TEXT_MAX];
  snprintf(buf, sizeof buf, "%s", wf_deck_str(d, "eam", "elements"));
  *n = 0;
  for (char *save = NULL, *t = strtok_r(buf, " \t,", &save); t; t = strtok_r(NULL, " \t,", &save)) {
    if (*n == MD_MAX_SPECIES)
      return wf_deck_fail(d, "eam", "elements", st, "at most %d elements", MD_MAX_SPECIES);
    int e = eam_element(pot, t);
    if (e < 0) {
      char have[128] = "";
      for (int i = 0; i < pot->nelements; i++)
        snprintf(have + strlen(have), sizeof have - strlen(have), " %s", pot->element[i]);
      return wf_deck_fail(d, "eam", "elements", st, "element '%s' is not in %s (it has:%s)", t,
                          pot->path, have);
    }
    species[(*n)++] = e;
  }
  return WF_OK;
}

static int lattice_spec(const wf_deck *d, const eam_potential *pot, md_lattice *l, wf_status *st) {
  memset(l, 0, sizeof *l);
  if (parse_elements(d, pot, l->species, &l->nspecies, st) != WF_OK) return st->code;
  if (l->nspecies == 0) l->species[0] = 0, l->nspecies = 1;
  const char *frac = wf_deck_str(d, "eam", "fractions");
  double sum = 0;
  if (!frac[0]) {
    for (int s = 0; s < l->nspecies; s++) l->fraction[s] = 1.0 / l->nspecies;
    sum = 1;
  } else {
    char *end;
    const char *p = frac;
    for (int s = 0; s < l->nspecies; s++, p = end) {
      l->fraction[s] = strtod(p, &end);
      if (end == p || !(l->fraction[s] >= 0))
        return wf_deck_fail(d, "eam", "fractions", st, "expected %d non-negative shares",
                            l->nspecies);
      sum += l->fraction[s];
    }
    while (*p == ' ') p++;
    if (*p || fabs(sum - 1) > 1e-9)
      return wf_deck_fail(d, "eam", "fractions", st, "expected %d shares summing to 1",
                          l->nspecies);
  }
  const char *kind = wf_deck_str(d, "eam", "lattice");
  const int first = l->species[0];
  snprintf(l->kind, sizeof l->kind, "%s",
           strcmp(kind, "potential") == 0 ? pot->lattice[first] : kind);
  if (strcmp(l->kind, "fcc") != 0 && strcmp(l->kind, "bcc") != 0)
    return wf_deck_fail(d, "eam", "lattice", st,
                        "%s gives lattice '%s' for %s; wafer builds fcc or bcc: set eam.lattice",
                        pot->path, pot->lattice[first], pot->element[first]);
  l->a = wf_deck_real(d, "eam", "lattice_constant");
  if (l->a == 0) l->a = pot->lattice_a[first];
  if (!(l->a > 0))
    return wf_deck_fail(d, "eam", "lattice_constant", st,
                        "%s gives no lattice constant: set eam.lattice_constant", pot->path);
  long long c[3];
  wf_parse_dims(wf_deck_str(d, "eam", "cells"), 3, 1, EAM_MAX_CELLS_AXIS,
                c); /* checked by its key */
  for (int a = 0; a < 3; a++) l->cells[a] = (int)c[a];
  l->seed = (uint64_t)wf_deck_int(d, "eam", "seed");
  return WF_OK;
}

int eam_read_setup(const wf_run *run, eam_setup *s, wf_status *st) {
  const wf_deck *d = run->deck;
  memset(s, 0, sizeof *s);
  resolve_potential(wf_deck_str(d, "eam", "potential"), s->potential, sizeof s->potential);
  if (eam_read_bcast(&s->pot, s->potential, run->comm, st) != WF_OK)
    return wf_deck_blame(d, "eam", "potential", st);
  if (s->pot.nelements > MD_MAX_SPECIES) /* EAM_MAX_ELEMENTS == MD_MAX_SPECIES today */
    return wf_deck_fail(d, "eam", "potential", st, "at most %d elements", MD_MAX_SPECIES);
  const bool thermostat = strcmp(wf_deck_str(d, "eam", "thermostat"), "berendsen") == 0;
  s->temperature = wf_deck_real(d, "eam", "temperature");
  s->par = (md_params){.dt = wf_deck_real(d, "eam", "dt"),
                       .skin = wf_deck_real(d, "eam", "skin"),
                       .overlap = wf_deck_real(d, "eam", "overlap"),
                       .neigh_delay = (int)wf_deck_int(d, "eam", "neigh_delay"),
                       .berendsen_t = s->temperature,
                       .berendsen_damp = thermostat ? wf_deck_real(d, "eam", "damp") : 0,
                       .kernel = eam_simd_pick(wf_deck_str(d, "eam", "kernel"))};
  /* on every rank's CPU (a mixed allocation may lack it on some), before any work */
  if (!s->par.kernel)
    wf_deck_fail(d, "eam", "kernel", st,
                 "this CPU (or build) does not run the %s kernel (auto picks the widest that does)",
                 wf_deck_str(d, "eam", "kernel"));
  wf_status_agree(run->comm, st);
  if (st->code != WF_OK) return st->code;
  s->steps = wf_deck_int(d, "eam", "steps");
  s->thermo = wf_deck_int(d, "eam", "thermo");
  s->crosscheck_steps = wf_deck_int(d, "eam", "crosscheck_steps");
  /* LAMMPS runs on rank 0: its PATH decides, for every rank alike. */
  const char *absent = wf_ref_command_absent(wf_deck_str(d, "eam", "lmp"), s->lammps_absent,
                                             sizeof s->lammps_absent);
  MPI_Bcast(s->lammps_absent, sizeof s->lammps_absent, MPI_CHAR, 0, run->comm);
  int have = absent == NULL;
  MPI_Bcast(&have, 1, MPI_INT, 0, run->comm);
  wf_ref_use use;
  if (wf_ref_choose(d, "eam", "crosscheck", "lammps", have ? NULL : s->lammps_absent, &use, st) !=
      WF_OK)
    return st->code;
  s->lammps = use == WF_REF_USE;
  s->lammps_unavailable = use == WF_REF_UNAVAILABLE;

  const char *data = wf_deck_str(d, "eam", "data");
  s->from_data = data[0] != 0;
  if (!s->from_data) {
    if (strcmp(wf_deck_str(d, "eam", "velocities"), "data") == 0)
      return wf_deck_fail(d, "eam", "velocities", st, "'data' needs eam.data (a data file)");
    return lattice_spec(d, &s->pot, &s->lattice, st);
  }
  char *text;
  if (wf_read_text_bcast(run->comm, data, "LAMMPS data file", WF_MAX_BCAST_BYTES, &text, st) !=
      WF_OK)
    return wf_deck_blame(d, "eam", "data", st);
  int rc = md_data_parse(&s->data, text, data, st);
  free(text);
  if (rc != WF_OK) return rc;
  int n;
  if (parse_elements(d, &s->pot, s->type_species, &n, st) != WF_OK) return st->code;
  if (n == 0) {
    n = s->pot.nelements;
    for (int e = 0; e < n; e++) s->type_species[e] = e;
  }
  if (n != s->data.ntypes)
    return wf_deck_fail(d, "eam", "elements", st,
                        "%s has %d atom types; give the element of each (%d given)", data,
                        s->data.ntypes, n);
  if (strcmp(wf_deck_str(d, "eam", "velocities"), "data") == 0 && !s->data.has_velocities)
    return wf_deck_fail(d, "eam", "velocities", st, "%s has no Velocities section", data);
  return WF_OK;
}

void eam_free_setup(eam_setup *s) {
  eam_free(&s->pot);
  md_data_free(&s->data);
}

/* Bytes a rank holds for each atom it owns: the atom's arrays, its share of
 * the half neighbour list (Cu: about 40 entries), bins and the arrays'
 * spare capacity. 660 B measured: the peak resident set of 1-rank runs of
 * 131,072 and 442,368 Cu atoms differs by 206 MB (2026-11-28). The ghost
 * shell is not counted, so a run this refuses could not have fitted. */
#define EAM_BYTES_PER_ATOM 650.0

/* Refuse a crystal or data file whose atoms cannot fit in the node's memory,
 * before any is placed (it once met the OOM killer 43 s in). Collective. */
static int check_memory(const wf_run *run, const eam_setup *s, wf_status *st) {
  double natoms;
  if (s->from_data) {
    natoms = (double)s->data.natoms;
  } else {
    const double(*basis)[3];
    natoms = md_lattice_basis(s->lattice.kind, &basis);
    for (int a = 0; a < 3; a++) natoms *= s->lattice.cells[a];
  }
  int nranks;
  MPI_Comm_size(run->comm, &nranks);
  char what[96];
  snprintf(what, sizeof what, "EAM's %.4g atoms", natoms);
  if (wf_memory_fits(run->comm, natoms / nranks * EAM_BYTES_PER_ATOM, what,
                     "fewer cells, or more nodes", st) != WF_OK)
    return wf_deck_blame(run->deck, "eam", s->from_data ? "data" : "cells", st);
  return WF_OK;
}

int eam_build_system(const wf_run *run, eam_setup *s, md_domain *dom, md_atoms *atoms,
                     wf_status *st) {
  const wf_deck *d = run->deck;
  if (check_memory(run, s, st) != WF_OK) return st->code;
  md_box box = s->from_data ? s->data.box : md_lattice_box(&s->lattice);
  if (md_domain_create(dom, &run->wafer->fab, &box, s->pot.cut, s->pot.cut + s->par.skin, st) !=
      WF_OK)
    return wf_deck_blame(d, "eam", s->from_data ? "data" : "cells", st);
  if (strcmp(wf_deck_str(d, "eam", "mapping"), "fold") == 0) {
    if (s->from_data)
      return wf_deck_fail(
          d, "eam", "mapping", st,
          "the fold places lattice sites on PEs: it needs a lattice, not a data file");
    md_fold fold = md_fold_make(s->lattice.kind, s->lattice.cells);
    if (fold.pe_x != dom->pe_n[0] || fold.pe_y != dom->pe_n[1])
      return wf_deck_fail(d, "eam", "mapping", st,
                          "the fold puts this crystal on a %dx%d PE grid (tiles of %dx%d PEs per "
                          "atom column): set [wafer] pe_grid = %dx%d",
                          fold.pe_x, fold.pe_y, fold.fx, fold.fy, fold.pe_x, fold.pe_y);
    md_domain_set_fold(dom, &fold);
  }
  md_atoms_init(atoms);
  int rc = s->from_data ? md_data_fill(&s->data, s->type_species, dom, atoms, st)
                        : md_lattice_fill(&s->lattice, dom, atoms, st);
  wf_status_agree(run->comm, st);
  if (rc != WF_OK || st->code != WF_OK) return st->code;
  if (!s->from_data || strcmp(wf_deck_str(d, "eam", "velocities"), "create") == 0)
    md_velocity_create(atoms, s->pot.mass, s->temperature, (uint64_t)wf_deck_int(d, "eam", "seed"),
                       run->comm);
  md_data_free(&s->data);
  return WF_OK;
}
