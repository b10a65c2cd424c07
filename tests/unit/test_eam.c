/* EAM potential files: a synthetic funcfl and setfl, read back through the
 * splines (values at the nodes, derivatives against finite differences), and
 * every kind of malformed file with its message. Agreement with LAMMPS on
 * real potentials is tests/eam/eam_lammps.sh. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eam_potential.h"

enum { NRHO = 20, NR = 30 };
static const double DRHO = 0.05, DR = 0.2, CUT = 5.6;

static double F(double rho) { return -sqrt(rho + 0.1) + 0.05 * rho * rho; }
static double Z(double r) { return exp(-r) * (1 + r); }
static double RHO(double r) { return exp(-0.7 * r) * r * r; }

/* A funcfl text; `spoil` replaces the token at that index (counting the
 * table's values from 0) when non-NULL, and `nvalues` cuts the tables short. */
static char *funcfl(int spoil, const char *with, int nvalues) {
  size_t cap = 64 * 1024, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n, "synthetic funcfl\n 29 63.55 3.615 FCC\n");
  n += (size_t)snprintf(t + n, cap - n, "%d %.17g %d %.17g %.17g\n", NRHO, DRHO, NR, DR, CUT);
  int k = 0;
  for (int i = 0; i < NRHO + 2 * NR && k < nvalues; i++, k++) {
    double v = i < NRHO ? F(i * DRHO) : i < NRHO + NR ? Z((i - NRHO) * DR) : RHO((i - NRHO - NR) * DR);
    if (k == spoil) n += (size_t)snprintf(t + n, cap - n, "%s%s", with, k % 5 == 4 ? "\n" : " ");
    else n += (size_t)snprintf(t + n, cap - n, "%.17g%s", v, k % 5 == 4 ? "\n" : " ");
  }
  return t;
}

static void test_funcfl_values(void) {
  eam_potential p;
  wf_status st;
  char *t = funcfl(-1, NULL, 1 << 30);
  CU_ASSERT_EQUAL_FATAL(eam_parse(&p, t, "syn.eam", EAM_FUNCFL, &st), WF_OK);
  CU_ASSERT_EQUAL(p.nelements, 1);
  CU_ASSERT_DOUBLE_EQUAL(p.mass[0], 63.55, 0);
  CU_ASSERT_STRING_EQUAL(p.element[0], "Cu"); /* from atomic number 29 */
  CU_ASSERT_STRING_EQUAL(p.lattice[0], "fcc");
  CU_ASSERT_DOUBLE_EQUAL(p.lattice_a[0], 3.615, 0);
  /* LAMMPS's re-gridding keeps Nr - 1 and Nrho - 1 points. */
  CU_ASSERT_EQUAL(p.nr, NR - 1);
  CU_ASSERT_EQUAL(p.nrho, NRHO - 1);
  CU_ASSERT_DOUBLE_EQUAL(p.rhomax, (NRHO - 1) * DRHO, 1e-15);
  double d;
  for (int m = 1; m <= NR - 1; m++) {
    double r = (m - 1) * DR;
    CU_ASSERT_DOUBLE_EQUAL(eam_eval(&p.rhor[0], r, &d), RHO(r), 1e-13);
    CU_ASSERT_DOUBLE_EQUAL(eam_eval(&p.z2r[0], r, &d), 27.2 * 0.529 * Z(r) * Z(r), 1e-12);
  }
  /* The spline's derivative is its value's derivative (central differences
   * inside an interval). */
  for (double r = 0.33; r < 5; r += 0.41) {
    double h = 1e-6, fd = (eam_eval(&p.rhor[0], r + h, &d) - eam_eval(&p.rhor[0], r - h, &d)) / (2 * h);
    eam_eval(&p.rhor[0], r, &d);
    CU_ASSERT_DOUBLE_EQUAL(d, fd, 1e-7);
  }
  /* Past rhomax the embedding energy continues linearly. */
  double f1, f2, fp;
  f1 = eam_embed(&p, 0, p.rhomax + 0.1, &fp);
  f2 = eam_embed(&p, 0, p.rhomax + 0.2, &fp);
  CU_ASSERT_DOUBLE_EQUAL(f2 - f1, 0.1 * fp, 1e-12);
  eam_free(&p);
  free(t);
}

static void expect_error(const char *text, eam_format fmt, const char *want) {
  eam_potential p;
  wf_status st;
  CU_ASSERT_EQUAL(eam_parse(&p, text, "pot.eam", fmt, &st), WF_ERR_INPUT);
  if (!strstr(st.msg, want)) {
    fprintf(stderr, "\n  message: %s\n  wanted:  %s\n", st.msg, want);
    CU_FAIL("EAM error message");
  }
}

static void test_malformed(void) {
  char *t = funcfl(-1, NULL, 47); /* 20 of F, 27 of the 30 of Z */
  expect_error(t, EAM_FUNCFL, "file ends after 27 of the 30 values of Z(r)");
  free(t);
  t = funcfl(23, "1.0.0", 1 << 30); /* the 24th value, on line 8 */
  expect_error(t, EAM_FUNCFL, "pot.eam:8: '1.0.0' is not a finite number (Z(r))");
  free(t);
  expect_error("c\n29 63.5\n500 0.001 500\n", EAM_FUNCFL, "pot.eam:3: line too short: expected dr");
  expect_error("c\n29 63.5\n500 0.001 x 0.01 5\n", EAM_FUNCFL, "pot.eam:3: 'x' is not a finite number (Nr)");
  expect_error("c\n29 63.5\n500 0.001 500 -0.01 5\n", EAM_FUNCFL, "dr and the cutoff must be positive");
  /* non-finite values and sizes no real potential has are refused, not read */
  t = funcfl(23, "nan", 1 << 30);
  expect_error(t, EAM_FUNCFL, "pot.eam:8: 'nan' is not a finite number (Z(r))");
  free(t);
  t = funcfl(5, "inf", 1 << 30);
  expect_error(t, EAM_FUNCFL, "'inf' is not a finite number");
  free(t);
  expect_error("c\n29 63.5\n2000000000 0.001 500 0.01 5\n", EAM_FUNCFL,
               "pot.eam:3: Nrho = 2e+09: expected an integer in [5, 1000000]");
  expect_error("a\nb\nc\n9 A B C D E F G H I\n", EAM_SETFL,
               "pot.eam:4: number of elements = 9: expected an integer in [1, 8]");
  expect_error("a\nb\nc\n2 Cu\n", EAM_SETFL, "pot.eam:4: the line announces 2 elements but names 1");
  expect_error("a\nb\nc\n1 W Ta\n", EAM_SETFL, "pot.eam:4: the line announces 1 elements but names more");
  expect_error("a\nb\nc\n1.5 W\n", EAM_SETFL, "pot.eam:4: number of elements = 1.5: expected an integer");
  expect_error("a\nb\nc\n1 W\n10 0.1 10 0.5 4.0\n74 183.8 3.16\n", EAM_SETFL, "expected the lattice type of W");
  expect_error("a\nb\nc\n1 W\n10 0.1 10 0.5 4.0\n74 183.8 3.16 BCC\n1 2 3\n", EAM_SETFL,
               "file ends after 3 of the 10 values of F(rho) of W");
}

static void test_setfl(void) {
  /* Two elements, tables of 6 points: F = rho^2, rho(r) = r (A) and 2r (B),
   * r*phi: AA = 1, BA = 2, BB = 3 (constants). */
  char t[4096];
  snprintf(t, sizeof t,
           "c\nc\nc\n2 A B\n6 0.5 6 1.0 5.0\n"
           "1 10.0 3.0 fcc\n0 0.25 1 2.25 4 6.25\n0 1 2 3 4 5\n"
           "2 20.0 3.0 fcc\n0 0.25 1 2.25 4 6.25\n0 2 4 6 8 10\n"
           "1 1 1 1 1 1\n2 2 2 2 2 2\n3 3 3 3 3 3\n");
  eam_potential p;
  wf_status st;
  CU_ASSERT_EQUAL_FATAL(eam_parse(&p, t, "ab.eam.alloy", EAM_SETFL, &st), WF_OK);
  CU_ASSERT_EQUAL(p.nelements, 2);
  CU_ASSERT_EQUAL(eam_element(&p, "B"), 1);
  CU_ASSERT_EQUAL(eam_element(&p, "C"), -1);
  CU_ASSERT_DOUBLE_EQUAL(p.mass[1], 20.0, 0);
  double d;
  CU_ASSERT_DOUBLE_EQUAL(eam_eval(&p.rhor[1], 2.5, &d), 5.0, 1e-12); /* linear: exact */
  CU_ASSERT_DOUBLE_EQUAL(d, 2.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(eam_eval(&p.z2r[eam_pair(0, 1)], 1.7, &d), 2.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(eam_eval(&p.z2r[eam_pair(1, 0)], 1.7, &d), 2.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(eam_eval(&p.z2r[eam_pair(1, 1)], 3.2, &d), 3.0, 1e-12);
  /* Far beyond the table (a density from a pile of atoms): the last
   * interval's end, no integer overflow on the way (found by fuzzing; the
   * sanitizer build would stop here). */
  CU_ASSERT_DOUBLE_EQUAL(eam_eval(&p.rhor[1], 1e300, &d), 10.0, 1e-12);
  eam_free(&p);
}

void add_eam_tests(void) {
  CU_pSuite s = CU_add_suite("eam potentials", NULL, NULL);
  CU_add_test(s, "funcfl tables, splines, derivatives", test_funcfl_values);
  CU_add_test(s, "setfl with two elements", test_setfl);
  CU_add_test(s, "malformed files", test_malformed);
}
