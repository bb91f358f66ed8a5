package gpu

// SetConcatMemcpyMin sets the least row (bytes) and input (bytes) that Concatenate
// copies with pitched driver copies, and returns a function restoring the previous
// values; not safe while Concatenate runs.
func SetConcatMemcpyMin(row, input int64) (restore func()) {
	r, i := concatMemcpyMinRow, concatMemcpyMin
	concatMemcpyMinRow, concatMemcpyMin = row, input
	return func() { concatMemcpyMinRow, concatMemcpyMin = r, i }
}
