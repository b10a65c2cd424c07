#include "wf_model.h"

#include <math.h>

double wf_model_words(const wf_hw *hw, size_t bytes) {
  return ceil((double)bytes / hw->link_bytes_per_cycle);
}

/* Each PE's value travels `width` hops each way, forwarded (and copied off)
 * by every router it passes, so one link carries `width` elements per
 * direction in the x phase. With corners, the y phase forwards the x-extended
 * rows: (2w+1)*w elements per link, after the x phase. Without corners the
 * two phases run at once. Latency: hops times the longest logical link. */
static double halo_y_words(const wf_hw *hw, size_t elem_bytes, int width, bool corners) {
  return (corners ? (2.0 * width + 1.0) * width : width) * wf_model_words(hw, elem_bytes);
}

double wf_model_halo_link_words(const wf_hw *hw, size_t elem_bytes, int width, bool corners) {
  return halo_y_words(hw, elem_bytes, width, corners); /* never fewer than the x links carry */
}

double wf_model_halo_cycles(const wf_hw *hw, const wf_grid *g, size_t elem_bytes, int width,
                            bool corners) {
  double latency = width * g->max_link_hops * hw->hop_cycles;
  double x = width * wf_model_words(hw, elem_bytes) + latency;
  double y = halo_y_words(hw, elem_bytes, width, corners) + latency;
  return corners ? x + y : fmax(x, y);
}

double wf_model_bcast_cycles(const wf_hw *hw, const wf_grid *g, size_t elem_bytes, int n,
                             int root) {
  int far = root > n - 1 - root ? root : n - 1 - root;
  return wf_model_words(hw, elem_bytes) + far * g->max_link_hops * hw->hop_cycles;
}

/* A pipelined chain along every row to column 0, then along column 0 to PE
 * (0, 0): each hop costs the router latency plus one add. Broadcasting the
 * result back costs the same path without the adds. */
double wf_model_reduce_cycles(const wf_hw *hw, const wf_grid *g, int nvals, bool all) {
  double words = nvals * wf_model_words(hw, sizeof(double));
  double hops = (double)(g->nx - 1 + g->ny - 1) * g->max_link_hops;
  double reduce = words + hops * (hw->hop_cycles + 1.0);
  return all ? reduce + words + hops * hw->hop_cycles : reduce;
}

double wf_model_compute_cycles(const wf_hw *hw, double flops, double mem_bytes) {
  return fmax(flops / hw->flops_per_cycle, mem_bytes / hw->mem_bytes_per_cycle);
}

double wf_model_seconds(const wf_hw *hw, double cycles) {
  return cycles / (hw->clock_hz * WF_MODEL_EFFICIENCY);
}

bool wf_model_fits(const wf_hw *hw, double bytes_per_pe) { return bytes_per_pe <= hw->sram_bytes; }
