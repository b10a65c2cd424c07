#include "wf_hw.h"

#include <string.h>

/* Sources and derivations: docs/model.md, "Hardware parameters". */
static const wf_hw presets[] = {
    {.name = "wse2",
     .pe_nx = 750,
     .pe_ny = 994,
     .sram_bytes = 48.0 * 1024,
     .clock_hz = 1.0e9,
     .link_bytes_per_cycle = 4.0,
     .mem_bytes_per_cycle = 24.0,
     .flops_per_cycle = 2.0,
     .hop_cycles = 1.0},
    {.name = "wse3",
     .pe_nx = 762,
     .pe_ny = 1176,
     .sram_bytes = 48.0 * 1024,
     .clock_hz = 0.95e9,
     .link_bytes_per_cycle = 4.0,
     .mem_bytes_per_cycle = 24.0,
     .flops_per_cycle = 2.0,
     .hop_cycles = 1.0},
};

const wf_hw *wf_hw_preset(const char *name) {
  for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
    if (strcmp(presets[i].name, name) == 0) return &presets[i];
  return NULL;
}
