/* The main() every cmocka test file ends with: run the listed tests as one group and
 * exit with the number that failed. Written once here so a test file ends with its list
 * of tests and nothing else:
 *
 *     VL_TEST_MAIN(cmocka_unit_test(test_units), cmocka_unit_test(test_rejects))
 *
 * Include after <cmocka.h>. */
#ifndef VL_TEST_SUPPORT_TEST_MAIN_H
#define VL_TEST_SUPPORT_TEST_MAIN_H

#define VL_TEST_MAIN(...)                                                 \
    int main(void)                                                        \
    {                                                                     \
        const struct CMUnitTest vl_tests[] = {__VA_ARGS__};               \
        return cmocka_run_group_tests(vl_tests, NULL, NULL);              \
    }

#endif
