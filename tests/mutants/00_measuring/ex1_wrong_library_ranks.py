# kind: spy
# why: takes the ranks from the library (course_utils.measure.stats.order_statistic_ranks under an alias) instead of the formula
# fails-with: course_utils
from course_utils.measure.stats import order_statistic_ranks as _ranks


def median_interval(values, level=0.95):
    x = sorted(float(v) for v in values)
    if any(math.isnan(v) for v in x):
        raise ValueError("NaN among the values")
    lo, hi, _ = _ranks(len(x), level)
    return x[lo - 1], x[hi - 1]
