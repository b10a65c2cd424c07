/* Small file helpers shared by every module. */
#ifndef WF_IO_H
#define WF_IO_H

#include <mpi.h>

#include "wf_error.h"

#include <stddef.h>

/* Every input file is read with a bound on its size (an input error beyond
 * it), so that no file can make a reader ask for unbounded memory. These
 * are the bounds of the text inputs; each is far above any real file. */
#define WF_MAX_DECK_BYTES (1u << 20)          /* decks and defect maps: 1 MiB */
#define WF_MAX_TABLE_BYTES (512u << 20)      /* EAM potentials: 512 MiB */
#define WF_MAX_BCAST_BYTES ((size_t)2147483646) /* one MPI_Bcast: INT_MAX - 1 */

/* Open an input for reading (this process alone): a file descriptor, or -1
 * and an input error when it cannot be opened or is not a regular file (a
 * named pipe would block the reader forever, a device never end). Every
 * reader of an input file opens it through here. */
int wf_open_input(const char *path, const char *what, wf_status *st);

/* Read a whole text file of at most max_bytes (this process alone):
 * malloc'ed, NUL-terminated. */
int wf_read_text(const char *path, const char *what, size_t max_bytes, char **text,
                 wf_status *st);

/* Read a whole text file of at most max_bytes (and WF_MAX_BCAST_BYTES) on
 * rank 0 and broadcast it: every rank gets the same malloc'ed,
 * NUL-terminated text (or the same error). Collective. */
int wf_read_text_bcast(MPI_Comm comm, const char *path, const char *what, size_t max_bytes,
                       char **text, wf_status *st);

/* The temporary a file is written to before it is renamed over `path`:
 * "<path>.part.<6 characters>", created new and exclusively (O_EXCL), so it
 * is never opened through a name that exists already: a link planted at
 * the temporary's name cannot redirect the write (onto an input, say), and
 * two runs writing the same output each write their own temporary (the
 * last rename wins whole). Mode 0666 less the umask, as any new file.
 * Returns the open descriptor and the name in tmp (tmp_size at least
 * strlen(path) + WF_TEMP_SUFFIX_LEN + 1), or -1 with errno set. */
#define WF_TEMP_SUFFIX_LEN 12 /* ".part.XXXXXX" */
int wf_temp_create(const char *path, char *tmp, size_t tmp_size);

/* Write `text` to `path` atomically: to a temporary name, then rename. An
 * existing device or pipe (/dev/stdout) is written in place, never
 * replaced; a directory is an input error. */
int wf_write_text_atomic(const char *path, const char *text, wf_status *st);

/* A file's identity by content: its size and a 64-bit FNV-1a checksum of
 * every byte, read on rank 0 in 1 MiB pieces (about a second a GB; a
 * signal stops it, wf_signal_stop) and given to every rank as text
 * "size=N fnv=HEX" in id[len]. Collective. */
int wf_file_identity(MPI_Comm comm, const char *path, char *id, size_t len, wf_status *st);

/* Broadcast a status from rank 0 so that all ranks agree on an error that
 * only rank 0 could see. Collective. */
void wf_status_bcast(MPI_Comm comm, wf_status *st);

/* Combine a status that any rank may have set: the lowest failing rank's
 * status is given to every rank. Collective. */
void wf_status_agree(MPI_Comm comm, wf_status *st);

/* Run a program (looked up on PATH unless argv[0] holds a '/') and wait for
 * it: stdin from /dev/null, stdout and stderr to the file `output` (NULL:
 * this process's), in this environment less the MPI launcher's variables
 * (a child that links MPI must not take itself for one of our ranks).
 * *exit_status is its exit status, -1 if a signal ended it. Fails when it
 * cannot be started, and when a signal reaches this rank or any other
 * (wf_signal_stop, polled every 10 ms): the child is sent SIGTERM, waited
 * for, and the status is wf_signal_fail's. This process only. */
int wf_spawn(char *const argv[], const char *output, int *exit_status, wf_status *st);

/* wf_spawn for a helper program (e.g. a plotting script) whose failure is
 * an error: `st` says "`what`: ARGV1 failed" with `hint`. */
int wf_run_helper(char *const argv[], const char *what, const char *hint, wf_status *st);

/* Call before MPI_Init. Open MPI 4.1's default MPI-IO component (OMPIO)
 * intermittently loses parts of collective HDF5 writes here (about 1 run in
 * 10 of `wafer halo` with a defect map on 4 ranks wrote a zeroed stretch);
 * ROMIO writes them correctly. Unless the user chose an MPI-IO component
 * (OMPI_MCA_io), select ROMIO. Harmless with other MPI libraries. */
void wf_mpi_io_prefer_romio(void);

#endif
