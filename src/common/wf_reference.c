/* The optional references (wf_reference.h): whether PETSc, FFTW-MPI or a command such as
 * `lmp` is there, and the auto / none / <name> rule a deck key uses to pick one. */
#include "wf_reference.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wf_config.h"

const char *wf_ref_petsc_absent(void) {
  return WAFER_HAVE_PETSC ? NULL
                          : "this wafer was built without PETSc: reconfigure with PETSC_DIR and "
                            "PETSC_ARCH naming a PETSc built with the same MPI (docs/building.md)";
}

const char *wf_ref_fftw_mpi_absent(void) {
  return WAFER_HAVE_FFTW_MPI ? NULL
                             : "this wafer was built without FFTW-MPI: reconfigure with FFTW_ROOT "
                               "naming an FFTW built with --enable-mpi and the same MPI "
                               "(docs/building.md)";
}

static bool executable_file(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* execvp's search: a name with a slash is a path, else each PATH entry. */
bool wf_command_runnable(const char *command) {
  if (!command[0]) return false;
  if (strchr(command, '/')) return executable_file(command);
  const char *path = getenv("PATH");
  if (!path) return false;
  char dir[PATH_MAX], file[PATH_MAX];
  while (*path) {
    size_t n = strcspn(path, ":");
    snprintf(dir, sizeof dir, "%.*s", (int)n, path);
    snprintf(file, sizeof file, "%s/%s", n ? dir : ".", command);
    if (executable_file(file)) return true;
    path += n + (path[n] == ':');
  }
  return false;
}

const char *wf_ref_command_absent(const char *command, char *why, size_t len) {
  if (wf_command_runnable(command)) return NULL;
  snprintf(why, len, "`%s` is not an executable on PATH", command);
  return why;
}

int wf_ref_choose(const wf_deck *d, const char *section, const char *key, const char *name,
                  const char *absent, wf_ref_use *use, wf_status *st) {
  const char *v = wf_deck_str(d, section, key);
  *use = WF_REF_NONE;
  if (strcmp(v, "auto") == 0) {
    *use = absent ? WF_REF_UNAVAILABLE : WF_REF_USE;
  } else if (strcmp(v, name) == 0) {
    if (absent)
      return wf_deck_fail(d, section, key, st, "%s is not available: %s (or set %s.%s = none)",
                          name, absent, section, key);
    *use = WF_REF_USE;
  }
  return WF_OK;
}
