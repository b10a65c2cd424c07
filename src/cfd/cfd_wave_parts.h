/* The parts of `wafer cfd`'s wave run shared by its files (private to
 * src/cfd): the run's state, what it measured and what its checks found.
 *   cfd_wave_run.c    the state, the steps, checkpoints, the model, the output, the run
 *   cfd_wave_check.c  the shot gather, the checks against analytic answers, the report */
#ifndef CFD_WAVE_PARTS_H
#define CFD_WAVE_PARTS_H

#include <stdbool.h>

#include "cf_wave.h"
#include "cf_wave_balance.h"
#include "cfd_parts.h"

typedef struct wave {
  const cfd_setup *s;
  st_mesh m;
  cf_wave w;
  double *cur, *prev;
  double a;             /* (v dt / h)^2 */
  bool holds_receivers; /* this rank holds the receivers' row */
  double *trace;        /* [steps][lnx]: u at the receivers after each step */
  double *energy;       /* [n][2]: step, energy (times h^2 / ...: see energy()) */
  int nenergy;
  double *amplitude; /* mode: <u^n, phi> / <phi, phi>, n = 0..steps */
  double *phi;       /* mode: the initial field */
  cf_balance balance; /* source, from rest: the field's sums in the first steps */
  int first_step;    /* 0, or the restart's */
  const char *checkpoint;
  int checkpoint_every, last_checkpoint; /* the step of the last one written (-1: none) */
  const char *deck_state;                /* what each checkpoint records (wf_deck_state) */
} wave;

typedef struct wave_measured {
  double seconds; /* the time steps, slowest rank */
  double triad;   /* STREAM triad, bytes/s (0: not measured) */
  int steps;
} wave_measured;

typedef struct wave_findings {
  double arrival; /* periods */
  int receivers;
  double drift;                                         /* relative energy change */
  double lambda_run, lambda_discrete, lambda_continuum; /* mode: eigenvalue x h^2 */
  double probe; /* the stencil on a mode against the reference: error / round-off bound */
  double balance; /* source: the field's sums against the wavelet's (-1: not checked) */
} wave_findings;

/* The shot gather on rank 0: [steps][nx] (NULL elsewhere). Collective. */
double *cfd_wave_gather(const wave *p, wf_run *run);
/* The run's checks against analytic answers (the direct wave's arrival,
 * the mode's eigenvalue, energy conservation, the stencil and the source's
 * balance against their references), counted on `run`. */
void cfd_wave_check(wave *p, wf_run *run, const double *gather, wave_findings *f);
/* The run's lines and JSON summary (wf_report), its headline. */
void cfd_wave_report(wf_run *run, const wave *p, const wave_measured *r, const wave_findings *f);

#endif
