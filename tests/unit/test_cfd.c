/* The convection run's reference (cf_rb_linear.h) against what is known of
 * Rayleigh-Benard stability between rigid walls without it. */
#include <CUnit/CUnit.h>
#include <math.h>

#include "cf_rb_linear.h"
#include "cf_wave_balance.h"

static const double PI = 3.14159265358979323846;

/* The neutral curve's minimum: Ra_c = 1707.762 at k_c = 3.117 (Reid and
 * Harris 1958; Chandrasekhar 1961, ch. II, table III). */
static void test_onset(void) {
  double best = INFINITY, k_best = 0;
  for (double k = 3.0; k <= 3.25; k += 0.005) {
    double ra = cf_rb_neutral_ra(k);
    if (ra < best) best = ra, k_best = k;
  }
  CU_ASSERT_DOUBLE_EQUAL(best, 1707.762, 0.01);
  CU_ASSERT_DOUBLE_EQUAL(k_best, 3.117, 0.005);
}

/* On the neutral curve the growth rate is 0 whatever Pr (the principle of
 * exchange of stabilities: Chandrasekhar 1961, sec. 11). */
static void test_neutral_is_marginal(void) {
  const double ks[3] = {1, 4, 7}, prs[2] = {0.71, 7};
  for (int i = 0; i < 3; i++) {
    double ra = cf_rb_neutral_ra(ks[i]), q;
    CU_ASSERT(ra > 1707.762);
    for (int p = 0; p < 2; p++)
      CU_ASSERT_DOUBLE_EQUAL(cf_rb_growth_rate(ra, prs[p], ks[i], &q), 0, 1e-9);
  }
}

/* With no buoyancy the least stable even mode is conduction's: T = cos(pi z)
 * cos(k x) decays at -(pi^2 + k^2) (momentum's decays faster at Pr = 7). */
static void test_conduction_limit(void) {
  double q;
  CU_ASSERT_DOUBLE_EQUAL(cf_rb_growth_rate(0.01, 7, PI, &q), -2 * PI * PI, 1e-3);
}

/* More buoyancy, faster growth; above onset, growth. */
static void test_monotone(void) {
  double q, last = -INFINITY;
  const double ras[5] = {1000, 1707.92, 2000, 1e4, 1e5};
  for (int i = 0; i < 5; i++) {
    double s = cf_rb_growth_rate(ras[i], 0.71, PI, &q);
    CU_ASSERT(s > last);
    CU_ASSERT(q > PI);
    last = s;
  }
  CU_ASSERT(last > 0);
}

/* The steps the source's balance holds, by hand: the field after n steps
 * reaches 4 (n - 1) cells from the source and must stay max(4, sponge)
 * cells inside the nearest face. */
static void test_balance_steps(void) {
  /* 64^3, source at 32 (31 cells to the +faces), sponge 16: room 15, 1 + 15/4 = 4 */
  CU_ASSERT_EQUAL(cf_balance_steps((const int[3]){64, 64, 64}, (const int[3]){32, 32, 32}, 16), 4);
  /* no sponge: the stencil's 4 cells; source 10 cells from the z face: 1 + 6/4 = 2 */
  CU_ASSERT_EQUAL(cf_balance_steps((const int[3]){64, 64, 21}, (const int[3]){32, 32, 10}, 0), 2);
  /* a source in the sponge: u^1 alone (the source's own cell) */
  CU_ASSERT_EQUAL(cf_balance_steps((const int[3]){64, 64, 64}, (const int[3]){2, 32, 32}, 16), 1);
}

void add_cfd_tests(void) {
  CU_pSuite s = CU_add_suite("convection linear theory", NULL, NULL);
  CU_add_test(s, "onset: Ra_c 1707.762 at k 3.117", test_onset);
  CU_add_test(s, "growth 0 on the neutral curve, any Pr", test_neutral_is_marginal);
  CU_add_test(s, "conduction's decay without buoyancy", test_conduction_limit);
  CU_add_test(s, "growth rises with Ra", test_monotone);
  CU_pSuite w = CU_add_suite("wave source balance", NULL, NULL);
  CU_add_test(w, "steps before a face or the sponge", test_balance_steps);
}
