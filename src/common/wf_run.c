#include <stdio.h>

#include "wf_workload.h"

void wf_run_check(wf_run *run, bool ok, const char *what) {
  if (ok) {
    run->checks_passed++;
    return;
  }
  run->checks_failed++;
  if (run->verbose) printf("%s: CHECK FAILED: %s\n", run->workload, what);
}

const char *wf_run_status(const wf_run *run, int code) {
  if (code) return "error";
  if (run->checks_failed) return "failed";
  return run->checks_passed ? "ok" : "unchecked";
}

void wf_projection_json(const wf_projection *p, wf_json *j) {
  wf_json_str(j, "unit", p->unit);
  wf_json_range(j, "seconds_per_unit", p->seconds.lo, p->seconds.hi);
  if (p->flops > 0) {
    wf_json_num(j, "flops_per_unit", p->flops);
    wf_json_range(j, "flop_rate", p->flops / p->seconds.hi, p->flops / p->seconds.lo);
  }
  wf_json_num(j, "bytes_per_pe", p->bytes_per_pe);
  wf_json_num(j, "sram_for_data", p->sram_for_data);
  wf_json_bool(j, "fits_sram", p->bytes_per_pe <= p->sram_for_data);
  wf_json_num(j, "pes_needed", p->pes_needed);
  wf_json_num(j, "pes_offered", p->pes_offered);
  wf_json_bool(j, "fits_pes", p->pes_needed <= p->pes_offered);
}
