package gpu

import (
	mbits "math/bits"

	"github.com/go-gpu/gpu/internal/kernel"
)

// searchTree writes into out the SearchSorted positions of the n queries of q (a
// contiguous header) in the m > 0 sorted elements of a (contiguous): internal/kernel's
// SearchTreeSample builds the tree's sample levels (about m/7 ordered keys of 4 or 8
// bytes, in temporary memory), SearchTable the bucket table where the tuning's
// SearchTableGlobal or SearchTable asks for one (4 (2^bits + 3) bytes more), then
// SearchTree walks them, configured by the tuning's SearchShared, SearchQueries, SearchBlock and
// SearchBlocksPerSM.
func searchTree(s *Stream, a, q *header, m, n int, right bool, out *header) error {
	d := s.dev
	order := kernel.SortKey{Type: a.dt}
	L := kernel.SearchTreeLevels(m)
	sample := any(DevicePtr(0))
	if L > 1 {
		entries := kernel.SearchTreeLayout(m)[L-1]
		pw := 4
		if a.dt.Size() == 8 {
			pw = 8
		}
		sb, err := s.Alloc(int64(entries * pw))
		if err != nil {
			return err
		}
		defer sb.Free()
		if err := auxLaunch(s, &kernel.SearchTreeSample{Order: order, Levels: L}, entries, In(a), uint64(m), Out(sb)); err != nil {
			return err
		}
		sample = In(sb)
	}
	ks := a.dt.Size()
	tu := d.tuning()
	qpt := tu.SearchQueries
	if qpt == 0 {
		qpt = 4 - 2*(ks/8)
	}
	shared := min(L-1, tu.SearchShared, kernel.SearchTreeMaxShared(ks))
	bits := 0 // (the bucket table: Tuning.SearchTable and SearchTableGlobal)
	global := false
	if tu.SearchTableGlobal > 0 && L-1 > kernel.SearchTreeMaxShared(ks) && kernel.SearchTableTakes(a.dt) && uint64(m) < 1<<32 {
		// About 16 elements a bucket (a query's range then most often within one
		// node of the sample's lowest level), none for fewer queries than buckets.
		bits = min(tu.SearchTableGlobal, max(4, mbits.Len(uint(m))-5))
		if n >= 1<<bits {
			global, shared = true, 0
		} else {
			bits = 0
		}
	}
	if !global && tu.SearchTable > 0 && L > 1 && kernel.SearchTableTakes(a.dt) && uint64(m) < 1<<32 {
		// At most about m/8 buckets (smaller ones skip no more levels), and none for
		// fewer queries than buckets (the table's searches would cost more than the
		// steps they save).
		bits = min(tu.SearchTable, max(4, mbits.Len(uint(m))-3))
		if n < 1<<bits {
			bits = 0
		}
	}
	tree := func() *kernel.SearchTree {
		return &kernel.SearchTree{Order: order, Right: right, Levels: L, Shared: shared, Swizzle: tu.SearchSwizzle && shared > 0, TableBits: bits, TableGlobal: global, Hints: tu.SearchHints}
	}
	// Where a block's shared memory doesn't hold the shared levels and the table (the
	// CPU backend's 48 KiB; GPUs of less shared memory than the H200's): fewer
	// buckets down to 2^10, then fewer shared levels, then fewer buckets.
	for tree().SharedBytes() > d.info.MaxSharedPerBlock {
		switch {
		case bits > 10:
			bits--
		case shared > 0:
			shared--
		case bits > 4:
			bits--
		default:
			bits = 0
		}
	}
	var table *Buffer
	if bits > 0 {
		var err error
		if table, err = s.Alloc(int64(4 * kernel.SearchTableWords(bits))); err != nil {
			return err
		}
		defer table.Free()
		if err := auxLaunch(s, &kernel.SearchTable{Order: order, Bits: bits}, 1<<bits+1, In(a), uint64(m), Out(table)); err != nil {
			return err
		}
	}
	// Blocks by their shared memory (see Tuning.SearchBlock): where it is dynamic (5
	// levels, or a large table), 1024 threads, as many blocks a multiprocessor as fit
	// (at most 2: its 2048 threads).
	smem := tree().SharedBytes()
	block, perSM := tu.SearchBlock, tu.SearchBlocksPerSM
	if block == 0 {
		block = kernel.SearchSortedBlock
		if smem > 0 {
			block = 1024
		}
	}
	if perSM == 0 {
		perSM = 16
		if smem > 0 {
			perSM = max(1, min(2, d.info.MaxSharedPerMultiprocessor/(smem+max(0, d.info.ReservedSharedPerBlock))))
		}
	}
	qpt = min(qpt, kernel.SearchTreeMaxQueries(ks, block))
	if bits > 0 {
		qpt = min(qpt, kernel.SearchTreeTableQueries)
	}
	sp := tree()
	sp.Queries, sp.Vector = qpt, (ks == 4 || ks == 8) && headerPtr(a)%16 == 0
	sp.Pair = tu.SearchPair && sp.Vector && bits == 0
	if block != kernel.SearchSortedBlock {
		sp.Block = block
	}
	fn, err := d.kernel(sp)
	if err != nil {
		return err
	}
	if smem > 0 {
		if err := fn.raiseSharedLimit(smem); err != nil {
			return err
		}
	}
	if err := fn.setCarveout(tu.SearchCarveout); err != nil {
		return err
	}
	// Enough blocks to fill the GPU a few times over (each stages the shared levels
	// once), not many more.
	per := sp.Queries * block
	grid := max(1, min((n+per-1)/per, perSM*max(1, d.info.Multiprocessors)))
	cfg := LaunchConfig{Grid: Dim3{X: grid}, Block: Dim3{X: block}, SharedMem: smem}
	if table != nil {
		return s.Launch(fn, cfg, In(a), uint64(m), sample, In(q), Out(out), uint64(n), In(table))
	}
	return s.Launch(fn, cfg, In(a), uint64(m), sample, In(q), Out(out), uint64(n))
}
