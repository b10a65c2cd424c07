/* Key tables: what a workload declares of its deck, a section at a time.
 * Each key has a name, a type, a default, its allowed range or choices and
 * one line of help; a value is checked against its key when it is set
 * (wf_deck.h), and the tables print as the deck reference (docs/decks.md). */
#ifndef WF_KEY_H
#define WF_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum {
  WF_KEY_INT,    /* integer in [min, max] */
  WF_KEY_REAL,   /* finite real in [min, max] */
  WF_KEY_BOOL,   /* true/false, yes/no, on/off, 1/0 */
  WF_KEY_STRING, /* free text, optionally checked by `check` */
  WF_KEY_CHOICE, /* one of `choices` ("a|b|c") */
  WF_KEY_INPUT,  /* a file the run reads ('' = none) */
  WF_KEY_OUTPUT, /* a file the run writes ('' = none): checked writable, and distinct from
                    every input and every other output, before any work starts */
  WF_KEY_CACHE,  /* a file the run reads when it exists and (re)writes otherwise or after
                    ('' = none): FFTW wisdom, a compressed operator; checked as an output */
} wf_key_type;

typedef struct wf_key {
  const char *name;
  wf_key_type type;
  const char *def; /* default, as it would be written in a deck */
  double min, max; /* inclusive range (INT, REAL) */
  const char *choices;
  const char *help;
  /* Optional extra validation: return 0 when `value` is fine, else write the
   * reason into `why`. */
  int (*check)(const char *value, char *why, size_t len);
} wf_key;

typedef struct wf_section {
  const char *name;
  const char *help;
  const wf_key *keys;
  int nkeys;
  /* Restarts (optional). A checkpoint records the values of the keys its
   * state depends on (wf_deck_state), and a restart whose deck gives
   * another value for one is refused: it would not continue the run that
   * wrote the checkpoint. `restart_from` names the key of the checkpoint a
   * run continues from; `restart_free` the keys that may change (space-
   * separated: how long to run, what to write, checks, the model). Every
   * other key, output and cache files aside, keeps its value. */
  const char *restart_from;
  const char *restart_free;
} wf_section;

/* The check of a file key whose file is HDF5: any name in a build with HDF5;
 * in one without (the simulated build), none: the deck is refused before
 * any work, naming the key (wf_h5.h's WF_H5_ABSENT). */
int wf_key_hdf5(const char *value, char *why, size_t len);
/* Type-and-range check of one value against its key; 0 if valid, else the
 * reason in `why`. */
int wf_key_validate(const wf_key *key, const char *value, char *why, size_t len);
/* Markdown reference of the key tables (docs/decks.md). */
void wf_key_print_reference(const wf_section *const *sections, int nsections, FILE *out);

/* The parsers behind the validation: 0 when all of `s` is a value of the
 * kind (a finite real; true/false, yes/no, on/off, 1/0), else -1. */
int wf_key_parse_long(const char *s, long *out);
int wf_key_parse_double(const char *s, double *out);
int wf_key_parse_bool(const char *s, bool *out);
/* A key's type in words ("integer", "input file"), and a bound as printed. */
const char *wf_key_type_name(wf_key_type t);
void wf_key_bound(char *buf, size_t len, double v);

#endif
