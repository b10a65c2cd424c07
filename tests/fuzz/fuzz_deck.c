/* libFuzzer harness: the deck parser (INI text and --set assignments) with
 * every section wafer knows. A deck either parses or fails with an input
 * error; what it accepts reads back within each key's bounds. */
#include "fuzz_util.h"
#include "app.h"
#include "sections.h"
#include "wf_deck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every key the input set reads back inside its declared range. */
static void check_bounds(const wf_deck *deck) {
  for (int e = 0; e < deck->nentries; e++) {
    const wf_entry *en = &deck->entries[e];
    if (strcmp(en->source, "default") == 0) continue;
    if (en->key->type == WF_KEY_INT) {
      long v = wf_deck_int(deck, en->section->name, en->key->name);
      FUZZ_ASSERT(v >= en->key->min && v <= en->key->max);
    } else if (en->key->type == WF_KEY_REAL) {
      double v = wf_deck_real(deck, en->section->name, en->key->name);
      FUZZ_ASSERT(v >= en->key->min && v <= en->key->max);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const wf_section *secs[MAX_SECTIONS];
  int nsecs = wf_all_sections(secs, MAX_SECTIONS);
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  wf_deck deck;
  wf_status st;
  FUZZ_ASSERT(wf_deck_create(&deck, secs, nsecs, &st) == WF_OK);
  int rc = wf_deck_parse_text(&deck, text, "fuzz.ini", &st);
  FUZZ_ASSERT(rc == WF_OK || rc == WF_ERR_INPUT);
  /* the same text, line by line, as --set assignments */
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    rc = wf_deck_set(&deck, line, &st);
    FUZZ_ASSERT(rc == WF_OK || rc == WF_ERR_INPUT);
  }
  check_bounds(&deck);
  wf_deck_free(&deck);
  free(text);
  return 0;
}
