/* The LAMMPS cross-check (md_lammps.h): writes the input script, runs `lmp` as a separate
 * program, and reads back its thermo rows, loop time and forces at one step. Rank 0 only. */
#include "md_lammps.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_io.h"
#include "wf_signal.h"

static int write_input(const md_lammps_job *j, const char *path, wf_status *st) {
  char text[4096];
  int n = snprintf(text, sizeof text,
                   "# written by wafer eam (crosscheck = lammps)\n"
                   "units metal\natom_style atomic\nboundary p p p\natom_modify map array\n"
                   "read_data %s/init.data\nreset_timestep %lld\n",
                   j->dir, j->start_step);
  if (j->elements)
    n += snprintf(text + n, sizeof text - n, "pair_style eam/alloy\npair_coeff * * %s %s\n",
                  j->potential, j->elements);
  else
    n += snprintf(text + n, sizeof text - n, "pair_style eam\npair_coeff 1 1 %s\n", j->potential);
  n += snprintf(text + n, sizeof text - n,
                "neighbor %.17g bin\nneigh_modify every 1 delay %d check yes\n"
                "timestep %.17g\n"
                "thermo_style custom step temp pe ke etotal press\n"
                "thermo_modify norm no format float %%.17g\n"
                "thermo %lld\n"
                "fix nve all nve\n",
                j->skin, j->neigh_delay, j->dt, j->thermo);
  if (j->berendsen_damp > 0)
    n += snprintf(text + n, sizeof text - n, "fix berendsen all temp/berendsen %.17g %.17g %.17g\n",
                  j->berendsen_t, j->berendsen_t, j->berendsen_damp);
  if (j->force_step > 0)
    snprintf(text + n, sizeof text - n,
             "dump forces all custom %lld %s/forces.txt id fx fy fz\n"
             "dump_modify forces sort id format float %%.17g\n"
             "run %lld\n",
             j->force_step, j->dir, j->steps);
  else
    snprintf(text + n, sizeof text - n,
             "run %lld\n"
             "write_dump all custom %s/forces.txt id fx fy fz modify sort id format float %%.17g\n",
             j->steps, j->dir);
  return wf_write_text_atomic(path, text, st);
}

/* lmp is itself an MPI program: wf_spawn drops the launcher's variables so
 * that it runs as a singleton instead of trying to join this job. */
static int spawn_lmp(const md_lammps_job *j, wf_status *st) {
  char in[1024], log[1024], out[1024];
  snprintf(in, sizeof in, "%s/in.lmp", j->dir);
  snprintf(log, sizeof log, "%s/log.lammps", j->dir);
  snprintf(out, sizeof out, "%s/lmp.out", j->dir);
  char *argv[] = {(char *)j->lmp, "-in", in, "-log", log, "-screen", "none", NULL};
  int status;
  if (wf_spawn(argv, out, &status, st) != WF_OK)
    return wf_interrupted(st->code)
               ? st->code
               : wf_wrap(st, "crosscheck (Debian package lammps: run scripts/setup, or set eam.lmp)");
  if (status != 0)
    return wf_fail(st, WF_ERR_RUNTIME, "crosscheck: %s failed (exit %d); see %s and %s", j->lmp,
                   status, log, out);
  return WF_OK;
}

/* The thermo rows of the last run in the log, and its loop time. */
static int parse_log(const char *path, md_lammps_result *res, wf_status *st) {
  char *text;
  if (wf_read_text(path, "LAMMPS log", WF_MAX_BCAST_BYTES, &text, st) != WF_OK) return st->code;
  char *block = NULL, *p = text;
  while ((p = strstr(p, "Step "))) {
    if (p == text || p[-1] == '\n' || p[-1] == ' ') block = p;
    p += 5;
  }
  int cap = 64;
  res->rows = malloc((size_t)cap * sizeof *res->rows);
  res->nrows = 0;
  for (char *line = block ? strchr(block, '\n') : NULL; line && res->rows;) {
    line++;
    md_thermo_row r;
    if (sscanf(line, "%lld %lf %lf %lf %lf %lf", &r.step, &r.temp, &r.pe, &r.ke, &r.etotal,
               &r.press) != 6)
      break;
    if (res->nrows == cap) {
      md_thermo_row *q = realloc(res->rows, (size_t)(cap *= 2) * sizeof *q);
      if (!q) break;
      res->rows = q;
    }
    res->rows[res->nrows++] = r;
    line = strchr(line, '\n');
  }
  char *loop = block ? strstr(block, "Loop time of ") : NULL;
  if (loop) sscanf(loop, "Loop time of %lf", &res->loop_seconds);
  free(text);
  if (!res->rows || res->nrows == 0 || !loop)
    return wf_fail(st, WF_ERR_RUNTIME, "crosscheck: no thermo rows or loop time in %s", path);
  return WF_OK;
}

/* The snapshot of step `step` in a dump of forces. */
static int parse_forces(const char *path, long long step, md_lammps_result *res, wf_status *st) {
  char *text;
  if (wf_read_text(path, "LAMMPS force dump", WF_MAX_BCAST_BYTES, &text, st) != WF_OK) return st->code;
  char *p = text;
  long long t = -1;
  while ((p = strstr(p, "ITEM: TIMESTEP")) && sscanf(p, "ITEM: TIMESTEP %lld", &t) == 1 && t != step)
    p++;
  p = p && t == step ? strstr(p, "ITEM: NUMBER OF ATOMS") : NULL;
  long long n = 0;
  if (p) sscanf(p, "ITEM: NUMBER OF ATOMS %lld", &n);
  p = p ? strstr(p, "ITEM: ATOMS") : NULL;
  /* at most one atom a line of the dump: n bounded by the text's size */
  if (n < 0 || n > (long long)strlen(text)) n = 0;
  res->force_id = malloc(((size_t)n + 1) * sizeof *res->force_id);
  res->force = malloc(((size_t)n + 1) * sizeof *res->force);
  if (!res->force_id || !res->force) {
    free(text);
    return wf_fail(st, WF_ERR_RUNTIME, "crosscheck: out of memory for %lld forces", n);
  }
  long long k = 0;
  for (char *line = p ? strchr(p, '\n') : NULL; line && k < n; k++) {
    long long id;
    if (sscanf(line + 1, "%lld %lf %lf %lf", &id, &res->force[k][0], &res->force[k][1],
               &res->force[k][2]) != 4)
      break;
    res->force_id[k] = id;
    line = strchr(line + 1, '\n');
  }
  free(text);
  res->nforces = k;
  if (n == 0 || k != n)
    return wf_fail(st, WF_ERR_RUNTIME, "crosscheck: read %lld of %lld forces of step %lld from %s",
                   k, n, step, path);
  return WF_OK;
}

int md_lammps_run(const md_lammps_job *j, md_lammps_result *res, wf_status *st) {
  memset(res, 0, sizeof *res);
  char in[1024], path[1024];
  snprintf(in, sizeof in, "%s/in.lmp", j->dir);
  if (write_input(j, in, st) != WF_OK || spawn_lmp(j, st) != WF_OK) return st->code;
  snprintf(path, sizeof path, "%s/log.lammps", j->dir);
  if (parse_log(path, res, st) != WF_OK) return st->code;
  snprintf(path, sizeof path, "%s/forces.txt", j->dir);
  return parse_forces(path, j->force_step, res, st);
}

void md_lammps_result_free(md_lammps_result *res) {
  free(res->rows), free(res->force_id), free(res->force);
  memset(res, 0, sizeof *res);
}
