/* CUnit driver for the unit tests: pure functions, no MPI. */
#include <CUnit/Basic.h>

void add_deck_tests(void);
void add_files_tests(void);
void add_decomp_tests(void);
void add_grid_tests(void);
void add_model_tests(void);
void add_json_tests(void);
void add_progress_tests(void);
void add_eam_tests(void);
void add_tlrmvm_tests(void);
void add_gpt_tests(void);
void add_cfd_tests(void);

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  add_deck_tests();
  add_files_tests();
  add_decomp_tests();
  add_grid_tests();
  add_model_tests();
  add_json_tests();
  add_progress_tests();
  add_eam_tests();
  add_tlrmvm_tests();
  add_gpt_tests();
  add_cfd_tests();
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
  CU_cleanup_registry();
  return failures ? 1 : 0;
}
