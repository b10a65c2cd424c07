/* wafer's version and the versions of what it links (`wafer --version`). */
#ifndef WF_VERSION_H
#define WF_VERSION_H

#include <stdio.h>

const char *wf_version(void);       /* "0.1.0 (git v0.1.0-3-gabc)" */
void wf_print_versions(FILE *out);  /* wafer and every library it links */

#endif
