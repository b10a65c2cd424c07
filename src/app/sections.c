/* Every deck section of the `wafer` command (sections.h). */
#include "sections.h"

#include "energy.h"
#include "fidelity.h"
#include "registry.h"
#include "wf_h5.h"
#include "wf_wafer.h"

int wf_all_sections(const wf_section **out, int max) {
  int n = 0;
  if (n < max) out[n++] = &wf_wafer_section;
  if (n < max) out[n++] = &wf_output_section;
  if (n < max) out[n++] = &wf_energy_section;
  if (n < max) out[n++] = &wf_fidelity_section;
  for (int w = 0; w < wf_nworkloads; w++)
    for (int s = 0; s < wf_workloads[w]->nsections && n < max; s++)
      out[n++] = wf_workloads[w]->sections[s];
  return n;
}
