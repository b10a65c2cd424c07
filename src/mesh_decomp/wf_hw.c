/* Hardware presets (wf_hw.h): the WSE-1, WSE-2 and WSE-3 figures the cost model uses. Their
 * sources are in docs/model.md. */
#include "wf_hw.h"

#include <string.h>

/* Sources, derivations and the assumptions among these: docs/model.md,
 * "Hardware parameters". SIMD widths are the Cerebras SDK's (WSE-2): fp16
 * FMAC, multiply and add 4-wide; fp32 add, subtract and move 2-wide; fp32
 * FMAC and multiply 1-wide. WSE-3 doubles them. WSE-1's are derived from
 * SC20: 0.86 PFLOP/s at "about one third of peak" on about 380,000 PEs at
 * 0.94 - 1.03 GHz is 6.6 - 7.2 flops a PE a cycle, a 4-wide fp16 FMAC (8).
 * The SRAM ports of every preset are derived by one rule: what its widest
 * instructions need with two operands read from SRAM and one written (a
 * 4-wide fp16 FMAC, a 2-wide fp32 add: 16 B read, 8 B write a cycle; twice
 * that on the WSE-3), which is SC22's stated 16 B + 8 B for the CS-1 and
 * CS-2. (The "two 32-bit operands a cycle" of the SDK and WaferLLM is one
 * fp32 multiply-accumulate a cycle, the 1-wide FMAC, which these ports feed.)
 * I/O: 12 x 100 GbE, 1.2 Tb/s, on CS-1, CS-2 and CS-3 alike (Cerebras's
 * system specifications; its SwarmX page: a CS-2 "has 1.2Tb/s of I/O
 * bandwidth" and weights are delivered at this rate). */
#define SIMD_WSE2                                                                                  \
  {[WF_FP16] = {[WF_OP_FMAC] = 4, [WF_OP_MUL] = 4, [WF_OP_ADD] = 4, [WF_OP_MOV] = 4},              \
   [WF_FP32] = {[WF_OP_FMAC] = 1, [WF_OP_MUL] = 1, [WF_OP_ADD] = 2, [WF_OP_MOV] = 2}}
#define SIMD_WSE3                                                                                  \
  {[WF_FP16] = {[WF_OP_FMAC] = 8, [WF_OP_MUL] = 8, [WF_OP_ADD] = 8, [WF_OP_MOV] = 8},              \
   [WF_FP32] = {[WF_OP_FMAC] = 2, [WF_OP_MUL] = 2, [WF_OP_ADD] = 4, [WF_OP_MOV] = 4}}

/* A scalar fp32 square root and division: one instruction each at the fast end; at the
 * slow end the SDK's math-library routine (it has no such instruction in its builtins):
 * an integer seed and three Newton steps to fp32 accuracy, 3 FMAC-class operations a step
 * for 1/sqrt(x) and one more multiply for sqrt(x) (11), 2 a step for 1/x and a multiply
 * for a division (8). docs/model.md, "Hardware parameters". */
#define SQRT_CYCLES {1, 11}
#define DIV_CYCLES {1, 8}

static const wf_hw presets[] = {
    {.name = "wse1",
     .machine = "CS-1 (WSE-1)",
     .pe_nx = 600,
     .pe_ny = 595,
     .sram_bytes = 48.0 * 1024,
     .reserve_bytes = 4.0 * 1024,
     .clock_hz = {0.94e9, 1.03e9},
     .read_bytes = 16,
     .write_bytes = 8,
     .simd = SIMD_WSE2,
     .link_bytes_per_cycle = 4,
     .hop_cycles = 1,
     .ramp_cycles = 2,
     .ramp_words_per_cycle = 1,
     .io_bytes_per_s = 150e9,
     .sqrt_cycles = SQRT_CYCLES,
     .div_cycles = DIV_CYCLES,
     /* the wafer alone draws 15 kW, the system about 20 kW at peak (docs/model.md) */
     .system_watts = {15e3, 20e3},
     .power_source = "Tom's Hardware: the WSE-1 15 kW, the CS-1 20 kW; AnandTech: about 20 kW "
                     "peak"},
    {.name = "wse2",
     .machine = "CS-2 (WSE-2)",
     .pe_nx = 750,
     .pe_ny = 994,
     .sram_bytes = 48.0 * 1024,
     .reserve_bytes = 4.0 * 1024,
     .clock_hz = {0.85e9, 1.1e9},
     .read_bytes = 16,
     .write_bytes = 8,
     .simd = SIMD_WSE2,
     .link_bytes_per_cycle = 4,
     .hop_cycles = 1,
     .ramp_cycles = 2,
     .ramp_words_per_cycle = 1,
     .io_bytes_per_s = 150e9,
     .sqrt_cycles = SQRT_CYCLES,
     .div_cycles = DIV_CYCLES,
     /* the wafer alone 15 kW; the system no more than the CS-3, which draws what the CS-2
      * does (docs/model.md) */
     .system_watts = {15e3, 23e3},
     .power_source = "Tom's Hardware: each WSE-2 15 kW; the CS-3 draws what the CS-2 does, 23 "
                     "kW (Kundu et al., arXiv 2503.11698)"},
    /* The program rectangle: the fabric's 762 x 1172 less what the SDK's
     * runtime keeps on the WSE-2 (757 x 996 -> 750 x 994: 7 columns, 2 rows).
     * The ports: the published 21 PB/s over 900,000 cores is 24 B a cycle at
     * 0.97 GHz, WSE-2's 16 + 8 (docs/model.md). */
    {.name = "wse3",
     .machine = "CS-3 (WSE-3)",
     .pe_nx = 755,
     .pe_ny = 1170,
     .sram_bytes = 48.0 * 1024,
     .reserve_bytes = 4.0 * 1024,
     .clock_hz = {0.85e9, 1.1e9},
     .read_bytes = 16,
     .write_bytes = 8,
     .simd = SIMD_WSE3,
     .link_bytes_per_cycle = 4,
     .hop_cycles = 1,
     .ramp_cycles = 2,
     .ramp_words_per_cycle = 1,
     .io_bytes_per_s = 150e9,
     .sqrt_cycles = SQRT_CYCLES,
     .div_cycles = DIV_CYCLES,
     /* "the CS-3 maintains the same power consumption as its predecessor" (Tom's Hardware,
      * launch); 23 kW (Kundu et al., arXiv 2503.11698, reported) */
     .system_watts = {15e3, 23e3},
     .power_source = "Tom's Hardware: CS-3 draws what CS-2 does; Kundu et al. (arXiv "
                     "2503.11698): 23 kW"},
};

const wf_hw *wf_hw_preset(const char *name) {
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
    if (strcmp(presets[i].name, name) == 0) return &presets[i];
  return NULL;
}

double wf_prec_bytes(wf_prec p) { return p == WF_FP16 ? 2.0 : 4.0; }
