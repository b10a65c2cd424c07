/* Published figures of kernels rather than whole workloads (`[fidelity] kernel`,
 * fidelity_kernel.h): WaferLLM's GEMV by the weight-stationary product the training model
 * is built of, and GB23's TLR-MVM bandwidth against the model's ceiling. */
#include "fidelity_kernel.h"

#include <math.h>
#include <mpi.h>
#include <string.h>

#include "tl_model.h"
#include "wf_model.h"
#include "wf_wafer.h"
#include "ws_model.h"

static wf_prec precision(const wf_deck *deck) {
  return strcmp(wf_deck_str(deck, "fidelity", "precision"), "fp16") == 0 ? WF_FP16 : WF_FP32;
}

/* y = W x, W rows x cols, one vector, on the deck's PE grid: ws_model_gemm's forward
 * product (collectives from the grid's middle; docs/model.md, "Transformer training").
 * A model needs no ranks: every rank builds the same wafer on its own. */
static int gemv(const wf_deck *deck, wf_projection *p, wf_status *st) {
  wf_wafer w;
  if (wf_wafer_create(&w, MPI_COMM_SELF, deck, WF_RANKS_COMPACT, st) != WF_OK) return st->code;
  wf_prec prec = precision(deck);
  int rows = (int)wf_deck_int(deck, "fidelity", "rows");
  int cols = (int)wf_deck_int(deck, "fidelity", "cols");
  ws_gemm_cost c = ws_model_gemm(&w.hw, &w.grid, prec, WS_GEMM_FORWARD, 1, cols, rows);
  double tile = ceil((double)rows / w.grid.ny) * ceil((double)cols / w.grid.nx);
  double segments = ceil((double)rows / w.grid.ny) + ceil((double)cols / w.grid.nx);
  *p = (wf_projection){.valid = true,
                       .unit = "product",
                       .seconds = wf_model_seconds(&w.hw, c.cycles),
                       .flops = 2.0 * rows * cols,
                       .bytes_per_pe = (tile + segments) * wf_prec_bytes(prec),
                       .sram_for_data = wf_model_sram_for_data(&w.hw),
                       .pes_needed = (double)w.grid.nx * w.grid.ny,
                       .pes_offered = (double)w.hw.pe_nx * w.hw.pe_ny};
  wf_wafer_free(&w);
  return WF_OK;
}

/* The bases streamed by every PE of `systems` wafers at the multiply-adds' rate: a
 * projection of seconds a byte, whose inverse is the ceiling in bytes/s. */
static int tlrmvm_bound(const wf_deck *deck, wf_projection *p, wf_status *st) {
  const wf_hw *hw = wf_hw_preset(wf_deck_str(deck, "wafer", "hardware"));
  if (!hw) return wf_fail(st, WF_ERR_INPUT, "no such hardware");
  double pes = (double)wf_deck_int(deck, "fidelity", "systems") * hw->pe_nx * hw->pe_ny;
  wf_range rate = tl_model_bound(hw, pes, precision(deck));
  *p = (wf_projection){.valid = true,
                       .unit = "byte",
                       .seconds = wf_range_inverse(rate),
                       .sram_for_data = wf_model_sram_for_data(hw),
                       .pes_needed = pes,
                       .pes_offered = pes};
  return WF_OK;
}

int fidelity_kernel(const wf_deck *deck, wf_projection *p, wf_status *st) {
  const char *kernel = wf_deck_str(deck, "fidelity", "kernel");
  if (strcmp(kernel, "gemv") == 0) return gemv(deck, p, st);
  if (strcmp(kernel, "tlrmvm_bound") == 0) return tlrmvm_bound(deck, p, st);
  return wf_deck_fail(deck, "fidelity", "kernel", st, "not a kernel");
}

bool fidelity_kernel_is_bound(const wf_deck *deck) {
  return strcmp(wf_deck_str(deck, "fidelity", "kernel"), "tlrmvm_bound") == 0;
}
