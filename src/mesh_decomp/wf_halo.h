/* Halo exchange of per-PE data: the fabric between rank blocks.
 *
 * A field holds one element of `elem_bytes` per PE of the rank's block plus
 * `width` halo PEs on every side: (nx + 2w) x (ny + 2w) elements, x fastest;
 * wf_halo_index() maps local PE (i, j), -w <= i < nx + w, to its element.
 * Halo cells past a non-periodic edge of the PE grid are never written.
 *
 * Exchanges are non-blocking: begin, compute (reading the field freely, but
 * writing nothing into it), end. MPI moves the data straight between fields,
 * described by subarray datatypes: no packing in wafer's code, and the MPI
 * library can copy once between processes. The persistent requests are bound
 * to the field last exchanged; another field rebinds them (a cheap init). */
#ifndef WF_HALO_H
#define WF_HALO_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "wf_decomp.h"
#include "wf_error.h"
#include "wf_fabric.h"

typedef struct wf_halo_msg {
  int dir, peer;
  int send_x, send_y, recv_x, recv_y; /* region origins in local PE coordinates */
  int cx, cy;                         /* region extent in PEs */
  MPI_Datatype send_type, recv_type; /* the regions inside the field */
  size_t bytes;
} wf_halo_msg;

typedef struct wf_halo {
  wf_fabric *fab;
  size_t esz;
  MPI_Datatype elem_type;
  int w, nx, ny, ld; /* ld = nx + 2w */
  bool corners, periodic_x, periodic_y;
  int nmsg, nlocal;
  wf_halo_msg msg[WF_NDIRS];   /* through MPI */
  wf_halo_msg local[WF_NDIRS]; /* periodic wraps onto this rank itself: plain copies */
  MPI_Request req[2 * WF_NDIRS];
  const void *bound; /* the field the persistent requests point into */
  long long words_intra, words_inter, mpi_bytes; /* per exchange */
  double model_cycles; /* wafer cost of one exchange (set by the caller for item blocks) */
  double t_begin;
} wf_halo;

/* One element per PE of the rank's block. */
int wf_halo_create(wf_halo *h, wf_fabric *fab, size_t elem_bytes, int width, bool corners,
                   bool periodic_x, bool periodic_y, wf_status *st);

/* Items other than PEs (a workload's mesh columns, say): the rank holds
 * nx x ny of them, the thinnest rank block over all ranks is min_nx x min_ny
 * (used to reject halos wider than a block: pass the same on every rank).
 * The caller sets model_cycles, since only it knows how items sit on PEs. */
typedef struct wf_halo_shape {
  int nx, ny, min_nx, min_ny;
  const char *unit; /* "PEs", "cells": for messages */
  /* The bytes of an element that carry data, elem_payload from
   * elem_offset on (payload 0: all of it): the halo moves and counts only
   * those (a padded column's values). */
  size_t elem_offset, elem_payload;
} wf_halo_shape;
int wf_halo_create_shape(wf_halo *h, wf_fabric *fab, const wf_halo_shape *shape,
                         size_t elem_bytes, int width, bool corners, bool periodic_x,
                         bool periodic_y, wf_status *st);
void wf_halo_free(wf_halo *h);

static inline size_t wf_halo_index(const wf_halo *h, int i, int j) {
  return (size_t)(j + h->w) * (size_t)h->ld + (size_t)(i + h->w);
}
static inline size_t wf_halo_field_elems(const wf_halo *h) {
  return (size_t)h->ld * (size_t)(h->ny + 2 * h->w);
}

void wf_halo_begin(wf_halo *h, void *field);
void wf_halo_end(wf_halo *h, void *field);
void wf_halo_exchange(wf_halo *h, void *field);

#endif
