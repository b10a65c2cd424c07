/* Error codes that carry a message.
 *
 * A function that can fail takes a `wf_status *` and returns an int code
 * (WF_OK on success). On failure it fills the status with a code and a
 * human-readable message; callers add context or pass it up. Only main()
 * turns a status into an exit code (or MPI_Abort). */
#ifndef WF_ERROR_H
#define WF_ERROR_H

#include <stddef.h>

enum {
  WF_OK = 0,
  WF_ERR_RUNTIME = 1, /* a check failed, a library call failed: exit status 1 */
  WF_ERR_INPUT = 2,   /* bad deck, bad option, missing file: exit status 2 */
};

typedef struct wf_status {
  int code;
  char msg[1024];
} wf_status;

/* Set `st` to (code, printf-style message) and return code. */
int wf_fail(wf_status *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix the message already in `st` with more context ("while X: "). */
int wf_wrap(wf_status *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void wf_status_clear(wf_status *st);

#endif
