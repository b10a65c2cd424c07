/* md_h5md.h in a build without HDF5 (the simulated build): the deck
 * refuses output.file there before any work, so these only answer a caller
 * that got past it (wf_h5_absent.c says why). */
#include "md_h5md.h"

int md_h5md_create(md_h5md *h, const wf_run *run, const char *path, const md_sim *sim,
                   long long nframes, wf_status *st) {
  (void)h, (void)run, (void)sim, (void)nframes;
  return wf_fail(st, WF_ERR_INPUT, "'%s': %s", path, WF_H5_ABSENT);
}
int md_h5md_frame(md_h5md *h, const md_sim *sim, wf_status *st) {
  (void)h, (void)sim;
  return wf_fail(st, WF_ERR_INPUT, "%s", WF_H5_ABSENT);
}
int md_h5md_close(md_h5md *h, wf_status *st) {
  (void)h;
  return wf_fail(st, WF_ERR_INPUT, "%s", WF_H5_ABSENT);
}
void md_h5md_discard(md_h5md *h) { (void)h; }
