/* `wafer tlrmvm`: GB23's tile low-rank MVM as an MPI code.
 *
 * Builds one seismic operator per frequency (tl_survey.h) or reads dense
 * ones from HDF5, compresses each into tiles of rank k (tl_compress.h) or
 * reuses a compressed file (tl_io.h), times y = A x and x = A^H y with the
 * three-phase TLR-MVM on the PE grid's tiles (tl_matrix.h), and checks them
 * against the dense product and each other. Reports the bandwidth as KAUST
 * counts it, its fraction of STREAM triad, and the wafer model (tl_model.h). */
#include "tlrmvm_workload.h"

#include "wf_cblas.h"
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>

#include "tl_model.h"
#include "tlrmvm_parts.h"
#include "wf_h5.h"
#include "wf_model.h"
#include "wf_report.h"
#include "wf_wafer.h"
#include "wf_signal.h"

/* ---- model and report ---- */

/* The wafer projection of one product of every frequency: each frequency's
 * own ranks, the frequencies shared out over `systems` wafers. */
static tl_model project(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op) {
  const wf_wafer *w = run->wafer;
  tl_model sum = {0};
  int per_system = (s->nfreq + s->systems - 1) / s->systems;
  for (int f = 0; f < s->nfreq; f++) {
    tl_model_case c = {.m = s->m,
                       .n = s->n,
                       .nb = s->nb,
                       .rank = op ? op->a[f].rank : NULL,
                       .uniform_rank = s->model_rank,
                       .frequencies = 1,
                       .systems = 1};
    tl_model t = tl_model_mvm(&w->hw, &w->grid, w->dc.pe_nx, w->dc.pe_ny, &c, s->wafer_prec);
    double share = (double)per_system / s->nfreq; /* of this frequency's time on its wafer */
    sum.seconds = wf_range_add(sum.seconds, wf_range_scale(t.seconds, share));
    sum.compute_seconds =
        wf_range_add(sum.compute_seconds, wf_range_scale(t.compute_seconds, share));
    sum.bytes_per_pe += t.bytes_per_pe * share;
    sum.kaust_bytes += t.kaust_bytes;
    sum.flops += t.flops;
    sum.total_rank += t.total_rank;
    sum.bcast_cycles = fmax(sum.bcast_cycles, t.bcast_cycles);
    sum.reduce_cycles = fmax(sum.reduce_cycles, t.reduce_cycles);
  }
  sum.bandwidth = wf_range_inverse(wf_range_scale(sum.seconds, 1.0 / sum.kaust_bytes));
  run->model = (wf_projection){.valid = true,
                               .unit = "product",
                               .seconds = sum.seconds,
                               .flops = sum.flops,
                               .bytes_per_pe = sum.bytes_per_pe,
                               .sram_for_data = wf_model_sram_for_data(&w->hw),
                               .pes_needed = (double)w->dc.pe_nx * w->dc.pe_ny * s->systems,
                               .pes_offered = (double)w->hw.pe_nx * w->hw.pe_ny * s->systems,
                               .systems = s->systems};
  return sum;
}

static void report_model(const wf_run *run, const tlrmvm_setup *s, const tl_model *t) {
  const wf_projection *p = &run->model;
  wf_report rep;
  wf_report_open(&rep, run, "tlrmvm");
  wf_report_model(&rep, p);
  wf_report_int(&rep, "systems", s->systems, "x %d systems");
  wf_report_note(&rep, "%s, %d frequencies a product", s->wafer_prec == WF_FP16 ? "fp16" : "fp32",
                 s->nfreq);
  wf_report_range(&rep, "compute_seconds", t->compute_seconds.lo, t->compute_seconds.hi, 1e6,
                  "multiply-adds %.2f us");
  wf_report_num(&rep, "bcast_cycles", t->bcast_cycles, "%.0f cycles multicast x");
  wf_report_num(&rep, "reduce_cycles", t->reduce_cycles, "%.0f reduce y");
  wf_report_num(&rep, "kaust_bytes", t->kaust_bytes, "%.4g B by KAUST's count");
  wf_report_range(&rep, "bandwidth", t->bandwidth.lo, t->bandwidth.hi, 1e-15, "%.3g PB/s");
  wf_report_end(&rep);
  wf_report_close(&rep);
}

static void report(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op, const measured *m) {
  const tl_layout *l = &op->layout;
  double gbps = m->bytes / m->forward / 1e9,
         ratio = (double)s->m * s->n * s->nfreq / (2.0 * (double)m->R * s->nb);
  wf_report rep;
  wf_report_open(&rep, run, "tlrmvm");
  wf_report_begin(&rep, "tlrmvm");
  wf_report_line(&rep, NULL);
  long long size[3] = {s->nfreq, s->m, s->n};
  wf_report_ints(&rep, "size", size, 3, "%d frequencies x rows x columns");
  wf_report_note(&rep, "%dx%d tiles", l->mt, l->nt);
  wf_report_int(&rep, "nb", s->nb, "of %d");
  wf_report_num(&rep, "acc", s->opts.acc, "acc %g");
  wf_report_int(&rep, "total_rank", m->R, "R = %d");
  wf_report_num(&rep, "compression_ratio", ratio, "dense / TLR size %.3g");
  wf_report_bool(&rep, "loaded", op->loaded, "read from the compressed file: %s");
  if (!op->loaded)
    wf_report_num(&rep, "compress_seconds", op->compress_seconds, "compressed in %.3g s");
  wf_report_line(&rep, "median of the products (every frequency)");
  wf_report_scaled(&rep, "mvm_seconds", m->forward, 1e3, "A x %.3f ms");
  wf_report_scaled(&rep, "adjoint_seconds", m->adjoint, 1e3, "A^H y %.3f ms");
  wf_report_scaled(&rep, "phase1_seconds", m->phase[0], 1e3, "phases %.3f");
  wf_report_scaled(&rep, "reshuffle_seconds", m->phase[1], 1e3, "%.3f");
  wf_report_scaled(&rep, "phase3_seconds", m->phase[2], 1e3, "%.3f ms");
  wf_report_scaled(&rep, "combine_seconds", m->phase[3], 1e3, "combine %.3f ms");
  wf_report_num(&rep, "kaust_bytes", m->bytes, "%.4g B by KAUST's count");
  wf_report_num(&rep, "GBps", gbps, "%.1f GB/s");
  if (m->triad > 0) {
    wf_report_num(&rep, "stream_triad_GBps", m->triad / 1e9, "STREAM triad %.1f GB/s");
    wf_report_scaled(&rep, "fraction_of_triad", gbps * 1e9 / m->triad, 100, "%.0f%% of it");
  }
  if (m->dense > 0) {
    wf_report_line(&rep, "dense cgemv");
    wf_report_scaled(&rep, "dense_seconds", m->dense, 1e3, "%.3f ms");
    wf_report_num(&rep, "dense_GBps", m->dense_bytes / m->dense / 1e9, "%.1f GB/s");
    wf_report_num(&rep, NULL, m->forward / m->dense, "TLR/dense time %.3f");
  }
  /* against the plain recomputation: relative 2-norm, and the worst entry
   * as a fraction of what round-off allows */
  wf_report_line(&rep, "against the plain recomputation");
  wf_report_num(&rep, "naive_rel_error", m->naive[0].rel, "A x %.2e (relative)");
  wf_report_num(&rep, "naive_worst_of_bound", m->naive[0].worst,
                "worst entry %.2g of its round-off bound");
  wf_report_num(&rep, "adjoint_naive_rel_error", m->naive[1].rel, "A^H v %.2e");
  wf_report_num(&rep, "adjoint_naive_worst_of_bound", m->naive[1].worst, "worst entry %.2g");
  wf_report_line(&rep, "errors");
  if (m->green >= 0)
    wf_report_num(&rep, "green_worst_of_allowed", m->green,
                  "Green's function entries %.2g of allowed");
  if (s->dense_check) {
    wf_report_num(&rep, "error", m->err, "||y_tlr - y_dense|| = %.2e ||A||_F ||x||");
    wf_report_num(&rep, "error_bound", m->bound, "bound %.2e");
    wf_report_num(&rep, "rel_error", m->rel_err, "%.2e ||y_dense||");
  }
  if (m->dropped >= 0)
    wf_report_num(&rep, "dropped", m->dropped,
                  "||A - A_tlr||_F / ||A||_F = %.2e (the dropped singular values)");
  if (m->dropped_checked)
    wf_report_num(&rep, "dropped_worst_of_bound", m->dropped_worst,
                  "the dense operator minus U W^H agrees to %.2g of the SVD's round-off");
  wf_report_num(&rep, "adjoint_error", m->adj_err,
                "adjoint: |<A x, v> - <x, A^H v>| = %.2e ||A x|| ||v||");
  wf_report_end(&rep);
  wf_report_close(&rep);
  snprintf(run->headline, sizeof run->headline, "%dx%d, %d Hz-matrices, R %lld, %.3f ms/MVM%s",
           s->m, s->n, s->nfreq, m->R, m->forward * 1e3,
           s->dense_check ? (run->checks_failed ? ", dense differs" : ", = dense to acc") : "");
}

/* ---- output ---- */

static int write_output(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op,
                        const vectors *vec, const tlrmvm_mdd *r, const char *path, wf_status *st) {
  const tl_layout *l = &op->layout;
  wf_h5file f;
  if (wf_run_h5_create(run, path, &f, st) != WF_OK) return st->code;
  size_t tiles = (size_t)l->mt * l->nt;
  int64_t *rank = malloc(tiles * sizeof *rank + 1);
  int failed = !rank, rc = WF_OK;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, run->comm);
  if (failed) rc = wf_fail(st, WF_ERR_RUNTIME, "out of memory writing '%s'", path);
  /* The vectors are whole on every rank: rank 0 writes them. */
  bool root = run->rank == 0;
  unsigned long long zero = 0;
  for (int q = 0; rc == WF_OK && q < s->nfreq; q++) {
    char name[64];
    unsigned long long nt = (unsigned long long)l->mt, nn = (unsigned long long)s->n,
                       nm = (unsigned long long)s->m;
    for (size_t t = 0; t < tiles; t++) rank[t] = op->a[q].rank[t];
    wf_h5_rows rr = {(unsigned long long)l->mt, (unsigned long long)l->nt, root, &zero, &nt};
    wf_h5_rows rx = {nn, 2, root, &zero, &nn}, ry = {nm, 2, root, &zero, &nm};
    snprintf(name, sizeof name, "ranks_%d", q);
    if (wf_h5_write_rows(&f, name, WF_I64, &rr, rank, st) != WF_OK) break;
    snprintf(name, sizeof name, "x_%d", q);
    if (wf_h5_write_rows(&f, name, WF_F32, &rx, vec->x + (size_t)q * s->n, st) != WF_OK) break;
    snprintf(name, sizeof name, "y_%d", q);
    if (wf_h5_write_rows(&f, name, WF_F32, &ry, vec->y + (size_t)q * s->m, st) != WF_OK) break;
    snprintf(name, sizeof name, "hz_%d", q);
    if (wf_h5_attr_num(&f, name, s->hz[q], st) != WF_OK) break;
    const float complex *mdd[3] = {r ? r->truth : NULL, r ? r->tlr : NULL, r ? r->dense : NULL};
    static const char *const what[3] = {"mdd_true", "mdd_tlr", "mdd_dense"};
    for (int k = 0; r && k < 3 && st->code == WF_OK; k++) {
      snprintf(name, sizeof name, "%s_%d", what[k], q);
      wf_h5_write_rows(&f, name, WF_F32, &rx, mdd[k] + (size_t)q * s->n, st);
    }
    if (st->code != WF_OK) break;
  }
  if (r && st->code == WF_OK) {
    double *h[2] = {r->history_tlr, r->history_dense};
    int iterations[2] = {r->r_tlr.iterations, r->r_dense.iterations};
    static const char *const hn[2] = {"mdd_residual_tlr", "mdd_residual_dense"};
    for (int k = 0; k < 2 && st->code == WF_OK; k++) {
      unsigned long long its = (unsigned long long)iterations[k] + 1;
      wf_h5_rows rh = {its, 1, root, &zero, &its};
      wf_h5_write_rows(&f, hn[k], WF_F64, &rh, h[k], st);
    }
  }
  if (rc == WF_OK) rc = st->code;
  free(rank);
  return wf_h5_finish(&f, rc, st);
}

typedef struct rank_map {
  const tl_layout *l;
  const int *rank;
  double hz;
} rank_map;

/* "mt nt hz", then one row of tile ranks a line (scripts/plot_ranks.py). */
static void write_ranks(FILE *f, const void *data) {
  const rank_map *r = data;
  fprintf(f, "%d %d %g\n", r->l->mt, r->l->nt, r->hz);
  for (int i = 0; i < r->l->mt; i++)
    for (int j = 0; j < r->l->nt; j++)
      fprintf(f, "%d%c", r->rank[i * r->l->nt + j], j + 1 < r->l->nt ? ' ' : '\n');
}

/* ---- the run ---- */

static int model_only(wf_run *run, const tlrmvm_setup *s, wf_status *st) {
  if (s->model_rank < 1)
    return wf_deck_fail(run->deck, TLRMVM_SECTION, "model_rank", st,
                        "a model-only run compresses nothing: give the tiles' rank (>= 1)");
  if (s->nb > s->m || s->nb > s->n)
    return wf_deck_fail(run->deck, TLRMVM_SECTION, "nb", st,
                        "tile size %d is larger than the %d x %d "
                        "matrix",
                        s->nb, s->m, s->n);
  tl_model t = project(run, s, NULL);
  report_model(run, s, &t);
  run->wafer_seconds = run->model.seconds;
  snprintf(run->headline, sizeof run->headline, "model only: %.3g-%.3g PB/s on %d %s",
           t.bandwidth.lo / 1e15, t.bandwidth.hi / 1e15, s->systems, run->wafer->hw.name);
  return WF_OK;
}

static int plots(wf_run *run, const tlrmvm_setup *s, const tlrmvm_ops *op, const tlrmvm_mdd *r,
                 wf_status *st) {
  const char *png = wf_deck_str(run->deck, TLRMVM_SECTION, "plot");
  char title[160];
  if (png[0]) {
    rank_map map = {&op->layout, op->a[0].rank, s->hz[0]};
    snprintf(title, sizeof title, "tile ranks, %d x %d at %g Hz, nb %d, acc %g", s->m, s->n,
             s->hz[0], s->nb, s->opts.acc);
    if (wf_run_plot(run, "plot_ranks.py", png, title, write_ranks, &map,
                    st) != WF_OK)
      return st->code;
  }
  png = wf_deck_str(run->deck, TLRMVM_SECTION, "mdd_plot");
  if (png[0] && r->truth) {
    tlrmvm_mdd_plot p = {s, r};
    snprintf(title, sizeof title, "MDD at %g Hz: %d LSQR iterations, acc %g", s->hz[0],
             r->r_tlr.iterations, s->opts.acc);
    return wf_run_plot(run, "plot_mdd.py", png, title, tlrmvm_mdd_write,
                       &p, st);
  }
  return WF_OK;
}

static int tlrmvm_run(wf_run *run, wf_status *st) {
  /* One BLAS thread a rank: the ranks are the parallelism. */
  wf_blas_single_thread();
  const wf_deck *d = run->deck;
  tlrmvm_setup s;
  if (tlrmvm_read_setup(d, &s, st) != WF_OK) return st->code;
  if (wf_deck_bool(d, TLRMVM_SECTION, "model_only")) return model_only(run, &s, st);
  if (s.input[0] && tlrmvm_input_shape(run, &s, st) != WF_OK) return st->code;
  tlrmvm_systems sys;
  if (tlrmvm_systems_create(run, &s, &sys, st) != WF_OK) return st->code;
  tlrmvm_ops op = {.sys = &sys};
  if (tl_layout_init(&op.layout, s.m, s.n, s.nb, &sys.dc, sys.row, sys.col, st) != WF_OK) {
    tlrmvm_systems_free(&sys);
    return wf_deck_blame(d, TLRMVM_SECTION, "nb", st);
  }
  if (!s.input[0] && tl_survey_init(&s.survey, st) != WF_OK) {
    tlrmvm_systems_free(&sys);
    return st->code;
  }
  bool do_mdd = s.mdd_iterations > 0 && !s.input[0];
  if (run->verbose)
    printf(
        "tlrmvm: %d x %d operator%s at %d frequencies (%g .. %g Hz), tiles of %d on %dx%d PEs, "
        "%d system%s of %dx%d ranks\n",
        s.m, s.n, s.input[0] ? "s from the input file" : "s of the survey", s.nfreq, s.hz[0],
        s.hz[s.nfreq - 1], s.nb, sys.dc.pe_nx, sys.dc.pe_ny, sys.count, sys.count > 1 ? "s" : "",
        sys.dc.px, sys.dc.py);
  if (run->verbose && s.mdd_iterations > 0 && !do_mdd)
    printf(
        "tlrmvm: no MDD: it recovers a point source's wavefield through the survey's "
        "geometry, which an input file does not give\n");
  measured m = {.green = -1};
  vectors vec = {0};
  tl_dense dense = {0};
  tlrmvm_mdd r = {0};
  tl_model t = {0};
  int rc = tlrmvm_build(run, &s, &op, st);
  if (rc == WF_OK) t = project(run, &s, &op);
  if (rc == WF_OK && (s.dense_time || do_mdd)) rc = tlrmvm_dense_all(run, &s, &op, &dense, st);
  /* a product's fabric, the wafer's */
  double cycles = t.bcast_cycles + t.reduce_cycles;
  if (rc == WF_OK) rc = tlrmvm_measure(run, &s, &op, &dense, cycles, &vec, &m, st);
  /* a signal during the measurements' last figures ends the run before the MDD and the output */
  if (rc == WF_OK) rc = wf_signal_check(run->comm, "after the products' measurements", st);
  if (rc == WF_OK && do_mdd) rc = tlrmvm_mdd_solve(run, &s, &op, &dense, &r, st);
  if (rc == WF_OK) {
    tlrmvm_check(run, &s, &m, do_mdd ? &r : NULL);
    report(run, &s, &op, &m);
    if (do_mdd) tlrmvm_mdd_report(run, &s, &r);
    report_model(run, &s, &t);
    run->seconds = m.forward * s.repeat;
    run->wafer_seconds = wf_range_scale(run->model.seconds, s.repeat);
  }
  const char *out = wf_deck_str(d, "output", "file");
  if (rc == WF_OK && out[0]) rc = write_output(run, &s, &op, &vec, do_mdd ? &r : NULL, out, st);
  if (rc == WF_OK) rc = plots(run, &s, &op, &r, st);
  tlrmvm_mdd_free(&r);
  if (dense.block) tl_dense_free(&dense);
  tlrmvm_vectors_free(&vec);
  tlrmvm_ops_free(&op);
  tl_survey_free(&s.survey);
  tlrmvm_systems_free(&sys);
  return rc;
}

const wf_workload wf_tlrmvm_workload = {
    .name = "tlrmvm",
    .help = "tile low-rank MVM of seismic operators (GB23), checked against the dense product",
    .sections = tlrmvm_sections,
    .nsections = 1,
    .run = tlrmvm_run,
    .rank_layout = WF_RANKS_ROWS,
};
