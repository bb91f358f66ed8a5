package bench

// Rotation cycles among several input sets, so that repeated calls do not find
// their inputs in the L2 cache and measure the cache instead of device memory.
// Make the sets in Setup, each a full set of a call's inputs (and outputs, if
// they should not stay cached either), and take one per call with Next.
//
// A Rotation is not safe for concurrent use; benchmark bodies run on one
// goroutine.
type Rotation[T any] struct {
	sets []T
	i    int
}

// NewRotation returns a rotation over sets, starting with the first. It
// panics if there are no sets.
func NewRotation[T any](sets ...T) *Rotation[T] {
	if len(sets) == 0 {
		panic("bench: NewRotation with no sets")
	}
	return &Rotation[T]{sets: sets}
}

// Next returns the next set, cycling back to the first after the last.
func (r *Rotation[T]) Next() T {
	s := r.sets[r.i]
	r.i++
	if r.i == len(r.sets) {
		r.i = 0
	}
	return s
}

// Len returns the number of sets.
func (r *Rotation[T]) Len() int { return len(r.sets) }

// Sets returns the sets, for Teardown to free them.
func (r *Rotation[T]) Sets() []T { return r.sets }

// SetsFor returns how many input sets of setBytes bytes a rotation needs so
// that no set is still in a cache of cacheBytes bytes when its turn comes
// again: between two uses of a set the other sets pass through the cache, so
// (k-1)*setBytes must reach cacheBytes. A set of at least twice the cache
// needs no rotation (1). Pass the device's L2 size (50 MiB on an H100 or H200;
// the runtime reports it).
func SetsFor(setBytes, cacheBytes int64) int {
	if setBytes <= 0 {
		panic("bench: SetsFor with setBytes <= 0")
	}
	if cacheBytes <= 0 || setBytes >= 2*cacheBytes {
		return 1
	}
	return int((cacheBytes+setBytes-1)/setBytes) + 1
}
