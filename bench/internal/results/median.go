package results

import "slices"

// Number is what Median takes: durations, counts and measurements.
type Number interface {
	~int | ~int64 | ~uint64 | ~float64
}

// Median returns the median of xs (the mean of the middle two for an
// even count, rounded down for integers), or 0 for none; xs is not
// reordered.
func Median[T Number](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return s[n/2-1] + (s[n/2]-s[n/2-1])/2
}
