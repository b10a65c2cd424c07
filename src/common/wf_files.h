/* The files a run reads and writes, declared to one registry before any
 * work starts: the deck, every input and output key of the workload's
 * sections, `--json`, and what a workload derives from them (snapshots).
 *
 * wf_files_check refuses, naming both claims: two claims on one file where
 * either writes it (an output over an input, over the deck, over another
 * output, over an output's temporaries `.part.*` or XDMF sidecar), an output
 * whose directory is missing or not writable, an output that is a directory
 * or a device, and an input that is not a regular file (a named pipe or a
 * device blocks a reader forever). Paths are compared by their directory's
 * identity and their name ("out.h5", "./out.h5", "/abs/out.h5" are one). */
#ifndef WF_FILES_H
#define WF_FILES_H

#include <stdbool.h>

#include "wf_error.h"

typedef enum {
  WF_FILE_READ,   /* an input the run reads */
  WF_FILE_WRITE,  /* an output the run writes (as NAME.part.XXXXXX, then renamed) */
  WF_FILE_UPDATE, /* read when it exists, then rewritten (a cache: FFTW wisdom) */
} wf_file_use;

typedef struct wf_file_claim {
  char who[640];  /* for messages, with where it came from: "deck.ini:3: [output] file = x.h5" */
  char name[96];  /* short, for the other claim's message: "[output] file", "--json" */
  char path[512]; /* a file; with `pattern`, its last component is an fnmatch pattern */
  wf_file_use use;
  bool pattern;   /* a family of files (snapshots: "run_??????.h5") */
  bool stream_ok; /* an existing device or pipe is written in place (--json /dev/stdout) */
  int family;     /* set by the registry: a claim and the files derived from it share it */
  bool derived;   /* set by the registry: NAME.part.*, a sidecar (its folder is its family's) */
} wf_file_claim;

typedef struct wf_files {
  wf_file_claim *claims;
  int n, cap;
} wf_files;

/* Declare one claim (`path` "" declares nothing). Fails only when out of
 * memory or the path is too long. A written file also claims its temporary
 * NAME.part.* and, for NAME.h5, its XDMF sidecar NAME.xmf. */
int wf_files_add(wf_files *files, const char *who, const char *name, const char *path,
                 wf_file_use use, wf_status *st);
/* A claim's fields from those arguments, the flags off (an input error when
 * the path is too long); then set `pattern` or `stream_ok` and add it: */
int wf_file_claim_init(wf_file_claim *c, const char *who, const char *name, const char *path,
                       wf_file_use use, wf_status *st);
int wf_files_add_claim(wf_files *files, const wf_file_claim *claim, wf_status *st);
/* Check every claim as above (this process alone; an input error). */
int wf_files_check(const wf_files *files, wf_status *st);
void wf_files_free(wf_files *files);

#endif
