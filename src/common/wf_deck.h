/* Decks: INI files whose every key is declared once in a table.
 *
 * A workload declares its sections as tables of wf_key (wf_key.h: name,
 * type, default, allowed range or choices, one-line help). A wf_deck starts from the
 * defaults (the embedded deck), then takes a deck file and `--set sec.key=v`
 * overrides; every value is validated when it is set, so the typed getters
 * never fail. Each entry remembers where its value came from. */
#ifndef WF_DECK_H
#define WF_DECK_H

#include <stdbool.h>
#include <stdio.h>

#include "wf_error.h"
#include "wf_key.h"

#define WF_DECK_TEXT_MAX 512

typedef struct wf_entry {
  const wf_section *section;
  const wf_key *key;
  char value[WF_DECK_TEXT_MAX];
  char source[WF_DECK_TEXT_MAX]; /* "default", "deck.ini:12", "--set" */
} wf_entry;

typedef struct wf_deck {
  const wf_section *const *sections;
  int nsections;
  wf_entry *entries;
  int nentries;
  /* A getter asked for an undeclared key (a bug in a workload): the first
   * such message, "" if none; the getters return a zero value and the app
   * ends the run with this message (wf_deck_bug). */
  char *bug;
} wf_deck;

/* Start a deck holding the defaults of `sections`. Fails only if a default
 * does not pass its own key's validation (a bug in a key table). */
int wf_deck_create(wf_deck *deck, const wf_section *const *sections, int nsections,
                   wf_status *st);
void wf_deck_free(wf_deck *deck);

/* Apply INI text; `name` is used in messages ("name:line: ..."). */
int wf_deck_parse_text(wf_deck *deck, const char *text, const char *name, wf_status *st);
/* Apply one "section.key=value" override. */
int wf_deck_set(wf_deck *deck, const char *assignment, wf_status *st);

long wf_deck_int(const wf_deck *deck, const char *section, const char *key);
double wf_deck_real(const wf_deck *deck, const char *section, const char *key);
bool wf_deck_bool(const wf_deck *deck, const char *section, const char *key);
const char *wf_deck_str(const wf_deck *deck, const char *section, const char *key);
const wf_entry *wf_deck_entry(const wf_deck *deck, const char *section, const char *key);

/* Declare to the run's file registry every input, output and cache key of
 * `sections` (NULL = all) that names a file; wf_files_check then finds
 * collisions and unusable paths, its messages naming the keys and where
 * their values came from. */
struct wf_files;
int wf_deck_claim_files(const wf_deck *deck, const char *const *sections, int nsections,
                        struct wf_files *files, wf_status *st);

/* The values of the keys of `sections` (NULL = all) that a run's state
 * depends on (wf_key_restart), one "section.key = value" a line
 * (malloc'ed; NULL when out of memory): what a checkpoint records. */
char *wf_deck_state(const wf_deck *deck, const char *const *sections, int nsections);
/* Compare the deck with `saved`, the wf_deck_state of the run that wrote
 * the checkpoint that key from_section.from_key names: an input error
 * naming the first key whose value differs (a key `saved` lacks is
 * compared with its default), or naming the restart key when `saved`
 * holds none of these sections' keys (another workload's checkpoint). */
int wf_deck_check_state(const wf_deck *deck, const char *const *sections, int nsections,
                        const char *saved, const char *from_section, const char *from_key,
                        wf_status *st);

/* "" or the message of the first getter call with an undeclared key. */
const char *wf_deck_bug(const wf_deck *deck);

/* Errors about a value, starting with where it came from:
 * "deck.ini:12: [wafer] pe_grid = 2x2: <message>". wf_deck_fail sets an input
 * error; wf_deck_blame prefixes the message already in `st`. Both return the code. */
int wf_deck_fail(const wf_deck *deck, const char *section, const char *key, wf_status *st,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int wf_deck_blame(const wf_deck *deck, const char *section, const char *key, wf_status *st);

/* The resolved deck as INI text (malloc'ed), for output files. */
char *wf_deck_to_ini(const wf_deck *deck);
/* Every key: value, default, source (for `wafer info`). */
void wf_deck_print_info(const wf_deck *deck, FILE *out);

#endif
