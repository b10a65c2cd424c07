/* Hardware parameters of a wafer-scale engine, as the cost model uses them.
 * Every figure and its public source is listed in docs/model.md. */
#ifndef WF_HW_H
#define WF_HW_H

typedef struct wf_hw {
  const char *name;
  int pe_nx, pe_ny;            /* logical PE grid offered to programs */
  double sram_bytes;           /* private memory per PE */
  double clock_hz;
  double link_bytes_per_cycle; /* one fabric link, one direction */
  double mem_bytes_per_cycle;  /* a PE's SRAM bandwidth (loads + stores) */
  double flops_per_cycle;      /* a PE's fp32 rate */
  double hop_cycles;           /* router latency per hop */
} wf_hw;

/* "wse2" or "wse3"; NULL if unknown. */
const wf_hw *wf_hw_preset(const char *name);

#endif
