/* The wafer cost model (wf_model.h): cycles of vector instructions and of the fabric's
 * operations (halos, multicasts, reductions, all-to-all), and their conversion to seconds. */
#include "wf_model.h"

#include <math.h>

/* Per element: the SIMD issue rate, the load port and the store port each
 * set a floor; the slowest wins. The ports are certain (wf_hw.c derives
 * them), so the range is one figure; it is a range to compose with those
 * that are not (wf_model_phase). */
wf_range wf_model_vec(const wf_hw *hw, wf_op op, wf_prec p, double n, int reads, int writes) {
  double b = wf_prec_bytes(p);
  double c = fmax(1.0 / hw->simd[p][op], reads * b / hw->read_bytes);
  return wf_range_of(n * fmax(c, writes * b / hw->write_bytes));
}

wf_range wf_model_scalar(const wf_hw *hw, double plain, double sqrts, double divs) {
  return (wf_range){plain + sqrts * hw->sqrt_cycles.lo + divs * hw->div_cycles.lo,
                    plain + sqrts * hw->sqrt_cycles.hi + divs * hw->div_cycles.hi};
}

wf_range wf_model_receive(const wf_hw *hw, double words) {
  return wf_model_vec(hw, WF_OP_MOV, WF_FP32, words, 0, 1);
}

double wf_model_latency(const wf_hw *hw, double hops) {
  return 2 * hw->ramp_cycles + hops * hw->hop_cycles;
}

wf_range wf_model_links(wf_range phase, double link_words) {
  return wf_range_max(phase, link_words);
}

wf_range wf_model_phase(const wf_hw *hw, wf_range sram, wf_range fabric, double in, double out) {
  double ramp_in = wf_model_ramp(hw, in), ramp_out = wf_model_ramp(hw, out);
  return (wf_range){fmax(sram.lo + fabric.lo, fmax(ramp_in, ramp_out)),
                    sram.hi + fmax(fabric.hi, ramp_in) + ramp_out};
}

double wf_model_words(const wf_hw *hw, size_t bytes) {
  return ceil((double)bytes / hw->link_bytes_per_cycle);
}

double wf_model_ramp(const wf_hw *hw, double words) { return words / hw->ramp_words_per_cycle; }

/* Each PE's value travels `width` hops each way, forwarded (and copied off)
 * by every router it passes, so one link carries `width` elements per
 * direction in the x phase. With corners, the y phase forwards the x-extended
 * rows: (2w+1)*w elements per link, after the x phase; without corners the
 * two phases run at once. Whatever the links, every received word enters the
 * core through its ramp: 4w elements, or (2w+1)^2 - 1 with corners. */
static double halo_y_words(const wf_hw *hw, size_t elem_bytes, int width, bool corners) {
  return (corners ? (2.0 * width + 1.0) * width : width) * wf_model_words(hw, elem_bytes);
}

double wf_model_halo_link_words(const wf_hw *hw, size_t elem_bytes, int width, bool corners) {
  return halo_y_words(hw, elem_bytes, width, corners); /* never fewer than the x links carry */
}

double wf_model_halo_intake_words(const wf_hw *hw, size_t elem_bytes, int width, bool corners) {
  double side = 2.0 * width + 1.0;
  return (corners ? side * side - 1.0 : 4.0 * width) * wf_model_words(hw, elem_bytes);
}

wf_range wf_model_halo_cycles(const wf_hw *hw, const wf_grid *g, size_t elem_bytes, int width,
                              bool corners) {
  double words = wf_model_words(hw, elem_bytes);
  double x = width * words, y = halo_y_words(hw, elem_bytes, width, corners);
  double links = corners ? x + y : fmax(x, y);
  double in = wf_model_halo_intake_words(hw, elem_bytes, width, corners);
  /* A send a direction, the routers carrying it on along that direction:
   * its own element each way, or, with corners, east and west, then its
   * row of 2 width + 1 elements north and south. */
  double out = corners ? 2 * words + 2 * (2.0 * width + 1) * words : 4 * words;
  wf_range core = wf_model_phase(hw, wf_range_of(0), wf_model_receive(hw, in), in, out);
  double latency = wf_model_latency(hw, (corners ? 2 : 1) * width * g->max_link_hops);
  return wf_range_plus(wf_model_links(core, links), latency);
}

wf_range wf_model_brick_halo_cycles(const wf_hw *hw, const wf_grid *g, int bx, int by, int nz,
                                    int width, size_t value_bytes) {
  double word = wf_model_words(hw, value_bytes);
  double link = width * (double)(bx > by ? bx : by) * nz * word;
  /* In: every neighbour's `width` columns next to the face; out: the brick's
   * `width` columns next to each face, a send a direction (a brick
   * narrower than `width` sends all it has). */
  double in = 2.0 * width * ((double)bx + by) * nz * word;
  double deep_x = bx < width ? bx : width, deep_y = by < width ? by : width;
  double out = 2.0 * (deep_x * by + deep_y * bx) * nz * word;
  wf_range core = wf_model_phase(hw, wf_range_of(0), wf_model_receive(hw, in), in, out);
  return wf_range_plus(wf_model_links(core, link), wf_model_latency(hw, width * g->max_link_hops));
}

/* Hops from `root` to the farther end of a line of n PEs. */
static int farthest(int n, int root) { return root > n - 1 - root ? root : n - 1 - root; }

double wf_model_bcast_cycles(const wf_hw *hw, const wf_grid *g, size_t elem_bytes, int n,
                             int root) {
  int far = farthest(n, root);
  return wf_model_words(hw, elem_bytes) + wf_model_latency(hw, far * g->max_link_hops);
}

double wf_model_tree_levels(double far) { return far > 0 ? ceil(log2(far + 1)) : 0; }

int wf_model_streams(int n, int root) { return (root > 0) + (root < n - 1); }

/* A router does not add, so partial sums combine in cores, pairwise, the
 * distance doubling a level (a tree); between cores they cross routers at a
 * cycle a hop. At each level the receiving core takes in a segment from each
 * side it has (the sum leaves by the add's own destination, not a send of
 * its own: no `out` word), plus its two ramps and the add; along the
 * critical path the farthest PE's sum crosses `far` hops. */
double wf_model_segment_reduce_cycles(const wf_hw *hw, const wf_grid *g, int n, int root,
                                      double words) {
  int far = farthest(n, root);
  if (far == 0) return 0;
  double level = wf_model_ramp(hw, wf_model_streams(n, root) * words) + 2 * hw->ramp_cycles + 1.0;
  return wf_model_tree_levels(far) * level + far * g->max_link_hops * hw->hop_cycles;
}

double wf_model_chain_reduce_cycles(const wf_hw *hw, const wf_grid *g, int n, int root,
                                    double words) {
  int far = farthest(n, root);
  if (far == 0) return 0;
  double per_core = wf_model_latency(hw, g->max_link_hops) + 1.0; /* and the add */
  return far * per_core + wf_model_ramp(hw, wf_model_streams(n, root) * words);
}

double wf_model_reduce_cycles(const wf_hw *hw, const wf_grid *g, int k, bool all) {
  /* every row into its middle, then the middle column into its middle */
  double reduce = wf_model_segment_reduce_cycles(hw, g, g->nx, (g->nx - 1) / 2, k) +
                  wf_model_segment_reduce_cycles(hw, g, g->ny, (g->ny - 1) / 2, k);
  if (!all) return reduce;
  /* Multicast of the k values from the centre, as any multicast: routers
   * copy wavelets, no core on the way. */
  double far = ceil((g->nx - 1) / 2.0) + ceil((g->ny - 1) / 2.0);
  return reduce + k + wf_model_latency(hw, far * g->max_link_hops);
}

wf_range wf_model_alltoall_cycles(const wf_hw *hw, const wf_grid *g, int n, double words) {
  if (n < 2) return wf_range_of(0); /* nothing leaves the PE */
  /* The links: each direction's n - 1 turns one after another, a turn the
   * sender's n - 1 chunks and the 2 control wavelets that hand the turn on,
   * then its first word's ramps and hop to the next sender. */
  double turn = (n - 1) * words + 2 + wf_model_latency(hw, g->max_link_hops);
  double links = (n - 1) * turn;
  /* A core moves its own n - 1 chunks in and sends its n - 1 each way it
   * has a neighbour (a middle PE both ways, an end PE one). */
  double in = (n - 1) * words;
  wf_range core = wf_model_phase(hw, wf_range_of(0), wf_model_receive(hw, in), in,
                                 (n > 2 ? 2 : 1) * in);
  return wf_model_links(core, links);
}

double wf_model_exchange_cycles(const wf_hw *hw, const wf_grid *g, double words, int face_pes) {
  return ceil(words / (face_pes > 0 ? face_pes : 1)) + wf_model_latency(hw, g->max_link_hops);
}

wf_range wf_model_seconds(const wf_hw *hw, wf_range cycles) {
  return (wf_range){cycles.lo / (hw->clock_hz.hi * WF_MODEL_EFFICIENCY),
                    cycles.hi / (hw->clock_hz.lo * WF_MODEL_EFFICIENCY)};
}

wf_range wf_model_at_clock(const wf_hw *hw, wf_range seconds, double clock_hz) {
  return (wf_range){seconds.lo * hw->clock_hz.hi / clock_hz, seconds.hi * hw->clock_hz.lo / clock_hz};
}

bool wf_model_clock_in_range(const wf_hw *hw, double clock_hz) {
  return clock_hz >= hw->clock_hz.lo * (1 - 1e-6) && clock_hz <= hw->clock_hz.hi * (1 + 1e-6);
}

double wf_model_sram_for_data(const wf_hw *hw) { return hw->sram_bytes - hw->reserve_bytes; }

bool wf_model_fits(const wf_hw *hw, double bytes_per_pe) {
  return bytes_per_pe <= wf_model_sram_for_data(hw);
}
