/* test_stats.c -- kbc_stats_compute: odd and even counts, n = 0 and 1,
   unsorted input. */
#include <criterion/criterion.h>
#include <math.h>

#include "stats.h"

Test(stats, odd_count_takes_the_middle_value)
{
    double x[] = {5.0, 1.0, 3.0};
    kbc_stats s;
    kbc_stats_compute(x, 3, &s);
    cr_assert_eq(s.n, 3);
    cr_assert_float_eq(s.median, 3.0, 1e-15);
    cr_assert_float_eq(s.min, 1.0, 1e-15);
    cr_assert_float_eq(s.max, 5.0, 1e-15);
    cr_assert_float_eq(s.mean, 3.0, 1e-15);
    /* sample deviation: sqrt(((-2)^2 + 0 + 2^2) / 2) = 2 */
    cr_assert_float_eq(s.stddev, 2.0, 1e-15);
}

Test(stats, even_count_averages_the_middle_two)
{
    double x[] = {4.0, 1.0, 10.0, 2.0};
    kbc_stats s;
    kbc_stats_compute(x, 4, &s);
    cr_assert_eq(s.n, 4);
    cr_assert_float_eq(s.median, 3.0, 1e-15); /* (2 + 4) / 2 */
    cr_assert_float_eq(s.min, 1.0, 1e-15);
    cr_assert_float_eq(s.max, 10.0, 1e-15);
    cr_assert_float_eq(s.mean, 4.25, 1e-15);
    /* deviations -3.25 -2.25 -0.25 5.75: squares sum 10.5625 + 5.0625 +
       0.0625 + 33.0625 = 48.75; / 3 = 16.25 */
    cr_assert_float_eq(s.stddev, sqrt(16.25), 1e-12);
}

Test(stats, no_values_give_nan_everywhere)
{
    kbc_stats s;
    kbc_stats_compute(NULL, 0, &s);
    cr_assert_eq(s.n, 0);
    cr_assert(isnan(s.median));
    cr_assert(isnan(s.min));
    cr_assert(isnan(s.max));
    cr_assert(isnan(s.mean));
    cr_assert(isnan(s.stddev));
}

Test(stats, one_value_is_its_own_median_and_has_no_deviation)
{
    double x[] = {0.25};
    kbc_stats s;
    kbc_stats_compute(x, 1, &s);
    cr_assert_eq(s.n, 1);
    cr_assert_float_eq(s.median, 0.25, 1e-15);
    cr_assert_float_eq(s.min, 0.25, 1e-15);
    cr_assert_float_eq(s.max, 0.25, 1e-15);
    cr_assert_float_eq(s.mean, 0.25, 1e-15);
    /* The sample deviation of one value is undefined. */
    cr_assert(isnan(s.stddev));
}

Test(stats, unsorted_input_with_repeats_and_a_far_value)
{
    /* Reversed order, repeats, and one outlier that moves the mean but
       not the median. */
    double x[] = {9.0, 7.0, 7.0, 100.0, 3.0, 1.0, 7.0};
    kbc_stats s;
    kbc_stats_compute(x, 7, &s);
    cr_assert_float_eq(s.median, 7.0, 1e-15);
    cr_assert_float_eq(s.min, 1.0, 1e-15);
    cr_assert_float_eq(s.max, 100.0, 1e-15);
    cr_assert_float_eq(s.mean, 134.0 / 7.0, 1e-12);
    /* Reordered in place, as the header says. */
    for (int i = 1; i < 7; i++)
        cr_assert_leq(x[i - 1], x[i]);
}

Test(stats, even_count_of_two)
{
    double x[] = {3.0, 1.0};
    kbc_stats s;
    kbc_stats_compute(x, 2, &s);
    cr_assert_float_eq(s.median, 2.0, 1e-15);
    cr_assert_float_eq(s.stddev, sqrt(2.0), 1e-12);
}

Test(stats, equal_samples_have_no_noise)
{
    double x[] = {2.0, 2.0, 2.0, 2.0, 2.0};
    cr_assert_float_eq(kbc_median_noise(x, 5), 0.0, 1e-15);
}

Test(stats, median_noise_spans_the_order_statistics_around_the_middle)
{
    /* n = 100: ranks 50 -+ 9.8, i.e. x[40] = 41 and x[60] = 61, around the
       median 50.5. */
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = i + 1;
    cr_assert_float_eq(kbc_median_noise(x, 100), 10.0 / 50.5, 1e-12);
}

Test(stats, one_sample_has_no_noise_measure)
{
    double x[] = {1.0};
    cr_assert(isnan(kbc_median_noise(x, 1)));
}

Test(stats, median_interval_is_the_order_statistics_of_the_noise)
{
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = i + 1;
    double lo, hi;
    kbc_median_interval(x, 100, &lo, &hi);
    cr_assert_float_eq(lo, 41.0, 0);
    cr_assert_float_eq(hi, 61.0, 0);
}

Test(stats, median_interval_of_five_is_the_whole_range)
{
    /* n = 5 (the energy windows): ranks 2.5 -+ 2.19 clamp to 0 and 4. */
    double x[] = {0.9, 1.0, 1.0, 1.05, 1.1};
    double lo, hi;
    kbc_median_interval(x, 5, &lo, &hi);
    cr_assert_float_eq(lo, 0.9, 0);
    cr_assert_float_eq(hi, 1.1, 0);
}

Test(stats, median_interval_of_nothing_is_nan)
{
    double lo = 0, hi = 0, one[] = {3.0};
    kbc_median_interval(NULL, 0, &lo, &hi);
    cr_assert(isnan(lo) && isnan(hi));
    kbc_median_interval(one, 1, &lo, &hi);
    cr_assert_float_eq(lo, 3.0, 0);
    cr_assert_float_eq(hi, 3.0, 0);
}
