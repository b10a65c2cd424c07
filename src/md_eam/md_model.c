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

void md_model_project(md_model_result *m, const md_sim *sim, const md_lattice *lattice,
                      const wf_wafer *w) {
  memset(m, 0, sizeof *m);
  m->hw = w->hw.name;
  const wf_hw *hw = &w->hw;
  int valid = lattice != NULL;
  md_fold f = {0};
  if (valid) f = md_fold_make(lattice->kind, lattice->cells);
  /* reach and neighbour count over the run's pairs within the cutoff */
  const md_atoms *a = &sim->atoms;
  const md_neigh *nl = &sim->nl;
  const double cutsq = sim->pot->cut * sim->pot->cut;
  int reach[2] = {0, 0};
  double count = 0;
  for (int i = 0; i < a->nlocal; i++) {
    int xi = 0, yi = 0;
    if (valid) md_fold_pe(&f, a->id[i], &xi, &yi);
    for (int k = nl->first[i]; k < nl->first[i + 1]; k++) {
      int j = nl->list[k];
      double dx = a->x[i][0] - a->x[j][0], dy = a->x[i][1] - a->x[j][1],
             dz = a->x[i][2] - a->x[j][2];
      if (dx * dx + dy * dy + dz * dz >= cutsq) continue;
      count += k < nl->half_end[i] ? 2 : 1; /* an owned pair is both atoms' neighbour */
      if (!valid) continue;
      int xj, yj;
      md_fold_pe(&f, a->id[j], &xj, &yj);
      int hx = hops(xi, xj, f.pe_x), hy = hops(yi, yj, f.pe_y);
      reach[0] = hx > reach[0] ? hx : reach[0];
      reach[1] = hy > reach[1] ? hy : reach[1];
    }
  }
  int reach_all[2];
  double count_all;
  MPI_Allreduce(reach, reach_all, 2, MPI_INT, MPI_MAX, sim->dom.comm);
  MPI_Allreduce(&count, &count_all, 1, MPI_DOUBLE, MPI_SUM, sim->dom.comm);
  m->neighbours = count_all / (double)sim->natoms;
  if (!valid) return;
  m->valid = true;
  m->pe_x = f.pe_x, m->pe_y = f.pe_y, m->fx = f.fx, m->fy = f.fy;
  m->hx = reach_all[0], m->hy = reach_all[1];
  m->fits = m->pe_x <= hw->pe_nx && m->pe_y <= hw->pe_ny;

  /* Compute per PE and step (fp32): 8 flops per candidate distance test;
   * per neighbour within the cutoff a density spline (~10 flops with the
   * square root) and a force term (two splines, ~40 flops); the embedding
   * spline and the two half kicks (~30 flops). Memory: 12 B per candidate
   * position, 3 spline rows of 28 B per neighbour. */
  m->candidates = (2.0 * m->hx + 1) * (2.0 * m->hy + 1) - 1;
  double flops = 8 * m->candidates + 50 * m->neighbours + 30;
  double bytes = 12 * m->candidates + 84 * m->neighbours + 64;
  m->compute_cycles = wf_model_compute_cycles(hw, flops, bytes);
  /* Neighbourhood multicast of w words per PE: along x each link carries the
   * words of hx PEs; then along y each PE forwards its row segment of
   * 2hx + 1 PEs over hy links. Positions (3 words) and F' (1 word). */
  double words_per_cycle = hw->link_bytes_per_cycle / 4.0, exchange = 0;
  for (int w_words = 1; w_words <= 3; w_words += 2)
    exchange += (w_words * m->hx + w_words * (2.0 * m->hx + 1) * m->hy) / words_per_cycle +
                (m->hx + m->hy) * hw->hop_cycles;
  m->exchange_cycles = exchange;
  m->cycles = m->compute_cycles + m->exchange_cycles;
  m->seconds_per_step = wf_model_seconds(hw, m->cycles);
  m->steps_per_second = 1.0 / m->seconds_per_step;
}

void md_model_print(const md_model_result *m, FILE *out) {
  if (!m->valid) {
    fprintf(out, "eam: wafer model: lattice runs only (the fold maps lattice sites to PEs); "
                 "%.1f neighbours per atom\n",
            m->neighbours);
    return;
  }
  fprintf(out,
          "eam: wafer model (%s, one atom per PE, fold %dx%d PEs per column -> %dx%d PEs%s): "
          "reach %dx%d hops, %.0f candidates, %.1f neighbours; %.0f cycles = compute %.0f + "
          "exchange %.0f -> %.0f timesteps/s (published: over %.0f at ~800k atoms on a WSE-2; "
          "ratio %.2f)\n",
          m->hw, m->fx, m->fy, m->pe_x, m->pe_y, m->fits ? "" : ", does NOT fit", m->hx, m->hy,
          m->candidates, m->neighbours, m->cycles, m->compute_cycles, m->exchange_cycles,
          m->steps_per_second, MD_PUBLISHED_STEPS_PER_S,
          m->steps_per_second / MD_PUBLISHED_STEPS_PER_S);
}

void md_model_json(const md_model_result *m, wf_json *j) {
  wf_json_begin(j, "model");
  wf_json_bool(j, "valid", m->valid);
  wf_json_num(j, "neighbours", m->neighbours);
  if (m->valid) {
    long long grid[2] = {m->pe_x, m->pe_y}, reach[2] = {m->hx, m->hy};
    wf_json_ints(j, "pe_grid", grid, 2);
    wf_json_ints(j, "reach_hops", reach, 2);
    wf_json_bool(j, "fits", m->fits);
    wf_json_num(j, "candidates", m->candidates);
    wf_json_num(j, "cycles_per_step", m->cycles);
    wf_json_num(j, "compute_cycles", m->compute_cycles);
    wf_json_num(j, "exchange_cycles", m->exchange_cycles);
    wf_json_num(j, "timesteps_per_second", m->steps_per_second);
    wf_json_num(j, "published_timesteps_per_second", MD_PUBLISHED_STEPS_PER_S);
    wf_json_num(j, "ratio_to_published", m->steps_per_second / MD_PUBLISHED_STEPS_PER_S);
  }
  wf_json_end(j);
}
