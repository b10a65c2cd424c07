/* Small file helpers (wf_io.h): bounded reads of input files (on one rank, or broadcast),
 * atomic text writes, ranks agreeing on a status, and running helper programs. */
#include "wf_io.h"

#include "wf_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int wf_open_input(const char *path, const char *what, wf_status *st) {
  /* Non-blocking, so that opening a named pipe with no writer returns. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return wf_fail(st, WF_ERR_INPUT, "cannot open %s '%s': %s", what, path, strerror(errno)), -1;
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return wf_fail(st, WF_ERR_INPUT,
                   "%s '%s' is %s, not a file: inputs are read from regular files", what, path,
                   S_ISDIR(sb.st_mode) ? "a directory" : "a named pipe or a device"),
           -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

static char *slurp(const char *path, const char *what, size_t max_bytes, wf_status *st) {
  int fd = wf_open_input(path, what, st);
  FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (!f) {
    if (fd >= 0) {
      close(fd);
      wf_fail(st, WF_ERR_RUNTIME, "cannot read %s '%s': %s", what, path, strerror(errno));
    }
    return NULL;
  }
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (n == 0) break;
    if (len > max_bytes) { /* counted as read: pipes and special files too */
      free(buf);
      fclose(f);
      wf_fail(st, WF_ERR_INPUT, "%s '%s' is larger than the %.3g MB this reader accepts", what,
              path, (double)max_bytes / 1e6);
      return NULL;
    }
    if (len + 1 == cap) {
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
  }
  bool bad = ferror(f);
  fclose(f);
  if (!buf) {
    wf_fail(st, WF_ERR_RUNTIME, "out of memory reading %s '%s'", what, path);
    return NULL;
  }
  if (bad) {
    free(buf);
    wf_fail(st, WF_ERR_INPUT, "cannot read %s '%s'", what, path);
    return NULL;
  }
  buf[len] = '\0';
  if (strlen(buf) != len) {
    free(buf);
    wf_fail(st, WF_ERR_INPUT, "%s '%s' is not a text file (it holds NUL bytes)", what, path);
    return NULL;
  }
  return buf;
}

int wf_read_text(const char *path, const char *what, size_t max_bytes, char **text,
                 wf_status *st) {
  wf_status_clear(st);
  *text = slurp(path, what, max_bytes, st);
  return st->code;
}

void wf_status_bcast(MPI_Comm comm, wf_status *st) {
  /* Often after rank 0 worked alone: the others wait passing their signals
   * on. Alone, nothing to send (and SimGrid 3.32's MPI_Ibcast on one rank
   * never completes). */
  int size;
  MPI_Comm_size(comm, &size);
  if (size == 1) return;
  MPI_Request req;
  MPI_Ibcast(st, (int)sizeof *st, MPI_BYTE, 0, comm, &req);
  wf_signal_wait(&req);
}

void wf_status_agree(MPI_Comm comm, wf_status *st) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = st->code != WF_OK ? rank : size, first;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first < size) MPI_Bcast(st, (int)sizeof *st, MPI_BYTE, first, comm);
}

int wf_read_text_bcast(MPI_Comm comm, const char *path, const char *what, size_t max_bytes,
                       char **text, wf_status *st) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  char *buf = NULL;
  long long len = 0;
  wf_status_clear(st);
  if (rank == 0) {
    buf = slurp(path, what, max_bytes < WF_MAX_BCAST_BYTES ? max_bytes : WF_MAX_BCAST_BYTES, st);
    if (buf) len = (long long)strlen(buf);
  }
  wf_status_bcast(comm, st);
  if (st->code != WF_OK) {
    free(buf);
    return st->code;
  }
  MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, comm);
  if (rank != 0) {
    buf = malloc((size_t)len + 1);
    if (!buf) wf_fail(st, WF_ERR_RUNTIME, "out of memory for %s (%lld bytes)", what, len);
  }
  wf_status_agree(comm, st);
  if (st->code != WF_OK) {
    free(buf);
    return st->code;
  }
  MPI_Bcast(buf, (int)len + 1, MPI_CHAR, 0, comm);
  *text = buf;
  return WF_OK;
}

/* Write to an existing device or pipe (--json /dev/stdout) in place: a
 * rename would replace it (as root, even /dev/null) with a regular file. */
static int write_in_place(const char *path, const char *text, wf_status *st) {
  /* Non-blocking open: a named pipe nobody reads fails at once (ENXIO)
   * instead of leaving the run waiting for a reader, deaf to signals. */
  int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    int err = errno;
    if (fd >= 0) close(fd);
    return wf_fail(st, WF_ERR_INPUT, "cannot write '%s': %s", path,
                   err == ENXIO ? "a named pipe that nobody reads" : strerror(err));
  }
  bool ok = fputs(text, f) >= 0;
  ok = (fclose(f) == 0) && ok;
  if (!ok) return wf_fail(st, WF_ERR_RUNTIME, "cannot write '%s': %s", path, strerror(errno));
  return WF_OK;
}

static int checksum(const char *path, char *id, size_t len, wf_status *st) {
  int fd = wf_open_input(path, "file", st);
  if (fd < 0) return st->code;
  enum { PIECE = 1 << 20 };
  unsigned char *buf = malloc(PIECE);
  if (!buf) {
    close(fd);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  }
  unsigned long long hash = 14695981039346656037ull, size = 0;
  ssize_t got;
  int sig = 0;
  while (!(sig = wf_signal_stop()) && (got = read(fd, buf, PIECE)) > 0) {
    for (ssize_t i = 0; i < got; i++) hash = (hash ^ buf[i]) * 1099511628211ull;
    size += (unsigned long long)got;
  }
  int err = errno;
  free(buf);
  close(fd);
  if (sig) return wf_signal_fail(st, sig, "while reading a file's checksum");
  if (got < 0) return wf_fail(st, WF_ERR_INPUT, "cannot read '%s': %s", path, strerror(err));
  snprintf(id, len, "size=%llu fnv=%016llx", size, hash);
  return WF_OK;
}

int wf_file_identity(MPI_Comm comm, const char *path, char *id, size_t len, wf_status *st) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  wf_status_clear(st);
  id[0] = '\0';
  if (rank == 0) checksum(path, id, len, st);
  wf_status_bcast(comm, st);
  if (st->code == WF_OK) MPI_Bcast(id, (int)len, MPI_CHAR, 0, comm);
  return st->code;
}

int wf_temp_create(const char *path, char *tmp, size_t tmp_size) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  if (strlen(path) + WF_TEMP_SUFFIX_LEN + 1 > tmp_size) {
    errno = ENAMETOOLONG;
    return -1;
  }
  /* The suffix from the clock, the process and a counter; a name taken
   * (another run's temporary, or anything planted there) is skipped. */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  unsigned long long x = (unsigned long long)now.tv_nsec ^ ((unsigned long long)now.tv_sec << 20) ^
                         ((unsigned long long)getpid() << 40);
  for (int attempt = 0; attempt < 1000; attempt++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull; /* a step of an LCG */
    char suffix[7];
    for (int i = 0; i < 6; i++) suffix[i] = letters[(x >> (10 + 6 * i)) % 62];
    suffix[6] = '\0';
    snprintf(tmp, tmp_size, "%s.part.%s", path, suffix);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

int wf_write_text_atomic(const char *path, const char *text, wf_status *st) {
  struct stat sb;
  bool exists = stat(path, &sb) == 0;
  if (exists && S_ISDIR(sb.st_mode))
    return wf_fail(st, WF_ERR_INPUT, "cannot write '%s': it is a directory", path);
  if (exists && !S_ISREG(sb.st_mode)) return write_in_place(path, text, st);
  char tmp[4096];
  int fd = wf_temp_create(path, tmp, sizeof tmp);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    int err = errno;
    if (fd >= 0) close(fd), remove(tmp);
    return wf_fail(st, WF_ERR_INPUT, "cannot write '%s': %s", path, strerror(err));
  }
  bool ok = fputs(text, f) >= 0;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    return wf_fail(st, WF_ERR_RUNTIME, "cannot write '%s': %s", path, strerror(errno));
  }
  return WF_OK;
}

extern char **environ;

/* The environment without the MPI launcher's variables (Open MPI, PMIx,
 * PMI, Slurm); Open MPI's root permission stays. NULL if out of memory. */
static char **child_environment(void) {
  int n = 0;
  while (environ[n]) n++;
  char **env = malloc(((size_t)n + 1) * sizeof *env);
  if (!env) return NULL;
  int k = 0;
  for (int i = 0; i < n; i++) {
    const char *e = environ[i];
    bool launcher = strncmp(e, "OMPI_", 5) == 0 || strncmp(e, "PMIX_", 5) == 0 ||
                    strncmp(e, "PMI_", 4) == 0 || strncmp(e, "SLURM_", 6) == 0;
    if (!launcher || strncmp(e, "OMPI_ALLOW_RUN_AS_ROOT", 22) == 0) env[k++] = environ[i];
  }
  env[k] = NULL;
  return env;
}

int wf_spawn(char *const argv[], const char *output, int *exit_status, wf_status *st) {
  *exit_status = -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (output) {
    posix_spawn_file_actions_addopen(&fa, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  char **env = child_environment();
  pid_t pid;
  int status = 0;
  /* (In this process's group: a launcher that ends the job's groups ends
   * the child too.) */
  int err = env ? posix_spawnp(&pid, argv[0], &fa, NULL, argv, env) : ENOMEM;
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  if (err != 0) return wf_fail(st, WF_ERR_RUNTIME, "cannot run '%s': %s", argv[0], strerror(err));
  /* Waited for 10 ms at a time: a signal here or at any rank (a reference
   * run of LAMMPS takes minutes at scale) sends it SIGTERM, and SIGKILL 2 s
   * later if it is still there. */
  int sig = 0, ticks_since = 0;
  const struct timespec tick = {0, 10 * 1000 * 1000};
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR)
      return wf_fail(st, WF_ERR_RUNTIME, "waiting for '%s': %s", argv[0], strerror(errno));
    if (!sig && (sig = wf_signal_stop()) != 0) kill(pid, SIGTERM);
    if (sig && ++ticks_since == 200) kill(pid, SIGKILL);
    nanosleep(&tick, NULL);
  }
  if (sig) {
    char where[160];
    snprintf(where, sizeof where, "while '%s' ran (ended)", argv[0]);
    return wf_signal_fail(st, sig, where);
  }
  *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return WF_OK;
}

int wf_run_helper(char *const argv[], const char *what, const char *hint, wf_status *st) {
  int status;
  if (wf_spawn(argv, NULL, &status, st) != WF_OK) return st->code;
  if (status != 0)
    return wf_fail(st, WF_ERR_RUNTIME, "%s: %s failed (%s)", what, argv[1] ? argv[1] : argv[0],
                   hint);
  return WF_OK;
}

void wf_mpi_io_prefer_romio(void) { setenv("OMPI_MCA_io", "romio321", 0); }
