/* `wafer tlrmvm`'s deck: the [tlrmvm] section's keys and their reading
 * into a tlrmvm_setup (tlrmvm_parts.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlrmvm_parts.h"
#include "wf_mpi.h"

/* "20", "5,10,20" or "first:last:count" (count equally spaced values). */
static int parse_freqs(const char *v, double *hz, int max) {
  double a, b;
  int count, used = 0;
  if (sscanf(v, "%lf:%lf:%d%n", &a, &b, &count, &used) == 3 && v[used] == '\0') {
    if (count < 1 || count > max || !(a > 0) || !(b >= a)) return -1;
    for (int i = 0; i < count; i++) hz[i] = count == 1 ? a : a + (b - a) * i / (count - 1);
    return count;
  }
  int n = 0;
  const char *p = v;
  while (*p) {
    char *end;
    double f = strtod(p, &end);
    if (end == p || !(f > 0) || !isfinite(f) || n == max) return -1;
    hz[n++] = f;
    p = end;
    if (*p == ',')
      p++;
    else if (*p)
      return -1;
  }
  return n;
}

static int check_freqs(const char *v, char *why, size_t len) {
  double hz[TLRMVM_MAX_FREQS];
  if (parse_freqs(v, hz, TLRMVM_MAX_FREQS) >= 1) return 0;
  snprintf(why, len,
           "expected positive frequencies in Hz: one (20), a list (5,10,20) or first:last:count "
           "(5:60:12), at most %d",
           TLRMVM_MAX_FREQS);
  return 1;
}

static const wf_key tlrmvm_keys[] = {
    {"src_nx", WF_KEY_INT, "40", 1, 100000, NULL, "sources along x (the matrix's columns)", NULL},
    {"src_ny", WF_KEY_INT, "40", 1, 100000, NULL, "sources along y", NULL},
    {"rec_nx", WF_KEY_INT, "40", 1, 100000, NULL, "receivers along x (the matrix's rows)", NULL},
    {"rec_ny", WF_KEY_INT, "40", 1, 100000, NULL, "receivers along y", NULL},
    {"spacing", WF_KEY_REAL, "20", 1e-3, 1e6, NULL, "distance between neighbouring points, m",
     NULL},
    {"src_depth", WF_KEY_REAL, "0", -1e6, 1e6, NULL, "depth of the sources, m", NULL},
    {"rec_depth", WF_KEY_REAL, "500", -1e6, 1e6, NULL,
     "depth of the receivers, m (not the sources' depth: the Green's function is singular "
     "where they meet)",
     NULL},
    {"velocity", WF_KEY_REAL, "2000", 1, 1e5, NULL, "speed of sound in the medium, m/s", NULL},
    {"frequencies", WF_KEY_STRING, "20", 0, 0, NULL,
     "frequencies in Hz, one matrix each: 20, or 5,10,20, or first:last:count", check_freqs},
    {"order", WF_KEY_CHOICE, "hilbert", 0, 0, "hilbert|rows",
     "numbering of sources and receivers: along a Hilbert curve, or row by row (tiles then "
     "mix far points and compress several times worse)",
     NULL},
    {"input", WF_KEY_INPUT, "", 0, 0, NULL,
     "HDF5 file of dense operators instead of the survey ('' = none): one complex M x N dataset "
     "per frequency, named <input_dataset>_<index> (0, 1, ...)",
     wf_key_hdf5},
    {"input_dataset", WF_KEY_STRING, "A", 0, 0, NULL, "prefix of the input file's datasets", NULL},
    {"nb", WF_KEY_INT, "64", 1, 100000, NULL, "tile size", NULL},
    {"acc", WF_KEY_REAL, "1e-4", 0, 1, NULL,
     "compression accuracy, 0 < acc < 1: each tile's dropped singular values weigh at most acc "
     "times the norm",
     NULL},
    {"norm", WF_KEY_CHOICE, "global", 0, 0, "global|tile",
     "the norm acc is relative to: the whole matrix's (KAUST's choice) or each tile's", NULL},
    {"rank_multiple", WF_KEY_INT, "1", 1, 64, NULL,
     "round every tile's rank up to a multiple of this (4 or 8 suit SIMD units)", NULL},
    {"compressed", WF_KEY_CACHE, "", 0, 0, NULL,
     "HDF5 file of the compressed operator: read when it exists (it must match the deck), "
     "else written after compressing ('' = none)",
     wf_key_hdf5},
    {"repeat", WF_KEY_INT, "20", 1, 1e6, NULL, "products timed (the report gives medians)", NULL},
    {"seed", WF_KEY_INT, "1", 0, 2147483647, NULL, "seed of the random vectors", NULL},
    {"dense", WF_KEY_CHOICE, "check", 0, 0, "check|time|none",
     "the dense product: compare with it (tile by tile), also time a dense cgemv (keeps the "
     "dense matrix in memory), or neither",
     NULL},
    {"mdd_iterations", WF_KEY_INT, "300", 0, 100000, NULL,
     "multi-dimensional deconvolution: at most this many LSQR iterations over all frequencies, "
     "with the TLR and with the dense operators (0: none; needs the survey, not an input file)",
     NULL},
    {"mdd_damp", WF_KEY_REAL, "0.01", 0, 1e6, NULL,
     "Tikhonov damping of the MDD, relative to the largest ||A_f||_F. With damping the two "
     "inversions' difference has a bound to check; 0: none (LSQR's iteration count "
     "regularises, and the difference is reported unchecked)",
     NULL},
    {"mdd_depth", WF_KEY_REAL, "1000", -1e6, 1e6, NULL,
     "depth of the point source whose wavefield at the sources the MDD recovers, m", NULL},
    {"mdd_plot", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "PNG of the recovered wavefield (first frequency) next to the true one ('' = none)", NULL},
    {"wafer_precision", WF_KEY_CHOICE, "fp32", 0, 0, "fp32|fp16",
     "precision of the bases in the wafer model", NULL},
    {"systems", WF_KEY_INT, "1", 1, 1e6, NULL,
     "wafers sharing the frequencies out, as GB23's 48 CS-2: the ranks split into this many "
     "equal groups, each a wafer (at most one a frequency); the model projects that many",
     NULL},
    {"model_only", WF_KEY_BOOL, "false", 0, 0, NULL,
     "only project the products onto the wafer, with every tile at rank model_rank", NULL},
    {"model_rank", WF_KEY_INT, "0", 0, 100000, NULL,
     "tile rank of a model-only run (needed there: nothing is compressed)", NULL},
    {"stream", WF_KEY_BOOL, "true", 0, 0, NULL,
     "measure STREAM triad here to report the fraction of it the products reach", NULL},
    {"plot", WF_KEY_OUTPUT, "", 0, 0, NULL,
     "PNG of the tile ranks of the first frequency ('' = none; needs python3-matplotlib)", NULL},
};
static const wf_section tlrmvm_section = {
    "tlrmvm",
    "Tile low-rank MVM of seismic frequency-domain operators (GB23), checked against the dense "
    "product.",
    tlrmvm_keys, (int)(sizeof tlrmvm_keys / sizeof tlrmvm_keys[0]), NULL, NULL};
const wf_section *const tlrmvm_sections[] = {&tlrmvm_section};

int tlrmvm_read_setup(const wf_deck *d, tlrmvm_setup *s, wf_status *st) {
  memset(s, 0, sizeof *s);
  double h = wf_deck_real(d, TLRMVM_SECTION, "spacing");
  s->survey =
      (tl_survey){.src = {(int)wf_deck_int(d, TLRMVM_SECTION, "src_nx"),
                          (int)wf_deck_int(d, TLRMVM_SECTION, "src_ny"), h, h, 0, 0,
                          wf_deck_real(d, TLRMVM_SECTION, "src_depth")},
                  .rec = {(int)wf_deck_int(d, TLRMVM_SECTION, "rec_nx"),
                          (int)wf_deck_int(d, TLRMVM_SECTION, "rec_ny"), h, h, 0, 0,
                          wf_deck_real(d, TLRMVM_SECTION, "rec_depth")},
                  .velocity = wf_deck_real(d, TLRMVM_SECTION, "velocity"),
                  .hilbert = strcmp(wf_deck_str(d, TLRMVM_SECTION, "order"), "hilbert") == 0};
  s->nfreq = parse_freqs(wf_deck_str(d, TLRMVM_SECTION, "frequencies"), s->hz, TLRMVM_MAX_FREQS);
  s->nb = (int)wf_deck_int(d, TLRMVM_SECTION, "nb");
  s->opts = (tl_compress_opts){wf_deck_real(d, TLRMVM_SECTION, "acc"),
                               strcmp(wf_deck_str(d, TLRMVM_SECTION, "norm"), "global") == 0,
                               (int)wf_deck_int(d, TLRMVM_SECTION, "rank_multiple")};
  s->repeat = (int)wf_deck_int(d, TLRMVM_SECTION, "repeat");
  s->seed = wf_deck_int(d, TLRMVM_SECTION, "seed");
  const char *dense = wf_deck_str(d, TLRMVM_SECTION, "dense");
  s->dense_check = strcmp(dense, "none") != 0;
  s->dense_time = strcmp(dense, "time") == 0;
  s->wafer_prec =
      strcmp(wf_deck_str(d, TLRMVM_SECTION, "wafer_precision"), "fp16") == 0 ? WF_FP16 : WF_FP32;
  s->systems = (int)wf_deck_int(d, TLRMVM_SECTION, "systems");
  s->model_rank = (int)wf_deck_int(d, TLRMVM_SECTION, "model_rank");
  s->mdd_iterations = (int)wf_deck_int(d, TLRMVM_SECTION, "mdd_iterations");
  s->mdd_damp = wf_deck_real(d, TLRMVM_SECTION, "mdd_damp");
  s->mdd_depth = wf_deck_real(d, TLRMVM_SECTION, "mdd_depth");
  s->input = wf_deck_str(d, TLRMVM_SECTION, "input");
  s->dataset = wf_deck_str(d, TLRMVM_SECTION, "input_dataset");
  s->compressed = wf_deck_str(d, TLRMVM_SECTION, "compressed");
  s->m = tl_survey_rows(&s->survey);
  s->n = tl_survey_cols(&s->survey);
  if (!(s->opts.acc > 0 && s->opts.acc < 1))
    return wf_deck_fail(d, TLRMVM_SECTION, "acc", st, "must lie strictly between 0 and 1");
  /* Blame the depth the user gave (the other is its default). */
  const char *depth =
      strcmp(wf_deck_entry(d, TLRMVM_SECTION, "src_depth")->source, "default") != 0 ? "src_depth"
                                                                                   : "rec_depth";
  if (!s->input[0] && s->survey.src.z == s->survey.rec.z)
    return wf_deck_fail(d, TLRMVM_SECTION, depth, st,
                        "sources and receivers at the same depth meet: the Green's function "
                        "1 / (4 pi r) is infinite at r = 0");
  /* Vectors and the tiles' ranks move as single MPI messages (a model-only
   * run moves neither). */
  size_t tiles = (size_t)((s->m + s->nb - 1) / s->nb) * (size_t)((s->n + s->nb - 1) / s->nb);
  bool moved = !wf_deck_bool(d, TLRMVM_SECTION, "model_only");
  if (moved && (2 * (size_t)(s->m > s->n ? s->m : s->n) > WF_MPI_MAX_COUNT || tiles > WF_MPI_MAX_COUNT))
    return wf_deck_fail(d, TLRMVM_SECTION, "nb", st,
                        "a %d x %d matrix in %zu tiles: beyond what one MPI message carries "
                        "(2^31 - 1 values)",
                        s->m, s->n, tiles);
  if (s->model_rank > s->nb)
    return wf_deck_fail(d, TLRMVM_SECTION, "model_rank", st,
                        "a tile of %d x %d has rank at most %d", s->nb, s->nb, s->nb);
  /* The kernel exp(-i 2 pi f r / c): past 2^31 radians across the survey its
   * phase, and so every value, is rounding noise (at 1e308 Hz, NaN). */
  const tl_grid *g[2] = {&s->survey.src, &s->survey.rec};
  double lx = 0, ly = 0, dz = fabs(s->survey.src.z - s->survey.rec.z);
  for (int k = 0; k < 2; k++) lx = fmax(lx, g[k]->nx * g[k]->dx), ly = fmax(ly, g[k]->ny * g[k]->dy);
  double rmax = sqrt(lx * lx + ly * ly + dz * dz), fmax_hz = 0;
  for (int q = 0; q < s->nfreq; q++) fmax_hz = fmax(fmax_hz, s->hz[q]);
  double phase = 6.283185307179586 * fmax_hz * rmax / s->survey.velocity;
  if (!s->input[0] && !(phase < 2147483648.0))
    return wf_deck_fail(d, TLRMVM_SECTION, "frequencies", st,
                        "%g Hz turns the kernel's phase by %.3g radians across the survey, past "
                        "2^31: its values would be rounding noise",
                        fmax_hz, phase);
  return WF_OK;
}
