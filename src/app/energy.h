/* Energy to solution of a run: on the wafer, its projected seconds at its system's
 * published power (wf_hw's system_watts, a range with its source, docs/model.md); on the
 * cluster, the measured seconds at the node power the deck gives ([energy] node_watts),
 * and none claimed without one. */
#ifndef WF_ENERGY_H
#define WF_ENERGY_H

#include <stdio.h>

#include "wf_deck.h"
#include "wf_hw.h"
#include "wf_json.h"
#include "wf_range.h"

extern const wf_section wf_energy_section;

typedef struct app_energy {
  const wf_hw *hw;
  double systems;         /* wafers at once */
  wf_range wafer_joules;  /* [fast, slow]; 0 without a wafer projection */
  int nodes;
  double node_watts;
  double cluster_seconds; /* measured; 0 in a model-only run */
  double cluster_joules;  /* 0: not claimed (no node power given, or nothing measured) */
} app_energy;

/* From the projected and the measured seconds of the same computation (the
 * run's wafer_seconds and seconds), the wafers it runs on (0: one), the
 * run's hosts and the node power given (0: none). */
app_energy app_energy_of(const wf_hw *hw, wf_range wafer_seconds, double systems,
                         double cluster_seconds, int nodes, double node_watts);
/* "energy": {"of", "wafer_joules", "wafer_watts" (one system's), "systems",
 * "wafer_power_source", "nodes", "node_watts", "cluster_joules" (null when not claimed)}. */
void app_energy_json(const app_energy *e, wf_json *j);
/* One report line: "energy: wafer ... J (...); cluster ... J (...)". */
void app_energy_print(const app_energy *e, FILE *out);

#endif
