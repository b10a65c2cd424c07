#include "wf_grid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wf_grid_parse_size(const char *text, int *nx, int *ny) {
  int a, b, used = 0;
  char x;
  if (sscanf(text, " %d %c %d %n", &a, &x, &b, &used) != 3 || text[used] != '\0') return -1;
  if ((x != 'x' && x != 'X') || a < 1 || b < 1) return -1;
  *nx = a;
  *ny = b;
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
    int x, y, used = 0;
    char rest;
    if (sscanf(buf, " %c", &rest) != 1) continue; /* blank or comment */
    if (sscanf(buf, " %d %d %n", &x, &y, &used) != 2 || buf[used] != '\0')
      return wf_fail(st, WF_ERR_INPUT, "%s:%d: expected 'x y' (a dead PE's physical column and row)",
                     name, line);
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
