/* XDMF sidecars (wf_h5.h) for ParaView: one uniform grid per shape of a file's fields, and
 * the temporal collection of a series of files; names escaped as XML text. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_h5.h"
#include "wf_io.h"

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* `in` as XML text (a file name holding & < > " or '), into out[cap]: at
 * most 6 bytes a character. */
static void xml_escape(const char *in, char *out, size_t cap) {
  size_t n = 0;
  for (; *in && n + 7 < cap; in++) {
    const char *e = *in == '&'    ? "&amp;"
                    : *in == '<'  ? "&lt;"
                    : *in == '>'  ? "&gt;"
                    : *in == '"'  ? "&quot;"
                    : *in == '\'' ? "&apos;"
                                  : NULL;
    if (e) {
      memcpy(out + n, e, strlen(e));
      n += strlen(e);
    } else {
      out[n++] = *in;
    }
  }
  out[n] = '\0';
}

static bool same_grid(const wf_h5_xdmf_field *a, const wf_h5_xdmf_field *b) {
  if (a->ndim != b->ndim) return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

/* The markup of one uniform grid: field `first` and every later one of its
 * shape not yet `written`, as cell-centred attributes read from `file`; at
 * `time` when time is not NULL (a member of a temporal collection). */
static size_t grid_markup(char *text, size_t cap, const wf_h5_xdmf_field *fields, int nfields,
                          int first, bool *written, const char *file, int grid,
                          const double *time) {
  const wf_h5_xdmf_field *g = &fields[first];
  char cells[96] = "", points[96] = "", escaped[6 * WF_H5_PATH_MAX + 8];
  xml_escape(file, escaped, sizeof escaped);
  file = escaped;
  for (int d = 0; d < g->ndim; d++) {
    size_t lc = strlen(cells), lp = strlen(points);
    snprintf(cells + lc, sizeof cells - lc, "%s%llu", d ? " " : "", g->dims[d]);
    snprintf(points + lp, sizeof points - lp, "%s%llu", d ? " " : "", g->dims[d] + 1);
  }
  bool three = g->ndim == 3;
  size_t n = (size_t)snprintf(text, cap, "  <Grid Name=\"mesh%d\" GridType=\"Uniform\">\n", grid);
  if (time) n += (size_t)snprintf(text + n, cap - n, "   <Time Value=\"%.17g\"/>\n", *time);
  n += (size_t)snprintf(text + n, cap - n,
                        "   <Topology TopologyType=\"%dDCoRectMesh\" Dimensions=\"%s\"/>\n"
                        "   <Geometry GeometryType=\"%s\">\n"
                        "    <DataItem Dimensions=\"%d\" Format=\"XML\">%s</DataItem>\n"
                        "    <DataItem Dimensions=\"%d\" Format=\"XML\">%s</DataItem>\n"
                        "   </Geometry>\n",
                        g->ndim, points, three ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY", g->ndim,
                        three ? "0 0 0" : "0 0", g->ndim, three ? "1 1 1" : "1 1");
  for (int k = first; k < nfields; k++) {
    const wf_h5_xdmf_field *x = &fields[k];
    if (written[k] || !same_grid(g, x)) continue;
    written[k] = true;
    n += (size_t)snprintf(text + n, cap - n,
                          "   <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
                          "    <DataItem Dimensions=\"%s\" NumberType=\"%s\" Precision=\"%s\" "
                          "Format=\"HDF\">%s:/%s</DataItem>\n"
                          "   </Attribute>\n",
                          x->name, cells, x->type == WF_I64 ? "Int" : "Float",
                          x->type == WF_F32 ? "4" : "8", file, x->name);
  }
  n += (size_t)snprintf(text + n, cap - n, "  </Grid>\n");
  return n;
}

/* Bytes of markup a grid of `nfields` attributes from `file` can take: the
 * fixed parts, two names of at most 128 bytes a field, the file name. */
static size_t grid_cap(int nfields, const char *file) {
  return 1024 + (size_t)nfields * (1024 + 6 * strlen(file));
}

/* One uniform grid per distinct shape, holding every field of that shape as
 * a cell-centred attribute (one value per PE/cell): ParaView then shows one
 * dataset per mesh with all its fields, instead of coincident copies. */
int wf_h5_write_xdmf(const wf_h5file *f, wf_status *st) {
  char xmf[WF_H5_PATH_MAX + 8];
  wf_h5_sidecar_path(f->path, xmf, sizeof xmf);
  const char *file = base_name(f->path);
  size_t cap = 1024 + grid_cap(f->nxdmf, file) * (size_t)f->nxdmf;
  char *text = malloc(cap);
  if (!text) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  size_t n =
      (size_t)snprintf(text, cap, "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n");
  bool written[WF_H5_MAX_XDMF] = {false};
  for (int i = 0, grids = 0; i < f->nxdmf; i++)
    if (!written[i])
      n += grid_markup(text + n, cap - n, f->xdmf, f->nxdmf, i, written, file, grids++, NULL);
  snprintf(text + n, cap - n, " </Domain>\n</Xdmf>\n");
  int rc = wf_write_text_atomic(xmf, text, st);
  free(text);
  return rc;
}

void wf_h5_sidecar_path(const char *h5, char *xmf, size_t len) {
  snprintf(xmf, len, "%s", h5);
  char *dot = strrchr(xmf, '.');
  if (dot && strcmp(dot, ".h5") == 0) *dot = '\0';
  strncat(xmf, ".xmf", len - strlen(xmf) - 1);
}

int wf_xdmf_series_write(const char *xmf, int n, const char *const *files, const double *times,
                         const wf_h5_xdmf_field *fields, int nfields, wf_status *st) {
  size_t cap = 1024;
  for (int s = 0; s < n; s++) cap += grid_cap(nfields, base_name(files[s]));
  char *text = malloc(cap);
  if (!text) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  size_t len = (size_t)snprintf(text, cap,
                                "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
                                "  <Grid Name=\"series\" GridType=\"Collection\" "
                                "CollectionType=\"Temporal\">\n");
  for (int s = 0; s < n; s++) {
    bool written[WF_H5_MAX_XDMF] = {false};
    len += grid_markup(text + len, cap - len, fields, nfields, 0, written, base_name(files[s]), s,
                       &times[s]);
  }
  snprintf(text + len, cap - len, "  </Grid>\n </Domain>\n</Xdmf>\n");
  int rc = wf_write_text_atomic(xmf, text, st);
  free(text);
  return rc;
}

