/* The logical PE grid (wf_grid.h): its size parsed, the defect map read, and each logical PE
 * laid on a working physical PE, with the extra hops around dead ones counted. */
#include "wf_grid.h"

#include "wf_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wf_grid_parse_size(const char *text, int *nx, int *ny) {
  long long v[2];
  if (wf_parse_dims(text, 2, 1, WF_GRID_MAX_SIDE, v) != WF_PARSE_OK) return -1;
  *nx = (int)v[0];
  *ny = (int)v[1];
  return 0;
}

/* Read the dead PEs into a [ny][phys_nx] mask. */
static int read_defects(const char *text, const char *name, int phys_nx, int ny,
                        unsigned char *dead, int *row_line, wf_status *st) {
  int line = 0;
  for (const char *p = text; *p;) {
    line++;
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
    p += len + (eol ? 1 : 0);
    char *hash = strchr(buf, '#');
    if (hash) *hash = '\0';
    char rest;
    if (sscanf(buf, " %c", &rest) != 1) continue; /* blank or comment */
    if (len >= sizeof buf)
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: line longer than %zu characters", name, line,
                     sizeof buf - 1);
    const char *q = buf;
    long long v[2];
    int rc = wf_parse_int(&q, 0, WF_GRID_MAX_SIDE, &v[0]);
    if (rc == WF_PARSE_OK) rc = wf_parse_int(&q, 0, WF_GRID_MAX_SIDE, &v[1]);
    while (rc == WF_PARSE_OK && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (rc != WF_PARSE_OK || *q)
      return wf_fail(st, WF_ERR_INPUT,
                     "%s:%d: expected 'x y' (a dead PE's physical column and row, each 0 .. %d)",
                     name, line, WF_GRID_MAX_SIDE);
    int x = (int)v[0], y = (int)v[1];
    if (x < 0 || x >= phys_nx || y < 0 || y >= ny)
      return wf_fail(st, WF_ERR_INPUT,
                     "%s:%d: dead PE (%d, %d) is outside the physical grid %dx%d (pe_grid plus "
                     "spare_columns)",
                     name, line, x, y, phys_nx, ny);
    if (dead[(size_t)y * phys_nx + x])
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: dead PE (%d, %d) listed twice", name, line, x, y);
    dead[(size_t)y * phys_nx + x] = 1;
    row_line[y] = line;
  }
  return WF_OK;
}

int wf_grid_create(wf_grid *g, int nx, int ny, int spare_columns, const char *defects,
                   const char *name, wf_status *st) {
  memset(g, 0, sizeof *g);
  g->nx = nx;
  g->ny = ny;
  g->phys_nx = nx + spare_columns;
  g->max_link_hops = 1;
  if (!defects) return WF_OK;

  unsigned char *dead = calloc((size_t)ny * g->phys_nx, 1);
  int *row_line = calloc((size_t)ny, sizeof *row_line);
  g->phys_x = malloc((size_t)nx * ny * sizeof *g->phys_x);
  if (!dead || !row_line || !g->phys_x) {
    free(dead);
    free(row_line);
    wf_grid_free(g);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory for the defect map");
  }
  int rc = read_defects(defects, name, g->phys_nx, ny, dead, row_line, st);
  for (int j = 0; j < ny && rc == WF_OK; j++) {
    int i = 0;
    for (int px = 0; px < g->phys_nx && i < nx; px++)
      if (!dead[(size_t)j * g->phys_nx + px]) g->phys_x[(size_t)j * nx + i++] = px;
      else g->ndead++;
    if (i < nx)
      rc = wf_fail(st, WF_ERR_INPUT,
                   "%s:%d: physical row %d has more dead PEs than the %d spare column(s) "
                   "([wafer] spare_columns)",
                   name, row_line[j], j, spare_columns);
  }
  free(dead);
  free(row_line);
  if (rc != WF_OK) {
    wf_grid_free(g);
    return rc;
  }
  for (int j = 0; j < ny; j++)
    for (int i = 0; i < nx; i++)
      for (int east = 0; east <= 1; east++) {
        if ((east && i + 1 >= nx) || (!east && j + 1 >= ny)) continue;
        int h = wf_grid_link_hops(g, i, j, east);
        g->extra_hops += h - 1;
        if (h > g->max_link_hops) g->max_link_hops = h;
      }
  return WF_OK;
}

void wf_grid_free(wf_grid *g) {
  free(g->phys_x);
  g->phys_x = NULL;
}

int wf_grid_phys_x(const wf_grid *g, int i, int j) {
  return g->phys_x ? g->phys_x[(size_t)j * g->nx + i] : i;
}

int wf_grid_link_hops(const wf_grid *g, int i, int j, int east) {
  int a = wf_grid_phys_x(g, i, j);
  if (east) return wf_grid_phys_x(g, i + 1, j) - a;
  int b = wf_grid_phys_x(g, i, j + 1);
  return 1 + (b > a ? b - a : a - b);
}
