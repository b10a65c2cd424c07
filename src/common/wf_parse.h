/* Strict number parsing for every input: the whole text must be the number,
 * and a number out of range (or beyond what the type holds) is an error,
 * never a wrapped or clamped value. */
#ifndef WF_PARSE_H
#define WF_PARSE_H

enum { WF_PARSE_OK = 0, WF_PARSE_SYNTAX = -1, WF_PARSE_RANGE = -2 };

/* A decimal integer at *p (leading blanks skipped) in [min, max]; *p moves
 * past it. */
int wf_parse_int(const char **p, long long min, long long max, long long *out);

/* "N1xN2x...xNn" (n numbers, blanks allowed around each 'x'), each in
 * [min, max], nothing else in `text`. */
int wf_parse_dims(const char *text, int n, long long min, long long max, long long *out);

#endif
