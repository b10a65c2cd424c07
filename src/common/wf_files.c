/* The registry of a run's files: claims, and the check that no two collide. */
#include "wf_files.h"

#include "wf_io.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int push(wf_files *files, const wf_file_claim *c, wf_status *st) {
  if (files->n == files->cap) {
    int cap = files->cap ? 2 * files->cap : 16;
    wf_file_claim *more = realloc(files->claims, (size_t)cap * sizeof *more);
    if (!more) return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the file registry");
    files->claims = more;
    files->cap = cap;
  }
  files->claims[files->n++] = *c;
  return WF_OK;
}

/* Whether `path` names an HDF5 file (NAME.h5, which has an XDMF sidecar). */
static bool is_h5(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".h5") == 0;
}

/* A file a written file also makes: `suffix` replacing ".h5" (`swap`) or
 * added to the name; a pattern when `suffix` holds one (the temporaries). */
static int derived(wf_files *files, const wf_file_claim *c, const char *suffix, bool swap,
                   const char *what, wf_status *st) {
  wf_file_claim d = *c;
  size_t n = strlen(c->path);
  if (swap) n -= 3;
  if (n + strlen(suffix) + 1 > sizeof d.path)
    return wf_fail(st, WF_ERR_INPUT, "%s: the path is too long", c->who);
  if (strchr(suffix, '*') && !c->pattern) {
    /* A pattern from a plain name (its file name part is matched): the
     * name's own * ? [ and backslash stay literal. */
    const char *slash = strrchr(c->path, '/');
    size_t k = 0, name_at = slash ? (size_t)(slash - c->path) + 1 : 0;
    for (size_t i = 0; i < n && k + 2 < sizeof d.path; i++) {
      if (i >= name_at && strchr("*?[\\", c->path[i])) d.path[k++] = '\\';
      d.path[k++] = c->path[i];
    }
    snprintf(d.path + k, sizeof d.path - k, "%s", suffix);
  } else {
    snprintf(d.path, sizeof d.path, "%.*s%s", (int)n, c->path, suffix);
  }
  size_t w = strlen(d.who);
  snprintf(d.who + w, sizeof d.who - w, " (its %s %s)", what, d.path);
  snprintf(d.name, sizeof d.name, "%.60s (its %s)", c->name, what);
  d.stream_ok = false;
  d.derived = true;
  d.pattern = strchr(suffix, '*') != NULL;
  return push(files, &d, st);
}

int wf_files_add_claim(wf_files *files, const wf_file_claim *claim, wf_status *st) {
  if (!claim->path[0]) return WF_OK;
  wf_file_claim c = *claim;
  c.family = files->n;
  claim = &c;
  if (push(files, claim, st) != WF_OK) return st->code;
  if (claim->use == WF_FILE_READ || claim->pattern) return WF_OK; /* nothing derived */
  /* wf_temp_create's names */
  if (derived(files, claim, ".part.*", false, "temporary files", st) != WF_OK) return st->code;
  if (is_h5(claim->path))
    return derived(files, claim, ".xmf", true, "XDMF sidecar", st);
  return WF_OK;
}

int wf_file_claim_init(wf_file_claim *c, const char *who, const char *name, const char *path,
                       wf_file_use use, wf_status *st) {
  *c = (wf_file_claim){.use = use};
  if (strlen(path) + 1 > sizeof c->path)
    return wf_fail(st, WF_ERR_INPUT, "%s: the path is too long (at most %zu bytes)", who,
                   sizeof c->path - 1);
  snprintf(c->who, sizeof c->who, "%s", who);
  snprintf(c->name, sizeof c->name, "%s", name);
  snprintf(c->path, sizeof c->path, "%s", path);
  return WF_OK;
}

int wf_files_add(wf_files *files, const char *who, const char *name, const char *path,
                 wf_file_use use, wf_status *st) {
  wf_file_claim c;
  if (wf_file_claim_init(&c, who, name, path, use, st) != WF_OK) return st->code;
  return wf_files_add_claim(files, &c, st);
}

void wf_files_free(wf_files *files) {
  free(files->claims);
  *files = (wf_files){0};
}

/* A file's identity, whether it exists or not: its directory's device and
 * inode, and its name in it. Fails if the directory does not exist. */
typedef struct file_id {
  bool set;
  dev_t dev;
  ino_t ino;
  char dir[PATH_MAX];
  const char *name;
} file_id;

static int identify(const char *path, file_id *f) {
  const char *slash = strrchr(path, '/');
  f->name = slash ? slash + 1 : path;
  if (!slash) snprintf(f->dir, sizeof f->dir, ".");
  else if (slash == path) snprintf(f->dir, sizeof f->dir, "/");
  else snprintf(f->dir, sizeof f->dir, "%.*s", (int)(slash - path), path);
  struct stat sb;
  if (stat(f->dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) return -1;
  f->dev = sb.st_dev;
  f->ino = sb.st_ino;
  f->set = true;
  return 0;
}

static bool same_file(const wf_file_claim *ca, const file_id *a, const wf_file_claim *cb,
                      const file_id *b) {
  if (!a->set || !b->set || a->dev != b->dev || a->ino != b->ino) return false;
  if (ca->pattern) return fnmatch(a->name, b->name, 0) == 0;
  if (cb->pattern) return fnmatch(b->name, a->name, 0) == 0;
  return strcmp(a->name, b->name) == 0;
}

/* Can this process create a file in `dir`? (A probe file, created and
 * removed: access() says yes to root on a read-only file system.) */
static bool writable_dir(const char *dir) {
  char probe[PATH_MAX];
  snprintf(probe, sizeof probe, "%s/.wafer-probe-XXXXXX", dir);
  int fd = mkstemp(probe);
  if (fd < 0) return false;
  close(fd);
  unlink(probe);
  return true;
}

static const char *uses(wf_file_use u) {
  return u == WF_FILE_READ ? "reads" : u == WF_FILE_WRITE ? "writes too" : "rewrites";
}

/* One claim on its own: where it is, and what is there now. */
static int check_one(const wf_file_claim *c, file_id *id, wf_status *st) {
  bool writes = c->use != WF_FILE_READ;
  if (identify(c->path, id) != 0) {
    if (!writes) return WF_OK; /* a missing input is reported by whoever opens it */
    return wf_fail(st, WF_ERR_INPUT, "%s: its directory %s does not exist", c->who, id->dir);
  }
  /* Written as NAME.part.XXXXXX (and NAME.h5's sidecar NAME.xmf, one
   * longer, as NAME.xmf.part.XXXXXX): those names must fit too, or the run
   * would fail only once its work is done. */
  size_t longest = strlen(id->name) + WF_TEMP_SUFFIX_LEN + (is_h5(id->name) ? 1 : 0);
  long name_max = writes && !c->pattern ? pathconf(id->dir, _PC_NAME_MAX) : -1;
  if (name_max > 0 && (long)longest > name_max)
    return wf_fail(st, WF_ERR_INPUT,
                   "%s: the name is too long for its temporary file (%zu characters with its "
                   "suffix, and %s allows %ld)",
                   c->who, longest, id->dir, name_max);
  struct stat sb;
  if (c->pattern || stat(c->path, &sb) != 0) { /* none yet (or a dangling link) */
    if (writes && !writable_dir(id->dir))
      return wf_fail(st, WF_ERR_INPUT, "%s: cannot create files in %s", c->who, id->dir);
    return WF_OK;
  }
  if (S_ISDIR(sb.st_mode))
    return wf_fail(st, WF_ERR_INPUT, "%s: it is a directory: %s", c->who,
                   writes ? "outputs are files" : "inputs are files");
  if (!S_ISREG(sb.st_mode)) {
    if (c->use == WF_FILE_READ)
      return wf_fail(st, WF_ERR_INPUT,
                     "%s: it is a named pipe or a device, not a file: inputs are read from "
                     "regular files (a pipe would leave the run waiting)",
                     c->who);
    if (!c->stream_ok)
      /* written as NAME.part.XXXXXX, then renamed over it: a device (as root, even
       * /dev/null) would be replaced, and a pipe would be read from */
      return wf_fail(st, WF_ERR_INPUT,
                     "%s: it is a device or pipe, which the finished file would replace%s",
                     c->who, c->use == WF_FILE_UPDATE ? " (and which it would read from)" : "");
    return WF_OK;
  }
  if (writes && !writable_dir(id->dir))
    return wf_fail(st, WF_ERR_INPUT, "%s: cannot create files in %s", c->who, id->dir);
  return WF_OK;
}

int wf_files_check(const wf_files *files, wf_status *st) {
  int n = files->n;
  file_id *ids = calloc((size_t)n + 1, sizeof *ids);
  if (!ids) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  int rc = WF_OK;
  /* A derived file is only named: its folder is checked with its family's,
   * and it is made only when that file is (a device written in place has
   * no temporary). */
  for (int i = 0; i < n && rc == WF_OK; i++)
    if (files->claims[i].derived)
      identify(files->claims[i].path, &ids[i]);
    else
      rc = check_one(&files->claims[i], &ids[i], st);
  /* Every file written against every other file the run names. */
  for (int a = 0; a < n && rc == WF_OK; a++) {
    const wf_file_claim *ca = &files->claims[a];
    if (ca->use == WF_FILE_READ) continue;
    for (int b = 0; b < n && rc == WF_OK; b++) {
      const wf_file_claim *cb = &files->claims[b];
      if (b == a || !same_file(ca, &ids[a], cb, &ids[b])) continue;
      if (cb->use != WF_FILE_READ && b < a) continue; /* reported once */
      if (ca->family == cb->family) continue;         /* a claim and its own derived names */
      rc = wf_fail(st, WF_ERR_INPUT, "%s: the same file as %s, which the run %s: it would be lost",
                   ca->who, cb->name, uses(cb->use));
    }
  }
  free(ids);
  return rc;
}
