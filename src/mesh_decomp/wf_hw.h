/* Hardware parameters of a wafer-scale engine, as the cost model uses them.
 * Every figure and its public source is listed in docs/model.md. Where public
 * sources disagree (the clock), both ends are kept as a span, and every
 * projection is a range. */
#ifndef WF_HW_H
#define WF_HW_H

/* Precision and kind of a vector instruction (SIMD widths differ by both). */
typedef enum { WF_FP16, WF_FP32, WF_NPREC } wf_prec;
typedef enum { WF_OP_FMAC, WF_OP_MUL, WF_OP_ADD, WF_OP_MOV, WF_NOPS } wf_op;

/* The two ends of what public sources give for one figure. */
typedef struct wf_span {
  double lo, hi;
} wf_span;

typedef struct wf_hw {
  const char *name;            /* deck name: wse1, wse2, wse3 */
  const char *machine;         /* CS-1 (WSE-1), ... */
  int pe_nx, pe_ny;            /* PE rectangle offered to programs */
  double sram_bytes;           /* private memory per PE */
  double reserve_bytes;        /* of it, kept for code, stack and runtime (an assumption) */
  wf_span clock_hz;
  double read_bytes;           /* SRAM bytes a PE can load per cycle */
  double write_bytes;          /* SRAM bytes a PE can store per cycle */
  double simd[WF_NPREC][WF_NOPS]; /* elements per cycle of each vector instruction */
  double link_bytes_per_cycle; /* one fabric link, one direction */
  double hop_cycles;           /* router latency per hop */
  double ramp_cycles;          /* latency from the router into the core, or out of it */
  double ramp_words_per_cycle; /* 32-bit words a core takes from (or gives to) its router */
  double io_bytes_per_s;       /* the system's external I/O, each way: what weight streaming
                                  gets from MemoryX through SwarmX */
  wf_span sqrt_cycles, div_cycles; /* a scalar fp32 square root, a division: no public
                                      figure; one instruction to a library routine */
  wf_span system_watts;        /* the whole system's power draw, as published */
  const char *power_source;    /* where system_watts is published */
} wf_hw;

/* "wse1", "wse2" or "wse3"; NULL if unknown. */
const wf_hw *wf_hw_preset(const char *name);
/* Bytes of one value of this precision. */
double wf_prec_bytes(wf_prec p);

#endif
