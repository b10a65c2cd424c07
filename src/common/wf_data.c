/* realpath() is XSI. */
#define _XOPEN_SOURCE 700

#include "wf_data.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wf_config.h"
#include "wf_reference.h"

static bool is_dir(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* A data folder holds inputs/ and scripts/. */
static bool holds_data(const char *dir) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/inputs", dir);
  if (!is_dir(p)) return false;
  snprintf(p, sizeof p, "%s/scripts", dir);
  return is_dir(p);
}

/* The folder of the running binary (Linux: /proc/self/exe). */
static bool exe_dir(char *out, size_t len) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return false;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return false;
  *slash = '\0';
  snprintf(out, len, "%s", exe);
  return true;
}

static int data_dir(char *out, size_t len, wf_status *st) {
  const char *env = getenv("WAFER_DATA_DIR");
  if (env && env[0]) {
    if (!is_dir(env))
      return wf_fail(st, WF_ERR_INPUT, "WAFER_DATA_DIR=%s: no such folder", env);
    if (!holds_data(env))
      return wf_fail(st, WF_ERR_INPUT,
                     "WAFER_DATA_DIR=%s lacks wafer's data (inputs/ and scripts/): point it at "
                     "<prefix>/share/wafer, or unset it",
                     env);
    snprintf(out, len, "%s", env);
    return WF_OK;
  }
  char bin[PATH_MAX] = "(unknown)", dir[PATH_MAX];
  if (exe_dir(bin, sizeof bin)) {
    /* The build tree's first: a build folder inside an install prefix must
     * not take the installed (older) data. */
    const char *tries[] = {"share/wafer", WAFER_BIN_TO_DATA};
    for (size_t i = 0; i < sizeof tries / sizeof *tries; i++) {
      snprintf(dir, sizeof dir, "%s/%s", bin, tries[i]);
      char real[PATH_MAX];
      if (holds_data(dir) && realpath(dir, real)) {
        snprintf(out, len, "%s", real);
        return WF_OK;
      }
    }
  }
  return wf_fail(st, WF_ERR_INPUT,
                 "cannot find wafer's data (decks, plot scripts) beside the binary (%s/%s): "
                 "install with `cmake --install`, or set WAFER_DATA_DIR=<prefix>/share/wafer",
                 bin, WAFER_BIN_TO_DATA);
}

int wf_data_path(const char *rel, char *out, size_t len, wf_status *st) {
  char dir[PATH_MAX];
  if (data_dir(dir, sizeof dir, st) != WF_OK) return st->code;
  snprintf(out, len, "%s/%s", dir, rel);
  if (access(out, R_OK) != 0)
    return wf_fail(st, WF_ERR_INPUT, "wafer's data folder %s lacks %s", dir, rel);
  return WF_OK;
}

const char *wf_python(void) {
  const char *env = getenv("WAFER_PYTHON");
  return env && env[0] ? env : WAFER_PYTHON;
}

bool wf_plots_available(char *why, size_t len) {
  const char *py = wf_python();
  if (wf_command_runnable(py)) return true;
  if (py[0])
    snprintf(why, len, "the plots' Python %s cannot be run (not on PATH, not an executable file): "
             "set WAFER_PYTHON", py);
  else
    snprintf(why, len,
             "this wafer found no Python with matplotlib and numpy when it was built: set "
             "WAFER_PYTHON=/path/to/python3 (with both), or reconfigure with -DWAFER_PYTHON=...");
  return false;
}
