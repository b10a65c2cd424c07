/* The optional references a run's checks compare with (PETSc, FFTW-MPI,
 * LAMMPS's `lmp`), whether this build and this machine have them, and one
 * rule for every workload's deck key that picks one:
 *
 *   auto       the reference when it is there; otherwise the run says that
 *              check is unavailable and how to enable it (never "ok" on
 *              its account);
 *   none       no comparison;
 *   <the name> the reference, required: absent, it is bad input (exit 2). */
#ifndef WF_REFERENCE_H
#define WF_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "wf_deck.h"
#include "wf_error.h"

typedef enum wf_ref_use {
  WF_REF_NONE,        /* not asked for */
  WF_REF_USE,         /* compare with it */
  WF_REF_UNAVAILABLE, /* auto, and it is not there: report it */
} wf_ref_use;

/* NULL when the reference is there, else why not and how to enable it. */
const char *wf_ref_petsc_absent(void);
const char *wf_ref_fftw_mpi_absent(void);
/* Whether `command` can be run as execvp would: a path with a slash, or a
 * name found on PATH; an executable regular file either way. */
bool wf_command_runnable(const char *command);
/* A command (e.g. "lmp") on PATH or as a path: NULL, or why not, in why[len]. */
const char *wf_ref_command_absent(const char *command, char *why, size_t len);

/* The rule above for `section.key`, whose choice `name` is the reference;
 * `absent` is NULL or why it is missing. */
int wf_ref_choose(const wf_deck *d, const char *section, const char *key, const char *name,
                  const char *absent, wf_ref_use *use, wf_status *st);

#endif
