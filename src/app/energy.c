/* Energy to solution (energy.h): the wafer's from its system's published power, the
 * cluster's from the node power a user gives. */
#include "energy.h"

#include <stdio.h>

static const wf_key energy_keys[] = {
    {"node_watts", WF_KEY_REAL, "0", 0, 1e7, NULL,
     "power of one cluster node in watts, for the run's energy to solution (0 = not given: no "
     "cluster energy is claimed)",
     NULL},
};

const wf_section wf_energy_section = {
    "energy",
    "Energy to solution: the wafer's from its system's published power (docs/model.md), the "
    "cluster's from a node power you give.",
    energy_keys, (int)(sizeof energy_keys / sizeof energy_keys[0]), NULL, NULL};

app_energy app_energy_of(const wf_hw *hw, wf_range wafer_seconds, double systems,
                         double cluster_seconds, int nodes, double node_watts) {
  app_energy e = {.hw = hw, .systems = systems > 1 ? systems : 1, .nodes = nodes,
                  .node_watts = node_watts, .cluster_seconds = cluster_seconds};
  /* A system draws its power whatever share of its wafer a run uses: the
   * fast end at the low power, the slow end at the high. MemoryX and SwarmX
   * (weight streaming) are not counted: their power is not published. */
  if (hw && wafer_seconds.hi > 0)
    e.wafer_joules = (wf_range){wafer_seconds.lo * hw->system_watts.lo * e.systems,
                                wafer_seconds.hi * hw->system_watts.hi * e.systems};
  if (node_watts > 0 && nodes > 0 && cluster_seconds > 0)
    e.cluster_joules = cluster_seconds * nodes * node_watts;
  return e;
}

void app_energy_json(const app_energy *e, wf_json *j) {
  wf_json_begin(j, "energy");
  wf_json_str(j, "of", "the main computation: wafer_seconds on the wafer, seconds on the cluster");
  if (e->wafer_joules.hi > 0) {
    wf_json_range(j, "wafer_joules", e->wafer_joules.lo, e->wafer_joules.hi);
    wf_json_range(j, "wafer_watts", e->hw->system_watts.lo, e->hw->system_watts.hi);
    wf_json_num(j, "systems", e->systems);
    wf_json_str(j, "wafer_power_source", e->hw->power_source);
  }
  wf_json_int(j, "nodes", e->nodes);
  wf_json_num(j, "node_watts", e->node_watts);
  if (e->cluster_joules > 0) wf_json_num(j, "cluster_joules", e->cluster_joules);
  else wf_json_raw(j, "cluster_joules", "null");
  wf_json_end(j);
}

void app_energy_print(const app_energy *e, FILE *out) {
  fprintf(out, "energy to solution: ");
  if (e->wafer_joules.hi > 0) {
    fprintf(out, "wafer %.3g - %.3g J (", e->wafer_joules.lo, e->wafer_joules.hi);
    if (e->systems > 1) fprintf(out, "%.0f x ", e->systems);
    fprintf(out, "%s at %.3g - %.3g kW)", e->hw->machine, 1e-3 * e->hw->system_watts.lo,
            1e-3 * e->hw->system_watts.hi);
  } else {
    fprintf(out, "no wafer projection");
  }
  if (e->cluster_joules > 0)
    fprintf(out, "; cluster %.3g J (%d node%s at %.4g W)\n", e->cluster_joules, e->nodes,
            e->nodes == 1 ? "" : "s", e->node_watts);
  else if (e->cluster_seconds <= 0)
    fprintf(out, "; cluster: nothing measured (a model-only run)\n");
  else fprintf(out, "; cluster not claimed (give [energy] node_watts)\n");
}
