package gpu

// The same-type forms of the reductions, scans and statistics that take their result
// type R as an explicit type parameter (see ReduceOption's "Result types"): Go infers
// every type parameter of these from the array, so the common case needs none spelled
// out,
//
//	total, err := gpu.SumOf(s, x)      // x *Array[float32]: total *Array[float32]
//	m, err := gpu.MeanOf(s, x, gpu.Axes(-1))
//
// and each exists only for the element types where NumPy's own result type is the
// input's, so that it never means something NumPy wouldn't do:
//
//   - SumOf, ProdOf, CumSumOf and CumProdOf take the SameAccum types: floats
//     (Float16 and BFloat16 too: accumulated in float32, rounded once) and the 64-bit
//     integers, whose sums NumPy accumulates and returns in their own type.
//     numpy.sum of bool, int8 ... int32, uint8 ... uint32 returns int64 or uint64
//     (AccumType): for those, write the type, Sum[int64](s, x) for NumPy's result,
//     or Sum[int32](s, x) for a sum in int32 that wraps as Go's does; SumOf(s, x) of
//     such an x doesn't compile.
//   - MeanOf, VarOf, StdOf, LogSumExpOf, NormOf, MedianOf, NanMedianOf, QuantileOf,
//     QuantilesOf, NanQuantileOf and NanQuantilesOf take float arrays, whose
//     statistics NumPy returns in their type (float64 for integers: write
//     Mean[float64](s, x) or Quantile[float64](s, x, q)).
//   - AccumulateOf takes any type: ufunc.accumulate's result has the input's type
//     (numpy.add.accumulate of an int32 array is int32).
//
// The explicit forms stay: Sum[float64](s, x) of a float32 x is numpy.sum(x,
// dtype=float64), the accurate way to a wider result.

// SameAccum is the set of element types whose sums and products NumPy accumulates in
// their own type (AccumType(T) is T): float32, float64, Float16, BFloat16, int64,
// uint64, int and uint (64-bit), and named types of those kinds but the half types.
type SameAccum interface {
	~float32 | ~float64 | Float16 | BFloat16 | ~int64 | ~uint64 | ~int | ~uint
}

// SumOf is Sum[T]: the sum of a's elements over the axes, accumulated in and returned
// as a's own element type (numpy.sum(a, axis) for these types).
func SumOf[T SameAccum](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	return Sum[T](s, a, opts...)
}

// ProdOf is Prod[T]: the product of a's elements over the axes in a's own element type
// (numpy.prod(a, axis) for these types).
func ProdOf[T SameAccum](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	return Prod[T](s, a, opts...)
}

// MeanOf is Mean[T]: the mean of a's float elements over the axes, in their own type
// (numpy.mean(a, axis) of a float array).
func MeanOf[T Float](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	return Mean[T](s, a, opts...)
}

// CumSumOf is CumSum[T]: the cumulative sums of a along axis in a's own element type
// (numpy.cumsum(a, axis) for these types).
func CumSumOf[T SameAccum](s *Stream, a *Array[T], axis int, opts ...ScanOption) (*Array[T], error) {
	return CumSum[T](s, a, axis, opts...)
}

// CumProdOf is CumProd[T]: the cumulative products of a along axis in a's own element
// type (numpy.cumprod(a, axis) for these types).
func CumProdOf[T SameAccum](s *Stream, a *Array[T], axis int, opts ...ScanOption) (*Array[T], error) {
	return CumProd[T](s, a, axis, opts...)
}

// AccumulateOf is Accumulate[T]: the scan of a along axis with op in a's own element
// type (ufunc.accumulate: numpy.add.accumulate(a, axis)).
func AccumulateOf[T Elem](s *Stream, a *Array[T], op Op, axis int, opts ...ScanOption) (*Array[T], error) {
	return Accumulate[T](s, a, op, axis, opts...)
}

// VarOf is Var[T]: the variance of a's float elements in their own type (numpy.var).
func VarOf[T Float](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	return Var[T](s, a, opts...)
}

// StdOf is Std[T]: the standard deviation of a's float elements in their own type
// (numpy.std).
func StdOf[T Float](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	return Std[T](s, a, opts...)
}

// LogSumExpOf is LogSumExp[T]: log(sum(exp(a))) of a's float elements in their own
// type (scipy.special.logsumexp).
func LogSumExpOf[T Float](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	return LogSumExp[T](s, a, opts...)
}

// NormOf is Norm[T]: vector norms of a's float elements in their own type
// (numpy.linalg.norm).
func NormOf[T Float](s *Stream, a *Array[T], ord float64, opts ...ReduceOption) (*Array[T], error) {
	return Norm[T](s, a, ord, opts...)
}

// MedianOf is Median[T]: the median of a's float elements in their own type
// (numpy.median of a float array).
func MedianOf[T Float](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	return Median[T](s, a, opts...)
}

// NanMedianOf is NanMedian[T]: the median of a's float elements but NaNs, in their
// own type (numpy.nanmedian of a float array).
func NanMedianOf[T Float](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	return NanMedian[T](s, a, opts...)
}

// QuantileOf is Quantile[T]: the q-th quantile of a's float elements in their own type
// (numpy.quantile of a float array).
func QuantileOf[T Float](s *Stream, a *Array[T], q float64, opts ...ReduceOption) (*Array[T], error) {
	return Quantile[T](s, a, q, opts...)
}

// QuantilesOf is Quantiles[T]: the quantiles qs of a's float elements in their own
// type, the first axis over qs (numpy.quantile of a float array with an array of q).
func QuantilesOf[T Float](s *Stream, a *Array[T], qs []float64, opts ...ReduceOption) (*Array[T], error) {
	return Quantiles[T](s, a, qs, opts...)
}

// NanQuantileOf is NanQuantile[T]: the q-th quantile of a's float elements but NaNs, in
// their own type (numpy.nanquantile of a float array).
func NanQuantileOf[T Float](s *Stream, a *Array[T], q float64, opts ...ReduceOption) (*Array[T], error) {
	return NanQuantile[T](s, a, q, opts...)
}

// NanQuantilesOf is NanQuantiles[T]: the quantiles qs of a's float elements but NaNs,
// in their own type, the first axis over qs (numpy.nanquantile with an array of q).
func NanQuantilesOf[T Float](s *Stream, a *Array[T], qs []float64, opts ...ReduceOption) (*Array[T], error) {
	return NanQuantiles[T](s, a, qs, opts...)
}
