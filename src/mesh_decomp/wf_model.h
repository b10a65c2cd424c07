/* The wafer cost model: cycles for fabric operations and per-PE compute,
 * converted to seconds with the hardware clock and one global efficiency
 * factor. Every formula is documented, with its assumptions, in
 * docs/model.md. All functions are pure. */
#ifndef WF_MODEL_H
#define WF_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "wf_grid.h"
#include "wf_hw.h"

/* The single global efficiency factor (fraction of the modelled peak that
 * real code reaches), the same for every workload. Not fitted yet: 1. */
#define WF_MODEL_EFFICIENCY 1.0

/* 32-bit fabric words needed for one element of `bytes`. */
double wf_model_words(const wf_hw *hw, size_t bytes);

/* One halo exchange of width `width` PEs of one `elem_bytes` element per PE,
 * every PE at once. */
double wf_model_halo_cycles(const wf_hw *hw, const wf_grid *g, size_t elem_bytes, int width,
                            bool corners);
/* Words on the busiest link, one direction, in that exchange. */
double wf_model_halo_link_words(const wf_hw *hw, size_t elem_bytes, int width, bool corners);
/* Broadcast of one element per row (or column) of `n` PEs from position `root`. */
double wf_model_bcast_cycles(const wf_hw *hw, const wf_grid *g, size_t elem_bytes, int n, int root);
/* Reduction of `nvals` doubles over the whole grid; `all`: result back on every PE. */
double wf_model_reduce_cycles(const wf_hw *hw, const wf_grid *g, int nvals, bool all);
/* Per-PE compute: the larger of the flop time and the SRAM traffic time. */
double wf_model_compute_cycles(const wf_hw *hw, double flops, double mem_bytes);

double wf_model_seconds(const wf_hw *hw, double cycles);
bool wf_model_fits(const wf_hw *hw, double bytes_per_pe);

#endif
