/* The wafer cost model: cycles of fabric operations and per-PE compute,
 * converted to seconds with the hardware clock. Every formula is documented,
 * with its assumptions, in docs/model.md; unit tests check each against hand
 * computations. All functions are pure.
 *
 * Cycles are ranges where the public sources allow two readings: of what
 * overlaps what (wf_model_phase) and of what a square root or a division
 * costs (wf_model_scalar); `lo` the fast one, `hi` the slow. A figure with one reading (a multicast, a
 * link's words) is a plain number. Seconds are a range again: the fast end
 * at the highest clock, the slow end at the lowest. */
#ifndef WF_MODEL_H
#define WF_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "wf_grid.h"
#include "wf_hw.h"
#include "wf_range.h"

/* The single global efficiency factor (fraction of the modelled peak that
 * real code reaches), the same for every workload. Not fitted: 1. */
#define WF_MODEL_EFFICIENCY 1.0

/* ---- compute ---- */

/* A vector instruction over `n` elements of precision `p`, each element
 * reading `reads` operands from SRAM and writing `writes` to it (operands
 * from the fabric or registers are not counted): n * max(1 / SIMD width,
 * read bytes / read port, write bytes / write port) cycles (both ends alike). */
wf_range wf_model_vec(const wf_hw *hw, wf_op op, wf_prec p, double n, int reads, int writes);

/* `plain` scalar instructions, `sqrts` square roots and `divs` divisions of
 * fp32 scalars: one cycle an instruction (a scalar instruction's operands fit
 * the ports); a square root and a division the hardware's range of costs. */
wf_range wf_model_scalar(const wf_hw *hw, double plain, double sqrts, double divs);
/* Moving `words` received from the fabric into SRAM (a 32-bit move with a
 * fabric operand each, into a buffer the work reads later): the `fabric`
 * part of a phase whose received data are used after they are in. */
wf_range wf_model_receive(const wf_hw *hw, double words);

/* ---- what overlaps what (docs/model.md, "What overlaps what") ---- */

/* One phase of a PE's work: `sram` cycles of instructions whose operands are
 * in SRAM, `fabric` cycles of instructions that take their operands from
 * the fabric as `in` words arrive through the ramp (one a cycle), and `out`
 * words the core sends by instructions of their own (not the words an
 * instruction passes on as it receives them). The sources allow two
 * readings, one for each end of the range: the fast end lets the ramp run
 * beside the datapath, max(sram + fabric, in, out); the slow end has every
 * word through the ramp hold the datapath for its cycle,
 * sram + max(fabric, in) + out. */
wf_range wf_model_phase(const wf_hw *hw, wf_range sram, wf_range fabric, double in, double out);

/* A phase takes at least what its busiest link carries (the routers' links
 * are not the core's): both ends at least `link_words`. */
wf_range wf_model_links(wf_range phase, double link_words);

/* ---- fabric ---- */

/* A word's trip from one core to another `hops` physical hops away: out of
 * a ramp, across the routers, into a ramp. */
double wf_model_latency(const wf_hw *hw, double hops);
/* 32-bit fabric words needed for one element of `bytes`. */
double wf_model_words(const wf_hw *hw, size_t bytes);
/* Cycles for a core to take in (or send out) `words` through its ramp. */
double wf_model_ramp(const wf_hw *hw, double words);

/* One halo exchange of width `width` PEs of one `elem_bytes` element per PE,
 * every PE at once: the links, and the core's ramp taking its neighbours'
 * elements in (moved into SRAM) and sending its own once a direction (with
 * corners: east and west, then its row north and south), by
 * wf_model_phase's two readings; plus the latency (ramps and hops). */
wf_range wf_model_halo_cycles(const wf_hw *hw, const wf_grid *g, size_t elem_bytes, int width,
                              bool corners);
/* One halo exchange of a PE's brick of bx x by columns of nz values
 * (`value_bytes` each), `width` columns deep across each face: the longer
 * face's values cross its link, all links at once; the core moves its
 * neighbours' faces in and sends the columns next to each face to that
 * side, a send a direction (as the SDK's stencil kernels do;
 * wf_model_phase); then 2 ramps and the farthest a value travels (width PEs
 * along the grid's longest link path). */
wf_range wf_model_brick_halo_cycles(const wf_hw *hw, const wf_grid *g, int bx, int by, int nz,
                                    int width, size_t value_bytes);
/* Words on the busiest link, one direction, in that exchange. */
double wf_model_halo_link_words(const wf_hw *hw, size_t elem_bytes, int width, bool corners);
/* Words entering one PE through its ramp in that exchange: its neighbours' elements. */
double wf_model_halo_intake_words(const wf_hw *hw, size_t elem_bytes, int width, bool corners);
/* Multicast of one element per row (or column) of `n` PEs from position `root`. */
double wf_model_bcast_cycles(const wf_hw *hw, const wf_grid *g, size_t elem_bytes, int n, int root);
/* Reduction of `k` fp32 values over the whole grid as a wafer program does
 * it: every row into its middle from both ends, then the middle column into
 * its middle, each a segment reduction of k words (below); `all`: multicast
 * back to every PE. One figure: both readings of wf_model_phase agree. */
double wf_model_reduce_cycles(const wf_hw *hw, const wf_grid *g, int k, bool all);

/* Levels of a reduction tree whose farthest leaf is `far` hops from its
 * root: ceil(log2(far + 1)), 0 for none. */
double wf_model_tree_levels(double far);
/* Sides of `root` in a line of n PEs that have PEs: 0, 1 or 2. */
int wf_model_streams(int n, int root);
/* Reduction of a segment of `words` along a line of n PEs into the PE at
 * `root`, from both sides at once, as a tree: at each level the receiving
 * core takes in a segment from each side, 2 ramps and an add; the farthest
 * sum crosses max(root, n - 1 - root) hops. The same at both ends (a
 * received word is the add's operand; the sum leaves as its result). */
double wf_model_segment_reduce_cycles(const wf_hw *hw, const wf_grid *g, int n, int root,
                                      double words);
/* The same reduction as a chain, each PE adding its own segment as the
 * stream passes: every hop through a core (2 ramps, an add, the link), the
 * root taking in a segment from each side. Slower for one segment than the
 * tree, but its root takes in only that a segment, so a stream of segments
 * (a token after another) can run at it. */
double wf_model_chain_reduce_cycles(const wf_hw *hw, const wf_grid *g, int n, int root,
                                    double words);
/* All-to-all within a line of n PEs, `words` per chunk, as the SDK's
 * published FFT kernel transposes (csl-examples benchmarks/FFT/ucode_2d.csl):
 * both directions at once on a colour each; along each the PEs send in
 * turn, each its n - 1 chunks, which the routers multicast downstream and
 * each receiving router's filter passes to its core (no core relays), and
 * two control wavelets hand the turn on. At least what its cores take in
 * and send (wf_model_phase). docs/model.md, "Fabric". */
wf_range wf_model_alltoall_cycles(const wf_hw *hw, const wf_grid *g, int n, double words);
/* `words` of irregular data crossing a rank block's face of `face_pes` PEs,
 * spread over its links. */
double wf_model_exchange_cycles(const wf_hw *hw, const wf_grid *g, double words, int face_pes);

/* ---- time and memory ---- */

/* Cycles (a range, fast end first) to seconds at the highest and lowest clock. */
wf_range wf_model_seconds(const wf_hw *hw, wf_range cycles);
/* Seconds from wf_model_seconds re-expressed at one stated clock: the cycles behind each
 * end over `clock_hz`. For a source that converts its cycles at a clock of its own
 * (docs/model.md, "Time bases"), only the readings of the work remain in the range. */
wf_range wf_model_at_clock(const wf_hw *hw, wf_range seconds, double clock_hz);
/* Whether the hardware runs at `clock_hz` (its clock range, 1e-6 relative slack). */
bool wf_model_clock_in_range(const wf_hw *hw, double clock_hz);
/* SRAM a PE offers to data: its memory less the reserve for code and stack. */
double wf_model_sram_for_data(const wf_hw *hw);
bool wf_model_fits(const wf_hw *hw, double bytes_per_pe);

#endif
