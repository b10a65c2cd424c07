/* Decks (wf_deck.h): INI files checked against each section's table of keys (wf_key.h).
 * Defaults, the deck file and --set overrides, each validated as it is set; the typed getters,
 * the files a run claims, and the deck state a checkpoint records. */
#include "wf_deck.h"

#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wf_files.h"
#include "wf_strbuf.h"

static int check_restart_names(const wf_section *sec, wf_status *st);

int wf_deck_create(wf_deck *deck, const wf_section *const *sections, int nsections,
                   wf_status *st) {
  int n = 0;
  for (int s = 0; s < nsections; s++) n += sections[s]->nkeys;
  deck->sections = sections;
  deck->nsections = nsections;
  deck->nentries = n;
  deck->entries = calloc((size_t)n, sizeof *deck->entries);
  deck->bug = calloc(256, 1);
  if (!deck->entries || !deck->bug) {
    wf_deck_free(deck);
    return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  }
  int e = 0;
  for (int s = 0; s < nsections; s++) {
    if (check_restart_names(sections[s], st) != WF_OK) {
      wf_deck_free(deck);
      return st->code;
    }
    for (int k = 0; k < sections[s]->nkeys; k++, e++) {
      const wf_key *key = &sections[s]->keys[k];
      char why[256];
      if (wf_key_validate(key, key->def, why, sizeof why) != 0) {
        int rc = wf_fail(st, WF_ERR_RUNTIME, "built-in default [%s] %s = %s: %s",
                         sections[s]->name, key->name, key->def, why);
        wf_deck_free(deck);
        return rc;
      }
      deck->entries[e].section = sections[s];
      deck->entries[e].key = key;
      snprintf(deck->entries[e].value, WF_DECK_TEXT_MAX, "%s", key->def);
      snprintf(deck->entries[e].source, WF_DECK_TEXT_MAX, "default");
    }
  }
  return WF_OK;
}

void wf_deck_free(wf_deck *deck) {
  free(deck->entries);
  free(deck->bug);
  deck->bug = NULL;
  deck->entries = NULL;
  deck->nentries = 0;
}

static const wf_section *find_section(const wf_deck *deck, const char *name) {
  for (int s = 0; s < deck->nsections; s++)
    if (strcmp(deck->sections[s]->name, name) == 0) return deck->sections[s];
  return NULL;
}

static wf_entry *find_entry(const wf_deck *deck, const char *section, const char *key) {
  for (int e = 0; e < deck->nentries; e++)
    if (strcmp(deck->entries[e].section->name, section) == 0 &&
        strcmp(deck->entries[e].key->name, key) == 0)
      return &deck->entries[e];
  return NULL;
}

static void list_sections(const wf_deck *deck, char *buf, size_t len) {
  buf[0] = '\0';
  for (int s = 0; s < deck->nsections; s++) {
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", s ? ", " : "", deck->sections[s]->name);
  }
}

static void list_keys(const wf_section *sec, char *buf, size_t len) {
  buf[0] = '\0';
  for (int k = 0; k < sec->nkeys; k++) {
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%s", k ? ", " : "", sec->keys[k].name);
  }
}

/* Set one value; `where` is the message prefix and the recorded source. */
static int assign(wf_deck *deck, const char *where, const char *section, const char *key,
                  const char *value, wf_status *st) {
  char known[600];
  const wf_section *sec = find_section(deck, section);
  if (!sec) {
    list_sections(deck, known, sizeof known);
    return wf_fail(st, WF_ERR_INPUT, "%s: unknown section [%s] (known: %s)", where, section,
                   known);
  }
  wf_entry *e = find_entry(deck, section, key);
  if (!e) {
    list_keys(sec, known, sizeof known);
    return wf_fail(st, WF_ERR_INPUT, "%s: [%s] unknown key '%s' (known: %s)", where, section, key,
                   known);
  }
  char why[300];
  if (wf_key_validate(e->key, value, why, sizeof why) != 0)
    return wf_fail(st, WF_ERR_INPUT, "%s: [%s] %s = %s: %s (%s: %s)", where, section, key, value,
                   why, wf_key_type_name(e->key->type), e->key->help);
  if (strlen(value) >= WF_DECK_TEXT_MAX)
    return wf_fail(st, WF_ERR_INPUT, "%s: [%s] %s: value longer than %d characters", where,
                   section, key, WF_DECK_TEXT_MAX - 1);
  snprintf(e->value, WF_DECK_TEXT_MAX, "%s", value);
  snprintf(e->source, WF_DECK_TEXT_MAX, "%s", where);
  return WF_OK;
}

/* ---- INI text parsing through libinih, one line at a time so that the
 * handler knows the line number; leading blanks are dropped so that indented
 * keys are keys, not inih "continuation lines". */
typedef struct line_reader {
  const char *p;
  int line;
  int section_line; /* line of the last [section] header */
  int overlong;     /* the last line longer than inih's buffer, 0 if none */
  int max_len;      /* that buffer's length, less the newline */
} line_reader;

static char *read_line(char *str, int num, void *stream) {
  line_reader *r = stream;
  if (*r->p == '\0') return NULL;
  r->line++;
  while (*r->p == ' ' || *r->p == '\t') r->p++;
  if (*r->p == '[') r->section_line = r->line;
  int n = 0;
  while (*r->p && *r->p != '\n' && n < num - 2) str[n++] = *r->p++;
  if (*r->p && *r->p != '\n') { /* overlong: inih would see a prefix; on_key refuses it */
    r->overlong = r->line;
    r->max_len = num - 2;
  }
  while (*r->p && *r->p != '\n') r->p++;
  if (*r->p == '\n') str[n++] = *r->p++;
  str[n] = '\0';
  return str;
}

typedef struct parse_ctx {
  wf_deck *deck;
  const char *name;
  line_reader reader;
  wf_status *st;
  bool failed;
  int fail_line;   /* line of the handler's first error */
  int *first_line; /* per entry: line where this parse set it (0 = not yet) */
} parse_ctx;

/* A value less an inline comment: from a '#' or ';' after a blank to the
 * end of the line (inih strips ';' itself; `file = out.h5   # my output`
 * must not name a file "out.h5   # my output"). */
static const char *strip_comment(const char *value, char *buf, size_t len) {
  snprintf(buf, len, "%s", value);
  for (char *p = buf; *p; p++)
    if ((*p == '#' || *p == ';') && p > buf && (p[-1] == ' ' || p[-1] == '\t')) {
      *p = '\0';
      break;
    }
  size_t n = strlen(buf);
  while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t')) buf[--n] = '\0';
  return buf;
}

static int on_key(void *user, const char *section, const char *key, const char *value) {
  parse_ctx *c = user;
  char text[2 * WF_DECK_TEXT_MAX];
  if (c->failed) return 0;
  c->fail_line = c->reader.line;
  char where[WF_DECK_TEXT_MAX];
  snprintf(where, sizeof where, "%s:%d", c->name, c->reader.line);
  if (c->reader.overlong == c->reader.line) {
    wf_fail(c->st, WF_ERR_INPUT, "%s: [%s] %s: line longer than %d characters", where, section,
            key, c->reader.max_len);
    c->failed = true;
    return 0;
  }
  if (section[0] == '\0') {
    wf_fail(c->st, WF_ERR_INPUT, "%s: key '%s' outside any [section]", where, key);
    c->failed = true;
    return 0;
  }
  if (!find_section(c->deck, section)) /* name the [section] line, not its first key */
    snprintf(where, sizeof where, "%s:%d", c->name, c->reader.section_line);
  wf_entry *e = find_entry(c->deck, section, key);
  if (e) {
    int *first = &c->first_line[e - c->deck->entries];
    if (*first) {
      wf_fail(c->st, WF_ERR_INPUT, "%s: [%s] %s set twice (first at line %d)", where, section, key,
              *first);
      c->failed = true;
      return 0;
    }
    *first = c->reader.line;
  }
  if (assign(c->deck, where, section, key, strip_comment(value, text, sizeof text), c->st) !=
      WF_OK) {
    c->failed = true;
    return 0;
  }
  return 1;
}

int wf_deck_parse_text(wf_deck *deck, const char *text, const char *name, wf_status *st) {
  parse_ctx c = {.deck = deck, .name = name, .reader = {.p = text, .line = 0}, .st = st};
  c.first_line = calloc((size_t)deck->nentries + 1, sizeof *c.first_line);
  if (!c.first_line) return wf_fail(st, WF_ERR_RUNTIME, "out of memory");
  int line = ini_parse_stream(read_line, &c.reader, on_key, &c);
  free(c.first_line);
  /* inih goes on after a syntax error: report whichever error came first. */
  if (c.failed && (line <= 0 || line >= c.fail_line)) return st->code;
  if (line > 0)
    return wf_fail(st, WF_ERR_INPUT,
                   "%s:%d: syntax error (expected '[section]', 'key = value' or a comment)", name,
                   line);
  if (line < 0) return wf_fail(st, WF_ERR_RUNTIME, "%s: deck parser ran out of memory", name);
  return WF_OK;
}

int wf_deck_set(wf_deck *deck, const char *assignment, wf_status *st) {
  char buf[2 * WF_DECK_TEXT_MAX];
  if (strlen(assignment) >= sizeof buf)
    return wf_fail(st, WF_ERR_INPUT, "--set %.40s...: longer than %zu characters", assignment,
                   sizeof buf - 1);
  snprintf(buf, sizeof buf, "%s", assignment);
  char *eq = strchr(buf, '=');
  char *dot = strchr(buf, '.');
  if (!eq || !dot || dot > eq || dot == buf || dot + 1 == eq)
    return wf_fail(st, WF_ERR_INPUT, "--set %s: expected section.key=value", assignment);
  *eq = '\0';
  *dot = '\0';
  const char *section = buf, *key = dot + 1, *value = eq + 1;
  return assign(deck, "--set", section, key, value, st);
}

const wf_entry *wf_deck_entry(const wf_deck *deck, const char *section, const char *key) {
  const wf_entry *e = find_entry(deck, section, key);
  if (!e) {
    /* A workload asked for a key it never declared: a programming error,
     * reported by the app at the end of the run (wf_deck_bug). */
    static const wf_entry undeclared = {.value = "0", .source = "undeclared"};
    if (deck->bug && !deck->bug[0])
      snprintf(deck->bug, 256, "internal error: deck key [%s] %s is not declared", section, key);
    return &undeclared;
  }
  return e;
}

const char *wf_deck_bug(const wf_deck *deck) { return deck->bug ? deck->bug : ""; }

long wf_deck_int(const wf_deck *deck, const char *section, const char *key) {
  return strtol(wf_deck_entry(deck, section, key)->value, NULL, 10);
}

double wf_deck_real(const wf_deck *deck, const char *section, const char *key) {
  return strtod(wf_deck_entry(deck, section, key)->value, NULL);
}

bool wf_deck_bool(const wf_deck *deck, const char *section, const char *key) {
  bool b = false;
  wf_key_parse_bool(wf_deck_entry(deck, section, key)->value, &b);
  return b;
}

const char *wf_deck_str(const wf_deck *deck, const char *section, const char *key) {
  return wf_deck_entry(deck, section, key)->value;
}

static void describe(const wf_deck *deck, const char *section, const char *key, char *buf,
                     size_t len) {
  const wf_entry *e = wf_deck_entry(deck, section, key);
  snprintf(buf, len, "%s: [%s] %s = %s", e->source, section, key, e->value);
}

int wf_deck_fail(const wf_deck *deck, const char *section, const char *key, wf_status *st,
                 const char *fmt, ...) {
  char where[2 * WF_DECK_TEXT_MAX + 64], what[sizeof st->msg];
  describe(deck, section, key, where, sizeof where);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return wf_fail(st, WF_ERR_INPUT, "%s: %s", where, what);
}

int wf_deck_blame(const wf_deck *deck, const char *section, const char *key, wf_status *st) {
  char where[2 * WF_DECK_TEXT_MAX + 64];
  describe(deck, section, key, where, sizeof where);
  return wf_wrap(st, "%s", where);
}

char *wf_deck_to_ini(const wf_deck *deck) {
  wf_strbuf b = {0};
  const wf_section *cur = NULL;
  for (int e = 0; e < deck->nentries; e++) {
    const wf_entry *en = &deck->entries[e];
    if (en->section != cur) {
      wf_strbuf_printf(&b, "%s[%s]\n", cur ? "\n" : "", en->section->name);
      cur = en->section;
    }
    wf_strbuf_printf(&b, "%s = %s\n", en->key->name, en->value);
  }
  if (b.oom) {
    wf_strbuf_free(&b);
    return NULL;
  }
  if (!b.s) b.s = calloc(1, 1);
  return b.s;
}

void wf_deck_print_info(const wf_deck *deck, FILE *out) {
  fprintf(out, "%-28s %-22s %-16s %s\n", "key", "value", "default", "from");
  for (int e = 0; e < deck->nentries; e++) {
    const wf_entry *en = &deck->entries[e];
    char name[128];
    snprintf(name, sizeof name, "%s.%s", en->section->name, en->key->name);
    fprintf(out, "%-28s %-22s %-16s %s\n", name, en->value[0] ? en->value : "\"\"",
            en->key->def[0] ? en->key->def : "\"\"", en->source);
  }
}

/* ---- files a run reads and writes ---- */

static bool in_sections(const char *name, const char *const *sections, int n) {
  if (!sections) return true;
  for (int i = 0; i < n; i++)
    if (strcmp(sections[i], name) == 0) return true;
  return false;
}

int wf_deck_claim_files(const wf_deck *deck, const char *const *sections, int nsections,
                        wf_files *files, wf_status *st) {
  for (int e = 0; e < deck->nentries; e++) {
    const wf_entry *en = &deck->entries[e];
    wf_key_type t = en->key->type;
    if ((t != WF_KEY_INPUT && t != WF_KEY_OUTPUT && t != WF_KEY_CACHE) || !en->value[0] ||
        !in_sections(en->section->name, sections, nsections))
      continue;
    char who[2 * WF_DECK_TEXT_MAX + 64], name[128];
    describe(deck, en->section->name, en->key->name, who, sizeof who);
    snprintf(name, sizeof name, "[%s] %s", en->section->name, en->key->name);
    wf_file_use use = t == WF_KEY_INPUT    ? WF_FILE_READ
                      : t == WF_KEY_OUTPUT ? WF_FILE_WRITE
                                           : WF_FILE_UPDATE;
    if (wf_files_add(files, who, name, en->value, use, st) != WF_OK) return st->code;
  }
  return WF_OK;
}

/* ---- what a checkpoint's state depends on ---- */

/* Whether `list` (space-separated names; NULL: none) holds `name`. */
static bool in_list(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    size_t l = strcspn(p, " ");
    if (l == n && strncmp(p, name, n) == 0) return true;
    p += l + (p[l] == ' ');
  }
  return false;
}

static bool is_state(const wf_section *sec, const wf_key *key) {
  return key->type != WF_KEY_OUTPUT && key->type != WF_KEY_CACHE &&
         !in_list(sec->restart_free, key->name) &&
         !(sec->restart_from && strcmp(sec->restart_from, key->name) == 0);
}

/* A section's restart names are keys of it (a typo would make a key free
 * or bound without a word). */
static int check_restart_names(const wf_section *sec, wf_status *st) {
  char names[1024];
  snprintf(names, sizeof names, "%s %s", sec->restart_from ? sec->restart_from : "",
           sec->restart_free ? sec->restart_free : "");
  for (char *p = names; *p;) {
    size_t l = strcspn(p, " ");
    bool found = false;
    for (int k = 0; k < sec->nkeys && l > 0; k++)
      found |= strlen(sec->keys[k].name) == l && strncmp(sec->keys[k].name, p, l) == 0;
    if (l > 0 && !found)
      return wf_fail(st, WF_ERR_RUNTIME, "[%s]: its restart keys name '%.*s', not a key of it",
                     sec->name, (int)l, p);
    p += l + (p[l] == ' ');
  }
  return WF_OK;
}

char *wf_deck_state(const wf_deck *deck, const char *const *sections, int nsections) {
  wf_strbuf b = {0};
  for (int e = 0; e < deck->nentries; e++) {
    const wf_entry *en = &deck->entries[e];
    if (is_state(en->section, en->key) && in_sections(en->section->name, sections, nsections))
      wf_strbuf_printf(&b, "%s.%s = %s\n", en->section->name, en->key->name, en->value);
  }
  if (b.oom) {
    wf_strbuf_free(&b);
    return NULL;
  }
  if (!b.s) b.s = calloc(1, 1);
  return b.s;
}

/* Two valid values of `key` that mean the same ("1e4" and "10000", "on" and "true"). */
static bool same_value(const wf_key *key, const char *a, const char *b) {
  double x, y;
  bool p, q;
  switch (key->type) {
  case WF_KEY_INT:
  case WF_KEY_REAL: return wf_key_parse_double(a, &x) == 0 && wf_key_parse_double(b, &y) == 0 && x == y;
  case WF_KEY_BOOL: return wf_key_parse_bool(a, &p) == 0 && wf_key_parse_bool(b, &q) == 0 && p == q;
  default: return strcmp(a, b) == 0;
  }
}

/* The value `saved` records for section.key, copied into `out`; false if it records none. */
static bool saved_value(const char *saved, const char *section, const char *key, char *out,
                        size_t len) {
  char name[256];
  int n = snprintf(name, sizeof name, "%s.%s = ", section, key);
  for (const char *line = saved; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t l = end ? (size_t)(end - line) : strlen(line);
    if (l >= (size_t)n && strncmp(line, name, (size_t)n) == 0) {
      snprintf(out, len, "%.*s", (int)(l - (size_t)n), line + n);
      return true;
    }
    line = end ? end + 1 : NULL;
  }
  return false;
}

int wf_deck_check_state(const wf_deck *deck, const char *const *sections, int nsections,
                        const char *saved, const char *from_section, const char *from_key,
                        wf_status *st) {
  const char *path = wf_deck_str(deck, from_section, from_key);
  bool ours = false; /* the record holds one of these sections' keys */
  const wf_entry *differs = NULL;
  char then[WF_DECK_TEXT_MAX] = "";
  for (int e = 0; e < deck->nentries; e++) {
    const wf_entry *en = &deck->entries[e];
    if (!is_state(en->section, en->key) || !in_sections(en->section->name, sections, nsections)) continue;
    char v[WF_DECK_TEXT_MAX];
    bool recorded = saved_value(saved, en->section->name, en->key->name, v, sizeof v);
    if (!recorded) snprintf(v, sizeof v, "%s", en->key->def);
    ours |= recorded;
    if (!differs && !same_value(en->key, en->value, v)) {
      differs = en;
      snprintf(then, sizeof then, "%s", v);
    }
  }
  if (!ours) /* a record without any of them is another workload's */
    return wf_deck_fail(deck, from_section, from_key, st,
                        "the checkpoint records none of this workload's keys: another workload's");
  if (differs)
    return wf_deck_fail(deck, differs->section->name, differs->key->name, st,
                        "checkpoint '%s' was written by a run with %s = %s: a restart continues "
                        "that run, so the keys its state depends on keep their values (start "
                        "afresh to change this one)",
                        path, differs->key->name, then[0] ? then : "\"\"");
  return WF_OK;
}
