/* Where `wafer` finds its data (the example and fidelity decks, the plot
 * scripts) and the programs it runs beside itself (Python for the plots).
 *
 * Never through the source tree: the data live in share/wafer relative to
 * the binary (installed: WAFER_BIN_TO_DATA from wf_config.h; the build tree:
 * share/wafer beside `wafer`), or wherever WAFER_DATA_DIR says. */
#ifndef WF_DATA_H
#define WF_DATA_H

#include <stdbool.h>
#include <stddef.h>

#include "wf_error.h"

/* `rel` ("scripts/plot_loss.py", "inputs/fidelity") under the data folder,
 * into out[len]. An input error when WAFER_DATA_DIR names a folder that does
 * not exist or lacks inputs/ and scripts/, or when `rel` is not there. */
int wf_data_path(const char *rel, char *out, size_t len, wf_status *st);

/* The Python that draws the plots: WAFER_PYTHON from the environment, else
 * the one found at configure time; "" when there is none. */
const char *wf_python(void);
/* Whether plots can be drawn; when not, `why` says how to enable them. */
bool wf_plots_available(char *why, size_t len);

#endif
