/* The wafer projection of an EAM run (md_model.h): one atom per PE; the neighbourhood reach
 * and neighbour counts from the perfect lattice, the cycles of a step, and their report lines
 * and JSON. */
#include "md_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "md_fold.h"
#include "wf_model.h"

/* Hops between two PEs on a periodic layout of n PEs (a periodic crystal is
 * laid out as a folded torus, which keeps wrap-around neighbours near). */
static int hops(int a, int b, int n) {
  int d = abs(a - b);
  return d < n - d ? d : n - d;
}

static int64_t site_id(const md_fold *f, int i, int j, int k, int b) {
  return (((int64_t)k * f->cells[1] + j) * f->cells[0] + i) * f->nbasis + b + 1;
}

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* Reach and neighbour counts over the perfect lattice: every site of the
 * cell column at (0, 0) against every site within cutoff + skin. */
static void lattice_reach(md_model_result *m, const md_fold *f, const double (*basis)[3], double a,
                          double cut, double skin) {
  double rl = cut + skin, rl2 = rl * rl, rc2 = cut * cut;
  int span = (int)ceil(rl / a) + 1;
  long long ncut = 0, nlist = 0, sources = 0;
  for (int k = 0; k < f->cells[2]; k++)
    for (int b = 0; b < f->nbasis; b++, sources++) {
      int x0, y0;
      md_fold_pe(f, site_id(f, 0, 0, k, b), &x0, &y0);
      for (int dk = -span; dk <= span; dk++)
        for (int dj = -span; dj <= span; dj++)
          for (int di = -span; di <= span; di++)
            for (int b2 = 0; b2 < f->nbasis; b2++) {
              double dx = (di + basis[b2][0] - basis[b][0]) * a;
              double dy = (dj + basis[b2][1] - basis[b][1]) * a;
              double dz = (dk + basis[b2][2] - basis[b][2]) * a;
              double r2 = dx * dx + dy * dy + dz * dz;
              if (r2 >= rl2 || r2 == 0) continue;
              nlist++;
              ncut += r2 < rc2;
              int x1, y1;
              md_fold_pe(f, site_id(f, mod(di, f->cells[0]), mod(dj, f->cells[1]),
                                    mod(k + dk, f->cells[2]), b2),
                         &x1, &y1);
              int hx = hops(x0, x1, f->pe_x), hy = hops(y0, y1, f->pe_y);
              m->hx = hx > m->hx ? hx : m->hx;
              m->hy = hy > m->hy ? hy : m->hy;
            }
    }
  m->n_cut = (double)ncut / (double)sources;
  m->n_list = (double)nlist / (double)sources;
}

/* A multicast of `w` words from every PE of the neighbourhood: each PE
 * sends its own east and west (the routers carry it hx PEs on), then its
 * row segment of 2hx + 1 PEs north and south (hy PEs on), a send a
 * direction; it moves the words of its neighbourhood into SRAM as they come
 * in, and the work reads them there, overlapped with their arrival as
 * docs/model.md's convention says (wf_model_phase); the links are the
 * routers', beside the cores. */
static wf_range phase(const wf_hw *hw, const md_model_result *m, int link_hops, double w,
                      wf_range work) {
  double in = w * m->candidates, out = 2 * w + 2 * (2.0 * m->hx + 1) * w;
  wf_range core = wf_model_phase(hw, work, wf_model_receive(hw, in), in, out);
  double links = w * m->hx + w * (2.0 * m->hx + 1) * m->hy;
  double latency = wf_model_latency(hw, (m->hx + m->hy) * link_hops);
  return wf_range_plus(wf_model_links(core, links), latency);
}

void md_model_lattice(md_model_result *m, const md_lattice *l, const eam_potential *pot,
                      double skin, const wf_hw *hw, int link_hops) {
  memset(m, 0, sizeof *m);
  md_fold f = md_fold_make(l->kind, l->cells);
  const double(*basis)[3];
  md_lattice_basis(l->kind, &basis);
  m->pe_x = f.pe_x, m->pe_y = f.pe_y, m->fx = f.fx, m->fy = f.fy;
  lattice_reach(m, &f, basis, l->a, pot->cut, skin);

  m->candidates = (2.0 * m->hx + 1) * (2.0 * m->hy + 1) - 1;
  m->words_in = 4 * m->candidates;
  wf_range pass1 =
      wf_model_scalar(hw, MD_OPS_TEST * m->n_list + MD_OPS_DENSITY * m->n_cut, m->n_cut, 0);
  wf_range pass2 = wf_model_scalar(hw, MD_OPS_FORCE * m->n_cut, 0, m->n_cut);
  m->phase_positions = phase(hw, m, link_hops, 3, pass1);
  m->phase_forces = phase(hw, m, link_hops, 1, pass2);
  m->cycles = wf_range_plus(wf_range_add(m->phase_positions, m->phase_forces), MD_OPS_ATOM);

  /* A PE holds the spline tables of every element (F, rho) and pair (z2):
   * 7 fp32 coefficients per point, as LAMMPS keeps them. */
  int ne = pot->nelements, npairs = ne * (ne + 1) / 2;
  m->table_bytes = 7 * 4.0 * (ne * (pot->nrho + 1.0) + (ne + npairs) * (pot->nr + 1.0));
}

int md_model_project(md_model_result *m, const md_lattice *l, const eam_potential *pot,
                     double skin, wf_run *run, wf_status *st) {
  const wf_hw *hw = &run->wafer->hw;
  for (int a = 0; a < 3; a++)
    if (l->cells[a] * l->a < 2 * (pot->cut + skin))
      return wf_deck_fail(run->deck, "eam", "cells", st,
                          "the wafer model needs a box of at least 2 (cutoff + skin) = %.4g A "
                          "along each axis; axis %c is %.4g A",
                          2 * (pot->cut + skin), "xyz"[a], l->cells[a] * l->a);
  md_model_lattice(m, l, pot, skin, hw, run->wafer->grid.max_link_hops);
  int nbasis = strcmp(l->kind, "fcc") == 0 ? 4 : 2;
  double natoms = (double)nbasis * l->cells[0] * l->cells[1] * l->cells[2];
  run->model = (wf_projection){.valid = true,
                               .unit = "step",
                               .seconds = wf_model_seconds(hw, m->cycles),
                               .bytes_per_pe = m->table_bytes + 4 * m->n_list + 64,
                               .sram_for_data = wf_model_sram_for_data(hw),
                               .pes_needed = natoms,
                               .pes_offered = (double)hw->pe_nx * hw->pe_ny};
  return WF_OK;
}

void md_model_report(const md_model_result *m, const wf_run *run, wf_report *rep) {
  const wf_hw *hw = &run->wafer->hw;
  const wf_projection *p = &run->model;
  wf_report_model(rep, p);
  wf_report_note(rep, "one atom per PE, fold %dx%d PEs per column", m->fx, m->fy);
  long long grid[2] = {m->pe_x, m->pe_y}, reach[2] = {m->hx, m->hy};
  wf_report_ints(rep, "pe_grid", grid, 2, "-> %d PEs");
  wf_report_ints(rep, "reach_hops", reach, 2, "reach %d hops");
  wf_report_num(rep, "candidates", m->candidates, "%.0f candidates");
  wf_report_num(rep, "neighbours", m->n_cut, "%.1f neighbours");
  wf_report_num(rep, "listed", m->n_list, "%.1f listed");
  wf_report_range(rep, "cycles_per_step", m->cycles.lo, m->cycles.hi, 1, "%.0f cycles/step");
  wf_report_note(rep, "positions %.0f-%.0f + forces %.0f-%.0f + %d", m->phase_positions.lo,
                 m->phase_positions.hi, m->phase_forces.lo, m->phase_forces.hi, MD_OPS_ATOM);
  wf_report_num(rep, "words_in_per_step", m->words_in, "%.0f words in a step");
  wf_range rate = wf_range_inverse(p->seconds);
  wf_report_range(rep, "timesteps_per_second", rate.lo, rate.hi, 1, "%.0f timesteps/s");
  if (p->pes_needed > p->pes_offered)
    wf_report_note(rep, "the crystal needs %.1f%% more PEs than the %s offers (%dx%d)",
                   100 * (p->pes_needed / p->pes_offered - 1), hw->machine, hw->pe_nx,
                   hw->pe_ny);
  wf_report_end(rep);
}
