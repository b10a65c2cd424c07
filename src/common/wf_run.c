/* What every workload's run shares (wf_workload.h): counting its checks and those it could
 * not make, its status word, the projection's JSON, an HDF5 output with the run's attributes,
 * and plots drawn by a Python script. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "wf_data.h"
#include "wf_h5.h"
#include "wf_io.h"
#include "wf_signal.h"

#include "wf_workload.h"

void wf_run_check(wf_run *run, bool ok, const char *what) {
  if (ok) {
    run->checks_passed++;
    return;
  }
  run->checks_failed++;
  if (run->verbose) printf("%s: CHECK FAILED: %s\n", run->workload, what);
}

void wf_run_unavailable(wf_run *run, const char *check, const char *why) {
  size_t n = strlen(run->unavailable);
  snprintf(run->unavailable + n, sizeof run->unavailable - n, "%s%s", n ? "; " : "", check);
  if (run->verbose) printf("%s: %s: unavailable, not checked (%s)\n", run->workload, check, why);
}

void wf_run_unchecked(wf_run *run, const char *check, const char *why) {
  size_t n = strlen(run->unchecked);
  snprintf(run->unchecked + n, sizeof run->unchecked - n, "%s%s", n ? "; " : "", check);
  if (run->verbose) printf("%s: not checked: %s (%s)\n", run->workload, check, why);
}

const char *wf_run_status(const wf_run *run, int code) {
  if (wf_interrupted(code)) return "interrupted";
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

int wf_run_h5_create(const wf_run *run, const char *path, wf_h5file *f, wf_status *st) {
  if (wf_h5_create(f, run->comm, path, st) != WF_OK) return st->code;
  char *ini = wf_deck_to_ini(run->deck);
  char grid[64], ranks[64];
  snprintf(grid, sizeof grid, "%dx%d", run->pe_grid[0], run->pe_grid[1]);
  snprintf(ranks, sizeof ranks, "%dx%d", run->rank_grid[0], run->rank_grid[1]);
  wf_status_clear(st);
  if (!ini) wf_fail(st, WF_ERR_RUNTIME, "out of memory for the deck attribute");
  wf_status_agree(run->comm, st);
  int rc = st->code;
  if (rc != WF_OK || wf_h5_attr_str(f, "workload", run->workload, st) != WF_OK ||
      wf_h5_attr_str(f, "version", run->version, st) != WF_OK ||
      wf_h5_attr_str(f, "deck", ini, st) != WF_OK ||
      wf_h5_attr_int(f, "ranks", run->nranks, st) != WF_OK ||
      wf_h5_attr_str(f, "rank_grid", ranks, st) != WF_OK ||
      wf_h5_attr_str(f, "pe_grid", grid, st) != WF_OK ||
      wf_h5_attr_str(f, "hardware", run->hardware, st) != WF_OK) {
    wf_h5_discard(f);
    rc = st->code;
  }
  free(ini);
  return rc;
}

static int script_path(const char *script, char *path, size_t len, wf_status *st) {
  char rel[256];
  snprintf(rel, sizeof rel, "scripts/%s", script);
  return wf_data_path(rel, path, len, st);
}

int wf_run_plot(const wf_run *run, const char *script, const char *png, const char *title,
                void (*write)(FILE *f, const void *data), const void *data, wf_status *st) {
  wf_status_clear(st);
  char path[4096];
  if (run->rank == 0 && script_path(script, path, sizeof path, st) == WF_OK) {
    const char *dir = getenv("TMPDIR");
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/wafer-plot-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
      if (fd >= 0) close(fd), remove(tmp);
      wf_fail(st, WF_ERR_RUNTIME, "plot: cannot create a temporary file");
    } else {
      write(f, data);
      if (fclose(f) != 0) {
        wf_fail(st, WF_ERR_RUNTIME, "plot: cannot write the temporary file %s", tmp);
      } else {
        /* Drawn into the plot's own new temporary, then renamed: a failed
         * or cut-short drawing (a full disk) leaves nothing under the plot's
         * name, and a link planted beside it is never written through. */
        char part[4096];
        int pfd = wf_temp_create(png, part, sizeof part);
        if (pfd < 0) {
          wf_fail(st, WF_ERR_RUNTIME, "plot: cannot create a temporary beside '%s': %s", png,
                  strerror(errno));
        } else {
          close(pfd);
          char *argv[] = {(char *)wf_python(), path, tmp, part, (char *)title, NULL};
          if (wf_run_helper(argv, "plot", "does WAFER_PYTHON have matplotlib and numpy?", st) !=
                  WF_OK ||
              rename(part, png) != 0) {
            if (st->code == WF_OK)
              wf_fail(st, WF_ERR_RUNTIME, "plot: cannot rename '%s' to '%s': %s", part, png,
                      strerror(errno));
            remove(part);
          }
        }
      }
      remove(tmp);
    }
  }
  wf_status_bcast(run->comm, st);
  return st->code;
}
