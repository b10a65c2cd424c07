/* The run's report of its wafer: the header lines, and the wafer and fabric
 * parts of the JSON summary. */
#include "report.h"

#include "wf_fabric.h"

void app_describe_wafer(const wf_wafer *w, FILE *out) {
  const wf_decomp *dc = &w->dc;
  fprintf(out, "wafer: %s model, PE grid %dx%d (%lld PEs)", w->hw.name, dc->pe_nx, dc->pe_ny,
          (long long)dc->pe_nx * dc->pe_ny);
  if (w->defects[0])
    fprintf(out, ", %d dead PEs in %s (longest detour %d hops)", w->grid.ndead, w->defects,
            w->grid.max_link_hops);
  fprintf(out, "\nranks: %d as %dx%d, blocks of %dx%d to %dx%d PEs\n", dc->nranks, dc->px, dc->py,
          dc->pe_nx / dc->px, dc->pe_ny / dc->py, (dc->pe_nx + dc->px - 1) / dc->px,
          (dc->pe_ny + dc->py - 1) / dc->py);
}

void app_json_wafer(const wf_wafer *w, wf_json *j) {
  long long pe[2] = {w->dc.pe_nx, w->dc.pe_ny}, rk[2] = {w->dc.px, w->dc.py};
  wf_json_int(j, "ranks", w->dc.nranks);
  wf_json_ints(j, "rank_grid", rk, 2);
  wf_json_ints(j, "pe_grid", pe, 2);
  wf_json_str(j, "hardware", w->hw.name);
  wf_json_int(j, "dead_pes", w->grid.ndead);
}

void app_json_fabric(const wf_wafer *w, const char *unit, wf_json *j) {
  wf_fabric_counters t = wf_fabric_totals(&w->fab);
  wf_json_begin(j, "fabric");
  wf_json_int(j, "operations", t.ops);
  wf_json_int(j, "words_inside_ranks", t.words_intra);
  wf_json_int(j, "words_between_ranks", t.words_inter);
  wf_json_int(j, "mpi_bytes", t.mpi_bytes);
  wf_json_num(j, "seconds", t.seconds);
  wf_json_num(j, "model_cycles", t.model_cycles);
  wf_json_int(j, "longest_link_hops", w->grid.max_link_hops);
  wf_json_int(j, "detour_hops", w->grid.extra_hops);
  /* The main computation's traffic per unit of work, on the busiest rank:
   * what a strong-scaling study asks of the fabric as ranks are added. */
  const wf_fabric *f = &w->fab;
  long long units = f->main_units;
  MPI_Allreduce(MPI_IN_PLACE, &units, 1, MPI_LONG_LONG, MPI_MAX, w->dc.comm);
  if (units > 0) {
    wf_fabric_counters b = wf_fabric_busiest(f, &f->main);
    double u = (double)units;
    wf_json_begin(j, "per_unit");
    wf_json_str(j, "unit", unit ? unit : "unit");
    wf_json_int(j, "units", units);
    wf_json_num(j, "collectives", (double)b.collectives / u);
    wf_json_num(j, "line_collectives", (double)b.line_collectives / u);
    wf_json_num(j, "messages", (double)b.messages / u);
    wf_json_num(j, "mpi_bytes", (double)b.mpi_bytes / u);
    wf_json_num(j, "seconds", b.seconds / u);
    wf_json_end(j);
  }
  wf_json_end(j);
}

