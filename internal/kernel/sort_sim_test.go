package kernel

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// The sort kernels' PTX: assembled by ptxas (no spills) and run on the simulator
// against their CPU implementations, with small tiles (few items per thread) so that
// rows take several tiles, segments and launches.

var sortKeyTypes = []dtype.DType{dtype.Bool, dtype.Int8, dtype.Uint8, dtype.Int16, dtype.Uint16, dtype.Int32,
	dtype.Uint32, dtype.Float32, dtype.Int64, dtype.Uint64, dtype.Float64, dtype.Float16, dtype.BFloat16}

func TestSortPtxas(t *testing.T) {
	var specs []spectest.Spec
	for _, kt := range sortKeyTypes {
		items, aloneItems, passItems := 16, 48, 48 // (passItems: with values)
		if kt.Size() == 8 {
			items, aloneItems, passItems = 12, 28, 32
		}
		secItems := min(passItems, 32) // Sectors' most
		o := SortKey{Type: kt}
		specs = append(specs,
			&RadixHist{Order: o, Items: 8},
			&RadixHist{Order: o, Items: 8, Lean: true},
			&RadixPass{Order: o, Items: items, Val: ValNone, Lookback: 16, LoadFence: true},
			&RadixPass{Order: o, Items: items, Val: ValIndex, ValSize: 4, Lookback: 16, LoadFence: true},
			&RadixPass{Order: o, Items: items, Val: ValNone, Lookback: 16, LoadFence: true, LeanLookback: true},
			&RadixPass{Order: o, Items: items, Val: ValIndex, ValSize: 4, Lookback: 16, LoadFence: true, LeanLookback: true},
			// The default passes: 16 items of up to 4 bytes, 12 of 8, under four
			// blocks a multiprocessor, and those of long rows, 48 items of up to 4
			// bytes, 28 of 8 alone and 32 with values, under two (GPU_SORT_LONG_ITEMS,
			// GPU_SORT_LONG_ITEMS8, GPU_SORT_LONG_ITEMS8_VALS; reported below).
			// Windows of 4 predecessors for keys alone, 2 with values.
			&RadixPass{Order: o, Items: aloneItems, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 2},
			&RadixPass{Order: o, Items: passItems, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 2},
			&RadixPass{Order: o, Items: items, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 4},
			&RadixPass{Order: o, Items: items, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 4},
			// The same with a copy for full tiles (GPU_SORT_FULL_TILES).
			&RadixPass{Order: o, Items: aloneItems, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true},
			&RadixPass{Order: o, Items: passItems, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true},
			// The same with the ballots ANDed three at a time (RankBallot3: the default
			// for keys alone, GPU_SORT_RANK_ALONE; with values GPU_SORT_RANK=ballot3).
			&RadixPass{Order: o, Items: aloneItems, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true, Prefetch: 396, Rank: RankBallot3},
			&RadixPass{Order: o, Items: passItems, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true, Rank: RankBallot3},
			&RadixPass{Order: o, Items: items, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 4, FullTiles: true},
			&RadixPass{Order: o, Items: items, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 4, FullTiles: true},
			// The same with the keys written on whole sectors (GPU_SORT_SECTORS).
			&RadixPass{Order: o, Items: secItems, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true, Sectors: true},
			&RadixPass{Order: o, Items: secItems, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true, Sectors: true},
			&RadixPass{Order: o, Items: items, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 4, FullTiles: true, Sectors: true},
			// The long passes with L2 prefetches (GPU_SORT_PREFETCH, GPU_SORT_PREFETCH_VALS).
			&RadixPass{Order: o, Items: aloneItems, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true, Prefetch: 396},
			&RadixPass{Order: o, Items: secItems, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true, Sectors: true, Prefetch: 396, PrefetchVals: true},
			// The small sorts' passes (GPU_SORT_SMALL_ITEMS, GPU_SORT_SMALL_LOOKBACK).
			&RadixPass{Order: o, Items: 8, Val: ValNone, Lookback: 8, LoadFence: true, LeanLookback: true},
			&RadixPass{Order: o, Items: 8, Val: ValIndex, ValSize: 4, Lookback: 8, LoadFence: true, LeanLookback: true},
			&RadixBlockSort{Order: o, Items: items},
			&RadixBlockSort{Order: o, Items: items, Val: ValIndex},
			// The fused sorts (GPU_SORT_FUSED): the largest tiles, under one block a
			// multiprocessor and two (the defaults), and the ballot ranking with pass 0
			// ranked in the loop and the barrier joined.
			&RadixFused{Order: o, Items: items, LoadFence: true, MinBlocks: 1, Split: true, EarlyRank: true, Rank: RankAtomicOr},
			&RadixFused{Order: o, Items: items, LoadFence: true, MinBlocks: 2, Split: true, EarlyRank: true, Rank: RankAtomicOr},
			&RadixFused{Order: o, Items: items, LoadFence: true, MinBlocks: 2})
		if kt.Size() <= 4 {
			// The defaults' passes: each digit by one prmt (GPU_SORT_PRMT), the passes
			// of keys alone ranked by RankBallot3 (GPU_SORT_RANK_ALONE).
			specs = append(specs,
				&RadixPass{Order: o, Items: aloneItems, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true, Prefetch: 396, Prmt: true, Rank: RankBallot3},
				&RadixPass{Order: o, Items: passItems, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 2, FullTiles: true, Prmt: true},
				&RadixPass{Order: o, Items: items, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 4, FullTiles: true, Prefetch: 396, Prmt: true, Rank: RankBallot3},
				&RadixPass{Order: o, Items: 8, Val: ValNone, Lookback: 8, LoadFence: true, LeanLookback: true, Prmt: true, Rank: RankBallot3},
				&RadixPass{Order: o, Items: 8, Val: ValIndex, ValSize: 4, Lookback: 8, LoadFence: true, LeanLookback: true, Prmt: true})
		}
	}
	specs = append(specs,
		&RadixPass{Order: SortKey{Type: dtype.Float32, Descending: true}, Items: 16, Val: ValPayload, ValSize: 8, Lookback: 16},
		&RadixPass{Order: SortKey{Type: dtype.Float64}, Items: 12, Val: ValIndex, ValSize: 8, Lookback: 16},
		&RadixPass{Order: SortKey{Type: dtype.Uint8}, Items: 16, Val: ValPayload, ValSize: 1, Lookback: 1},
		&RadixBlockSort{Order: SortKey{Type: dtype.Int16, Descending: true}, Items: 16, Val: ValPayload, ValSize: 8},
		// Three blocks per multiprocessor fit without spills (ptxas 11.8) at 14 items of
		// up to 4 bytes without a payload, 10 of 8 bytes.
		&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 14, Val: ValNone, Lookback: 16, MinBlocks: 3},
		&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 14, Val: ValIndex, ValSize: 4, Lookback: 16, MinBlocks: 3},
		&RadixPass{Order: SortKey{Type: dtype.Int32}, Items: 16, Val: ValIndex, ValSize: 4, Lookback: 16, Rank: RankMatch},
		&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 16, Val: ValNone, Lookback: 16, Rank: RankMatch, LoadFence: true},
		&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 16, Val: ValNone, Lookback: 16, Rank: RankAtomicOr, LoadFence: true},
		&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 16, Val: ValIndex, ValSize: 4, Lookback: 16, Rank: RankAtomicOr, LoadFence: true},
		&RadixPass{Order: SortKey{Type: dtype.Float64}, Items: 12, Val: ValIndex, ValSize: 4, Lookback: 16, Rank: RankAtomicOr, LoadFence: true},
		&RadixPass{Order: SortKey{Type: dtype.Float64}, Items: 10, Val: ValIndex, ValSize: 4, Lookback: 16, MinBlocks: 3},
		// Long rows' passes with 8-byte values.
		&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 16, Val: ValPayload, ValSize: 8, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 3},
		&RadixPass{Order: SortKey{Type: dtype.Float64}, Items: 16, Val: ValIndex, ValSize: 8, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 3},
		&RadixPlan{Passes: 1}, &RadixPlan{Passes: 4}, &RadixPlan{Passes: 8},
		// Programmatic dependent launch (GPU_SORT_PDL).
		&RadixPlan{Passes: 4, GridDep: true},
		&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 8, Val: ValNone, Lookback: 8, LoadFence: true, LeanLookback: true, GridDep: true},
		// The fused sort's largest tiles (GPU_SORT_FUSED_ITEMS) under two blocks
		// (reported below: ptxas 13.0 spills 8 bytes for float32 at 26 items, 28 for
		// int16), and a traced one (RadixFused.Trace).
		&RadixFused{Order: SortKey{Type: dtype.Float32}, Items: 26, LoadFence: true, MinBlocks: 2, Split: true, EarlyRank: true, Rank: RankAtomicOr},
		&RadixFused{Order: SortKey{Type: dtype.Int16, Descending: true}, Items: 26, LoadFence: true, MinBlocks: 2, Split: true, EarlyRank: true, Rank: RankAtomicOr},
		&RadixFused{Order: SortKey{Type: dtype.Float32}, Items: 16, LoadFence: true, MinBlocks: 1, Split: true, EarlyRank: true, Rank: RankAtomicOr, Trace: true},
		// Rows of whole tiles without bounds tests (GPU_SORT_FUSED_FULL; ptxas 11.8:
		// no spills at 26 items, where the default kernel spills 8 bytes).
		&RadixFused{Order: SortKey{Type: dtype.Float32}, Items: 16, LoadFence: true, MinBlocks: 1, Split: true, EarlyRank: true, Rank: RankAtomicOr, Full: true},
		&RadixFused{Order: SortKey{Type: dtype.Float32}, Items: 26, LoadFence: true, MinBlocks: 2, Split: true, EarlyRank: true, Rank: RankAtomicOr, Full: true},
		&RadixFused{Order: SortKey{Type: dtype.Int16, Descending: true}, Items: 26, LoadFence: true, MinBlocks: 2, Split: true, EarlyRank: true, Rank: RankAtomicOr, Full: true},
		&RadixFused{Order: SortKey{Type: dtype.Float64}, Items: 12, LoadFence: true, MinBlocks: 2, Split: true, EarlyRank: true, Rank: RankAtomicOr, Full: true})
	for _, sp := range specs {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			src, _, err := sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			// The .minnctapersm configurations (GPU_SORT_MINBLOCKS, GPU_SORT_LONG_MINBLOCKS)
			// trade spills for occupancy as ptxas sees fit: reported, not failed, as
			// the scans' MinBlocks ones (TestScanTilesPtxasTuned). (ptxas 13.0 spills 4
			// bytes at 14 float32 items with 4-byte indices under 3 blocks.) So do the
			// atomic-OR rankings of 8-byte keys (GPU_SORT_RANK=or, not the default):
			// ptxas 13.0 holds float64 argsort's pass at 80 registers (three blocks per
			// multiprocessor) with 4 bytes of spills. And ptxas 11.8 holds the 8-byte
			// keys' argsort passes under the wide look-back (Lookback 16, not the
			// default) at 64 registers for four blocks, with a 4-byte spill a tile.
			fp, fused := sp.(*RadixFused)
			if p, ok := sp.(*RadixPass); ok && (p.MinBlocks > 0 || p.Order.Size() == 8 && (p.Rank == RankAtomicOr || p.Lookback == 16 && p.Val == ValIndex)) ||
				fused && (fp.Items > 16 || fp.Trace) {
				log, _ := scanPtxasRaw(t, src)
				regs, smem := scanRegs(log)
				st, ld := scanSpills(log)
				t.Logf("%s: %d registers, spills %d/%d bytes, %d bytes smem (reported)", sp.Key(), regs, st, ld, smem)
				checkPassSmem(t, sp, smem)
				return
			}
			log, _ := scanPtxas(t, src)
			regs, smem := scanRegs(log)
			t.Logf("%s: %d registers, %d bytes smem", sp.Key(), regs, smem)
			checkPassSmem(t, sp, smem)
		})
	}
}

// checkPassSmem checks a pass's SharedBytes (the blocks a multiprocessor fits:
// sortResidentBlocks in package gpu) against ptxas's count, which leaves out the
// dynamic shared memory (a RadixPass's DynamicBytes): at least it, at most 16 bytes
// more (the small arrays' alignment; ptxas 11.8 counts 8 fewer without the digits'
// array).
func checkPassSmem(t *testing.T, sp spectest.Spec, smem int) {
	p, ok := sp.(interface {
		spectest.Spec
		SharedBytes() int
	})
	if !ok {
		return
	}
	static := p.SharedBytes()
	if rp, ok := sp.(*RadixPass); ok {
		static -= rp.DynamicBytes()
	}
	if static < smem || static > smem+16 {
		t.Errorf("%s: ptxas counts %d bytes of shared memory, SharedBytes %d (%d static)", p.Key(), smem, p.SharedBytes(), static)
	}
}

// sortSimKeys returns n keys of type kt with many ties, and for floats ±0, NaNs (of
// both signs, with payloads), ±Inf and subnormals.
func sortSimKeys(rng *rand.Rand, kt dtype.DType, n int) []byte {
	b := spectest.RandBytes(rng, kt, n, true)
	sz := kt.Size()
	for i := 0; i < n; i++ {
		e := b[i*sz : (i+1)*sz]
		switch r := rng.IntN(8); {
		case r == 0 && kt == dtype.Float16:
			copy(e, []byte{0x00, 0x7e}) // NaN
		case r == 0 && (kt == dtype.Float32 || kt == dtype.Float64):
			// NaNs of both signs with payloads, ±Inf, subnormals of both signs.
			v := [][]uint64{{0xffc00001, 0x7f800123, 0x7f800000, 0xff800000, 0x00000001, 0x807fffff},
				{0xfff8000000000001, 0x7ff0000000000123, 0x7ff0000000000000, 0xfff0000000000000, 1, 0x800fffffffffffff}}[sz/8][rng.IntN(6)]
			for j := range e {
				e[j] = byte(v >> (8 * j))
			}
		case r == 1 && kt.IsFloat():
			clear(e)
			e[sz-1] = 0x80 // -0
		case r == 2:
			clear(e) // a tie (+0 for floats)
		case r == 3 && kt == dtype.Bool:
		}
		if kt == dtype.Bool {
			e[0] &= 1
		}
	}
	return b
}

// sortSimRun sorts keys (rows of rowLen) through the pass kernels on the simulator
// and on the CPU, the way sortRows plans it, and compares every buffer.
//
// lean selects the lean look-back (RadixPass.LeanLookback) and histogram (RadixHist.Lean).
func sortSimRun(t *testing.T, order SortKey, items int, val SortVal, vs int, keys, vals []byte, rows, rowLen int, segTiles, lb int, rank SortRank, lean, full bool) {
	t.Helper()
	sortSimRunKeys(t, order, items, val, vs, keys, vals, rows, rowLen, segTiles, lb, rank, lean, full, false)
}

// sortSimRunKeys is sortSimRun; with noKeys the sorted keys' buffer is a null pointer,
// as an argsort's (the last pass skips the keys' writes: a write through it faults in
// the simulator).
func sortSimRunKeys(t *testing.T, order SortKey, items int, val SortVal, vs int, keys, vals []byte, rows, rowLen int, segTiles, lb int, rank SortRank, lean, full, noKeys bool) {
	t.Helper()
	ks := order.Size()
	P := order.Passes()
	pass := &RadixPass{Order: order, Items: items, Val: val, ValSize: vs, Lookback: lb, Rank: rank, LoadFence: items%2 == 0, LeanLookback: lean, FullTiles: full,
		Sectors: sortSimSectors && items <= 32, Prefetch: sortSimPrefetch, PrefetchVals: sortSimPrefetch > 0,
		// Digits by prmt (the default for keys of up to 4 bytes) in ascending sorts,
		// by a shift and a mask in descending ones; the other way round on whole
		// sectors (TestRadixPassSectorsSim runs every case again).
		Prmt: ks <= 4 && order.Descending == sortSimSectors}
	tile := pass.Tile()
	tpr := (rowLen + tile - 1) / tile
	tps, segs := tpr, 1
	if segTiles > 0 && tpr > segTiles {
		tps = segTiles
		segs = (tpr + tps - 1) / tps
	}
	segLen := tps * tile
	chunkTiles := 1
	chunk := chunkTiles * tile
	chunks := (rowLen + chunk - 1) / chunk
	store := uint64(0)
	if chunks == segs {
		store = 1
	}
	var groups, rpg, maxTiles int
	if segs == 1 {
		rpg = max(1, 3/tpr) // at most 3 tiles a launch, to test groups
		groups = (rows + rpg - 1) / rpg
		maxTiles = min(rows, rpg) * tpr
	} else {
		groups = rows * segs
		maxTiles = tps
	}
	nseg := rows * segs
	hist := &RadixHist{Order: order, Items: 2, Lean: lean}
	plan := &RadixPlan{Passes: P}
	n := rows * rowLen
	histB := make([]byte, nseg*P*RadixDigits*4)
	baseB := make([]byte, nseg*P*RadixDigits*8)
	planB := make([]byte, SortPlanBytes+SortCounterBytes(P, groups)) // (the flags, then the passes' tile counters)
	histArgs := func(h []byte) []spectest.Arg {
		return []spectest.Arg{spectest.Buf(keys), spectest.Buf(h), spectest.U64(uint64(rowLen)), spectest.U64(uint64(chunk)), spectest.U64(uint64(chunks)),
			spectest.U64(uint64(segLen)), spectest.U64(uint64(segs)), spectest.U64(store)}
	}
	hs := spectest.Sim(t, hist, rows*chunks, SortBlock, 4, histArgs(histB))
	hc := spectest.CPU(t, hist, rows*chunks, SortBlock, histArgs(histB))
	if !bytes.Equal(hs[1], hc[1]) {
		t.Fatalf("%s: histograms differ", hist.Key())
	}
	planArgs := []spectest.Arg{spectest.Buf(hc[1]), spectest.Buf(baseB), spectest.Buf(planB), spectest.U64(uint64(rowLen)), spectest.U64(uint64(segs))}
	ps := spectest.Sim(t, plan, rows*P, SortBlock, 8, planArgs)
	pc := spectest.CPU(t, plan, rows*P, SortBlock, planArgs)
	if !bytes.Equal(ps[1], pc[1]) || !bytes.Equal(ps[2][:4*P], pc[2][:4*P]) {
		t.Fatalf("%s: plans differ: %v vs %v", plan.Key(), ps[2][:4*P], pc[2][:4*P])
	}
	// The passes: both runs start from the same buffers and must agree after each.
	poison := func(size int) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = 0xA5
		}
		return b
	}
	outV := 8
	if val == ValPayload {
		outV = vs
	}
	bufs := [][]byte{keys, poison(n * ks), poison(n * ks), poison(n * ks), vals, poison(n * max(vs, 1)), poison(n * max(vs, 1)), poison(n * outV)}
	if val == ValNone {
		bufs[4], bufs[5], bufs[6], bufs[7] = []byte{0}, []byte{0}, []byte{0}, []byte{0}
	}
	status := make([]byte, StatusBytes(maxTiles))
	simBufs := bufs
	cpuBufs := bufs
	simStatus, cpuStatus := status, status
	simBase, cpuBase := pc[1], pc[1]
	simPlan, cpuPlan := pc[2], pc[2] // (the flags, then the launches' tile counters)
	for p := 0; p < P; p++ {
		for gi := 0; gi < groups; gi++ {
			var tileBase, tiles int
			if segs == 1 {
				r0 := gi * rpg
				tileBase, tiles = r0*tpr, (min(rows, r0+rpg)-r0)*tpr
			} else {
				r, q := gi/segs, gi%segs
				tileBase, tiles = r*tpr+q*tps, min(tpr, (q+1)*tps)-q*tps
			}
			args := func(b [][]byte, plan, base, st []byte) []spectest.Arg {
				a := make([]spectest.Arg, 0, 20)
				for i, x := range b {
					if i == 3 && noKeys {
						a = append(a, spectest.Null())
						continue
					}
					a = append(a, spectest.Buf(x))
				}
				a = append(a, spectest.Buf(plan), spectest.Buf(base), spectest.Buf(st), spectest.U64(uint64(p)), spectest.U64(uint64(rowLen)), spectest.U64(uint64(tpr)),
					spectest.U64(uint64(tps)), spectest.U64(uint64(segs)), spectest.U64(uint64(tileBase)), spectest.U64(uint64(maxTiles)), spectest.U64(uint64(groups)), spectest.U64(uint64(gi)))
				return a
			}
			s := spectest.Sim(t, pass, tiles, SortBlock, 3, args(simBufs, simPlan, simBase, simStatus))
			c := spectest.CPU(t, pass, tiles, SortBlock, args(cpuBufs, cpuPlan, cpuBase, cpuStatus))
			// Each launch takes its own counter's tiles and leaves the others alone.
			for q, b := range [][]byte{s[8], c[8]} {
				prev := [][]byte{simPlan, cpuPlan}[q]
				for i := 0; i < P*groups; i++ {
					got := binary.LittleEndian.Uint32(b[SortPlanBytes+4*i:])
					want := binary.LittleEndian.Uint32(prev[SortPlanBytes+4*i:])
					if i == p*groups+gi {
						want = uint32(tiles)
					}
					if got != want {
						t.Fatalf("%s: pass %d launch %d: tile counter %d is %d after the launch, want %d (sim=%v)", pass.Key(), p, gi, i, got, want, q == 0)
					}
				}
			}
			simPlan, cpuPlan = s[8], c[8]
			simBufs, cpuBufs = s[:8], c[:8]
			simBase, cpuBase = s[9], c[9]
			simStatus, cpuStatus = s[10], c[10]
			// The status half the next launch uses must be zero in both.
			for i := 0; i < 8; i++ {
				if !bytes.Equal(simBufs[i], cpuBufs[i]) {
					if sortSimDebug {
						d := firstDiff(simBufs[i], cpuBufs[i]) / ks
						for e := max(0, d-3); e < min(n, d+5); e++ {
							t.Logf("elem %d: sim %x cpu %x", e, simBufs[i][e*ks:(e+1)*ks], cpuBufs[i][e*ks:(e+1)*ks])
						}
					}
					if sortSimDebug {
						t.Errorf("%s: pass %d launch %d: buffer %d differs (sim vs CPU) at byte %d", pass.Key(), p, gi, i, firstDiff(simBufs[i], cpuBufs[i]))
						continue
					}
					t.Fatalf("%s: pass %d launch %d: buffer %d differs (sim vs CPU) at byte %d", pass.Key(), p, gi, i, firstDiff(simBufs[i], cpuBufs[i]))
				}
			}
		}
	}
	if sortSimDebug {
		t.Log("checking the simulator's result")
		checkSortResult(t, order, val, vs, keys, vals, rows, rowLen, simBufs[3], simBufs[7])
	}
	checkSortResult(t, order, val, vs, keys, vals, rows, rowLen, cpuBufs[3], cpuBufs[7])
}

// TestRadixPassNoKeysSim sorts without the sorted keys' buffer (argsort, SortByKey's
// values only): the last pass writes no keys, and the values must still be right;
// with and without the whole-sector writes (RadixPass.Sectors).
func TestRadixPassNoKeysSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	for _, c := range []struct {
		kt         dtype.DType
		val        SortVal
		vs, n, seg int
		full       bool
	}{
		{dtype.Uint32, ValIndex, 4, 3000, 0, false},
		{dtype.Float32, ValPayload, 8, 2500, 2, true},
		{dtype.Int8, ValIndex, 8, 1800, 0, true},
		{dtype.Float64, ValPayload, 2, 1300, 0, false},
	} {
		for _, sectors := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/%v%d/%d/sectors=%v", c.kt, c.val, c.vs, c.n, sectors), func(t *testing.T) {
				keys := sortSimKeys(rng, c.kt, 2*c.n)
				var vals []byte
				if c.val == ValPayload {
					vals = spectest.RandBytes(rng, dtype.Uint8, 2*c.n*c.vs, false)
				}
				sortSimSectors = sectors
				defer func() { sortSimSectors = false }()
				sortSimRunKeys(t, SortKey{Type: c.kt}, 2, c.val, c.vs, keys, vals, 2, c.n, c.seg, 2, RankBallot, true, c.full, true)
			})
		}
	}
}

var sortSimDebug = false

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// checkSortResult checks sorted keys and values against a stable sort per row.
func checkSortResult(t *testing.T, order SortKey, val SortVal, vs int, keys, vals []byte, rows, rowLen int, outK, outV []byte) {
	t.Helper()
	ks := order.Size()
	perm := make([]int, rowLen)
	ord := make([]uint64, rowLen)
	for r := 0; r < rows; r++ {
		s := r * rowLen
		for i := range perm {
			perm[i] = i
			ord[i] = order.Ordered(loadRaw(keys, ks, s+i))
		}
		stableSortPerm(perm, ord)
		for i, j := range perm {
			if outK != nil && len(outK) > 1 && !bytes.Equal(outK[(s+i)*ks:(s+i+1)*ks], keys[(s+j)*ks:(s+j+1)*ks]) {
				t.Fatalf("row %d: key %d is %x, want %x", r, i, outK[(s+i)*ks:(s+i+1)*ks], keys[(s+j)*ks:(s+j+1)*ks])
			}
			switch val {
			case ValIndex:
				if got := binary.LittleEndian.Uint64(outV[(s+i)*8:]); got != uint64(j) {
					t.Fatalf("row %d: index %d is %d, want %d", r, i, got, j)
				}
			case ValPayload:
				if !bytes.Equal(outV[(s+i)*vs:(s+i+1)*vs], vals[(s+j)*vs:(s+j+1)*vs]) {
					t.Fatalf("row %d: payload %d differs", r, i)
				}
			}
		}
	}
}

// sortSimSectors gives sortSimRun's passes RadixPass.Sectors (set by the tests that
// run them both ways, not in parallel with others).
var sortSimSectors = false

// sortSimPrefetch > 0 gives sortSimRun's passes RadixPass.Prefetch of that many tiles
// and PrefetchVals (set by TestRadixPassPrefetchSim, not in parallel with others): the
// simulator faults on a prefetch outside the buffers.
var sortSimPrefetch = 0

// The passes with L2 prefetches of a later tile's keys and the tile's values: every
// case again, at one tile ahead (most tiles have one in their launch) and three.
func TestRadixPassPrefetchSim(t *testing.T) {
	for _, ahead := range []int{1, 3} {
		t.Run(fmt.Sprintf("ahead=%d", ahead), func(t *testing.T) {
			sortSimPrefetch = ahead
			defer func() { sortSimPrefetch = 0 }()
			radixPassSim(t)
		})
	}
}

func TestRadixPassSim(t *testing.T) { radixPassSim(t) }

// RadixPass.Prmt takes each key's digit by a prmt (one more a key than the ranking's
// packing takes) in place of the shift and mask; 8-byte keys are refused.
func TestRadixPassPrmt(t *testing.T) {
	for _, kt := range []dtype.DType{dtype.Float32, dtype.Int16, dtype.Uint8} {
		count := func(prmt bool) int {
			p := &RadixPass{Order: SortKey{Type: kt}, Items: 8, Val: ValIndex, ValSize: 4, Lookback: 4, LoadFence: true, LeanLookback: true, Prmt: prmt}
			src, _, err := p.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			return strings.Count(src, "prmt.b32")
		}
		if on, off := count(true), count(false); on < off+8 {
			t.Errorf("%v: %d prmt with Prmt, %d without: want one more a key (8)", kt, on, off)
		}
	}
	p := &RadixPass{Order: SortKey{Type: dtype.Float64}, Items: 8, Val: ValNone, Lookback: 4, Prmt: true}
	if err := p.Validate(); err == nil {
		t.Error("Prmt with 8-byte keys: no error")
	}
}

// The keys written on whole sectors (RadixPass.Sectors): every case again, the
// runs' virtual tiles at every key size (a sector of 32, 16, 8 or 4 keys).
func TestRadixPassSectorsSim(t *testing.T) {
	sortSimSectors = true
	defer func() { sortSimSectors = false }()
	radixPassSim(t)
}

func radixPassSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 1))
	type tc struct {
		kt        dtype.DType
		desc      bool
		val       SortVal
		vs        int
		rows, n   int
		items, lb int
		segTiles  int
		rank      SortRank // (RankMatch: the simulator has no match.any)
		lean      bool     // the lean look-back and histogram (the defaults)
	}
	cases := []tc{
		{dtype.Uint8, false, ValNone, 0, 1, 3000, 2, 2, 0, RankBallot, true},
		{dtype.Float32, false, ValIndex, 4, 1, 5000, 2, 4, 0, RankAtomicOr, false},
		{dtype.Int16, true, ValPayload, 8, 2, 1500, 2, 1, 0, RankBallot, true},
		{dtype.Float32, true, ValNone, 0, 2, 2500, 2, 2, 0, RankAtomicOr, true},
		{dtype.Float64, false, ValIndex, 8, 1, 2100, 2, 8, 2, RankBallot, false},
		{dtype.Float16, true, ValNone, 0, 3, 700, 1, 16, 0, RankBallot, false},
		{dtype.Int32, false, ValPayload, 2, 1, 4000, 1, 32, 3, RankAtomicOr, true},
		{dtype.Bool, false, ValIndex, 4, 2, 1000, 2, 2, 0, RankBallot, false},
		// The lean look-back over windows wider than the predecessors (32 and 16
		// predecessors of at most 9 tiles), across segments (the first tile of each
		// publishes an inclusive count), and a window of one.
		{dtype.Float32, false, ValIndex, 4, 1, 4600, 2, 32, 0, RankBallot, true},
		{dtype.Float64, true, ValPayload, 4, 1, 2100, 2, 16, 2, RankBallot, true},
		{dtype.Int32, false, ValNone, 0, 1, 3300, 2, 1, 3, RankBallot, true},
		// Larger tiles: 24 items (6144 keys, the last tile partial), the long rows'
		// 28 items of keys of up to 4 bytes and 16 of 8 bytes, at the default windows
		// (4 predecessors for keys alone, 2 with values).
		{dtype.Float32, false, ValIndex, 4, 1, 15000, 24, 2, 0, RankBallot, true},
		{dtype.Int32, true, ValNone, 0, 1, 30000, 28, 4, 0, RankBallot, true},
		{dtype.Float64, false, ValIndex, 4, 1, 21000, 16, 2, 0, RankBallot, true},
		// Tiles past 48 KiB of shared memory, whose keys or values take dynamic
		// shared memory (RadixPass.DynamicBytes): 40 items of float32 keys alone, 24
		// of float64 keys with indices.
		{dtype.Float32, true, ValNone, 0, 1, 25000, 40, 4, 0, RankBallot, true},
		{dtype.Float64, false, ValIndex, 4, 1, 15000, 24, 2, 0, RankBallot, true},
		// The long rows' default tiles: 48 items of float32 keys with indices, 28
		// of float64 keys alone (ranked by RankBallot3 and looking back over windows
		// of 2, as by default: GPU_SORT_LONG_LOOKBACK8), 32 with indices.
		{dtype.Float32, false, ValIndex, 4, 1, 30000, 48, 2, 0, RankBallot, true},
		{dtype.Float64, true, ValNone, 0, 1, 20000, 28, 2, 0, RankBallot3, true},
		{dtype.Int64, false, ValIndex, 4, 1, 20000, 32, 2, 0, RankBallot, true},
		// The largest tiles (SortPassMaxItems): 64 items of int32 keys with indices.
		{dtype.Int32, false, ValIndex, 4, 1, 40000, SortPassMaxItems, 2, 0, RankBallot, true},
		// The ballots ANDed three at a time (RankBallot3), a partial last tile.
		{dtype.Float32, true, ValIndex, 4, 2, 7000, 8, 2, 0, RankBallot3, true},
		{dtype.Uint16, false, ValNone, 0, 1, 30000, 48, 4, 0, RankBallot3, true},
	}
	// RadixPass.FullTiles: full tiles take the copy without bounds tests, a row's
	// partial last tile the other. Rows of whole tiles (2048 keys of 4-item tiles,
	// 14336 of 28-item ones) have no partial tile; the others mix both, across
	// segments and launch groups, with every ranking the simulator has, and with odd
	// items without the load fence (sortSimRun).
	fulls := []tc{
		{dtype.Uint8, false, ValNone, 0, 1, 3000, 2, 2, 0, RankBallot, true},
		{dtype.Float32, false, ValIndex, 4, 2, 2048, 4, 2, 0, RankBallot, true},
		{dtype.Int32, true, ValNone, 0, 1, 14336, 28, 4, 0, RankBallot, true},
		{dtype.Float32, false, ValPayload, 2, 1, 5000, 3, 2, 0, RankBallot, true},
		{dtype.Int16, true, ValPayload, 8, 2, 1500, 2, 1, 0, RankAtomicOr, false},
		{dtype.Float64, false, ValIndex, 8, 1, 2100, 2, 8, 2, RankBallot, true},
		{dtype.Float32, true, ValNone, 0, 1, 30000, 28, 4, 0, RankBallot, true},
		{dtype.Float64, false, ValIndex, 4, 1, 21000, 16, 2, 3, RankBallot, true},
		// Dynamic shared memory: two whole tiles of 40 items, float64 keys of 24
		// items with a partial last tile.
		{dtype.Int32, false, ValNone, 0, 1, 20480, 40, 4, 0, RankBallot, true},
		{dtype.Float64, true, ValNone, 0, 1, 15000, 24, 4, 0, RankBallot, true},
		// 56 items of float32 keys alone (GPU_SORT_LONG_ITEMS=56): two whole tiles
		// and a partial one.
		{dtype.Float32, false, ValNone, 0, 1, 2*56*SortBlock + 5000, 56, 4, 0, RankBallot, true},
		// RankBallot3 in full tiles and a partial one.
		{dtype.Int32, false, ValNone, 0, 1, 2*48*SortBlock + 3000, 48, 4, 0, RankBallot3, true},
	}
	if testing.Short() || testenv.Race {
		cases = cases[:3] // (testenv.Race: the simulator's own synchronization is what -race checks)
		fulls = fulls[:1]
	}
	run := func(c tc, full bool) {
		t.Run(fmt.Sprintf("%v/desc=%v/%v%d/%dx%d/k%d/lb%d/%v/lean=%v/full=%v", c.kt, c.desc, c.val, c.vs, c.rows, c.n, c.items, c.lb, c.rank, c.lean, full), func(t *testing.T) {
			keys := sortSimKeys(rng, c.kt, c.rows*c.n)
			var vals []byte
			if c.val == ValPayload {
				vals = spectest.RandBytes(rng, dtype.Uint8, c.rows*c.n*c.vs, false)
			}
			sortSimRun(t, SortKey{Type: c.kt, Descending: c.desc}, c.items, c.val, c.vs, keys, vals, c.rows, c.n, c.segTiles, c.lb, c.rank, c.lean, full)
		})
	}
	for _, c := range cases {
		run(c, false)
	}
	for _, c := range fulls {
		run(c, true)
	}
}

// All keys equal in some digits: those passes are skipped (the plan), and with every
// digit equal the last pass alone copies.
func TestRadixPassSkipSim(t *testing.T) {
	if testenv.Race {
		t.Skip("the full set runs without -race")
	}
	for i, allEqual := range []bool{false, true} {
		keys := make([]byte, 4*1500)
		for i := 0; i < 1500; i++ {
			v := uint32(0x12005600)
			if !allEqual {
				v |= uint32(i*7919) & 0xff00ff
			}
			binary.LittleEndian.PutUint32(keys[4*i:], v)
		}
		sortSimRun(t, SortKey{Type: dtype.Uint32}, 2, ValIndex, 4, keys, nil, 1, 1500, 0, 4, RankBallot, i == 0, i == 1)
	}
}

func TestRadixBlockSortSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 2))
	type tc struct {
		kt           dtype.DType
		desc         bool
		val          SortVal
		vs           int
		rows, rowLen int
		items        int
	}
	cases := []tc{
		{dtype.Float32, false, ValIndex, 0, 3, 500, 2},
		{dtype.Int8, true, ValNone, 0, 100, 5, 2},
		{dtype.Float64, false, ValPayload, 4, 300, 1, 1},
		{dtype.Uint16, false, ValIndex, 0, 2, 512, 2},
		{dtype.BFloat16, true, ValPayload, 8, 40, 30, 4},
	}
	if testenv.Race {
		cases = cases[:2]
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%v/%dx%d", c.kt, c.val, c.rows, c.rowLen), func(t *testing.T) {
			sp := &RadixBlockSort{Order: SortKey{Type: c.kt, Descending: c.desc}, Items: c.items, Val: c.val, ValSize: c.vs}
			n := c.rows * c.rowLen
			keys := sortSimKeys(rng, c.kt, n)
			var vals []byte
			if c.val == ValPayload {
				vals = spectest.RandBytes(rng, dtype.Uint8, n*c.vs, false)
			}
			outV := 8
			if c.val == ValPayload {
				outV = c.vs
			}
			rpb := sp.Tile() / c.rowLen
			grid := (c.rows + rpb - 1) / rpb
			args := []spectest.Arg{spectest.Buf(keys), spectest.Buf(make([]byte, n*c.kt.Size())), spectest.Buf(append(vals, 0)), spectest.Buf(make([]byte, n*outV+1)),
				spectest.U64(uint64(c.rows)), spectest.U64(uint64(c.rowLen)), spectest.U64(uint64(rpb))}
			s := spectest.Sim(t, sp, grid, SortBlock, 2, args)
			cp := spectest.CPU(t, sp, grid, SortBlock, args)
			for i := range s {
				if s[i] != nil && !bytes.Equal(s[i], cp[i]) {
					t.Fatalf("buffer %d differs at byte %d", i, firstDiff(s[i], cp[i]))
				}
			}
			checkSortResult(t, sp.Order, c.val, c.vs, keys, vals, c.rows, c.rowLen, cp[1], cp[3])
		})
	}
}

var _ = math.NaN

func TestSelectPtxas(t *testing.T) {
	var specs []spectest.Spec
	for _, kt := range sortKeyTypes {
		o := SortKey{Type: kt, Descending: kt == dtype.Float32}
		specs = append(specs, &SelectHist{Order: o, Items: 8}, &TopKCount{Order: o, Items: 16}, &TopKGather{Order: o, Items: 16},
			&SelectHist{Order: o, Items: 8, Vector: kt.Size() == 4, Fused: true}, &TopKCount{Order: o, Items: 16, Striped: true}, &TopKGather{Order: o, Items: 16, Skip: true},
			&TopKRankSort{Order: o}, &TopKRankSort{Order: o, Guard: true},
			&TopKCount{Order: o, Items: 16, Striped: true, Guard: true}, &TopKGather{Order: o, Items: 16, Skip: true, Guard: true},
			&UniqueFlags{Order: SortKey{Type: kt}}, &SearchSorted{Order: SortKey{Type: kt}, Levels: 12, Queries: 2},
			&SearchSorted{Order: SortKey{Type: kt}, Right: true, Levels: 11, Queries: 1},
			&SearchTreeSample{Order: SortKey{Type: kt}, Levels: 8}, &SearchTree{Order: SortKey{Type: kt}, Levels: 8, Shared: 4, Queries: 4,
				Vector: kt.Size() == 4 || kt.Size() == 8}, &SearchTree{Order: SortKey{Type: kt}, Right: true, Levels: 3, Shared: 1, Queries: 1},
			&SearchTree{Order: SortKey{Type: kt}, Levels: 8, Shared: 2, Queries: SearchTreeMaxQueries(kt.Size(), 512), Vector: kt.Size() == 4 || kt.Size() == 8, Block: 512},
			&SearchTree{Order: SortKey{Type: kt}, Levels: 8, Shared: SearchTreeMaxShared(kt.Size()), Queries: SearchTreeMaxQueries(kt.Size(), 1024), Vector: kt.Size() == 4 || kt.Size() == 8, Block: 1024},
			&SearchTree{Order: SortKey{Type: kt}, Levels: 8, Shared: SearchTreeMaxShared(kt.Size()), Queries: SearchTreeMaxQueries(kt.Size(), 1024), Vector: kt.Size() == 4 || kt.Size() == 8, Block: 1024,
				Swizzle: true},
			// The defaults where the keys take vector loads: pair loads, hints 2.
			&SearchTree{Order: SortKey{Type: kt}, Levels: 8, Shared: SearchTreeMaxShared(kt.Size()), Queries: SearchTreeMaxQueries(kt.Size(), 1024), Vector: kt.Size() == 4 || kt.Size() == 8, Block: 1024,
				Swizzle: true, Hints: 2, Pair: kt.Size() == 4 || kt.Size() == 8},
			&SearchTree{Order: SortKey{Type: kt}, Right: true, Levels: 8, Shared: 2, Queries: 2, Vector: kt.Size() == 4 || kt.Size() == 8, Block: 256,
				Pair: kt.Size() == 4 || kt.Size() == 8},
			&QuantileGather{In: kt, Out: dtype.Float64}, &QuantileGather{In: kt, Out: dtype.Float32, Median: true},
			&QuantileSelect{In: kt, Out: dtype.Float64}, &QuantileSelect{In: kt, Out: dtype.Float32, Median: true},
			&SelectHist{Order: SortKey{Type: kt}, Items: 8, Vector: kt.Size() == 4, Fused: true, KState: true},
			&QuantileFlags{Type: kt, Next: true})
		if kt.IsFloat() {
			specs = append(specs, &QuantileFlags{Type: kt, Counts: true}, &QuantileFlags{Type: kt, Counts: true, Next: true},
				&QuantileSelect{In: kt, Out: dtype.Float64, SkipNaN: true}, &QuantileSelect{In: kt, Out: dtype.Float32, Median: true, SkipNaN: true})
		}
	}
	for _, kt := range []dtype.DType{dtype.Float32, dtype.Int32, dtype.Uint32} {
		for p := range 3 {
			for _, v := range []bool{true, false} {
				specs = append(specs, &TopKRadix{Order: SortKey{Type: kt, Descending: kt == dtype.Float32}, Pass: p, Vector: v})
			}
		}
		o := SortKey{Type: kt}
		specs = append(specs, &SearchTable{Order: o, Bits: SearchTableMaxBits},
			&SearchTree{Order: o, Levels: 8, Shared: 5, Queries: 2, Vector: true, Block: 1024, Swizzle: true, TableBits: SearchTableMaxBits},
			&SearchTree{Order: o, Right: true, Levels: 8, Shared: 4, Queries: 4, Vector: true, Block: 512, TableBits: 10},
			&SearchTree{Order: o, Levels: 8, Shared: 4, Queries: SearchTreeTableQueries, Vector: true, Block: 256, Swizzle: true, TableBits: 12},
			&SearchTree{Order: o, Levels: 8, Queries: SearchTreeTableQueries, Vector: true, Block: 256, TableBits: 20, TableGlobal: true, Hints: 2},
			&SearchTree{Order: o, Levels: 8, Shared: 5, Queries: 2, Vector: true, Block: 1024, Swizzle: true, Hints: 2},
			&SearchTree{Order: o, Levels: 8, Shared: 5, Queries: 2, Vector: true, Block: 1024, Swizzle: true, Hints: 4},
			&SearchTree{Order: o, Right: true, Levels: 8, Queries: 2, Vector: true, Block: 256, TableBits: SearchTableGlobalMaxBits, TableGlobal: true},
			&SearchTable{Order: o, Bits: SearchTableGlobalMaxBits})
	}
	specs = append(specs, &SelectStep{Passes: 4}, &SelectStep{Passes: 8}, &UniqueCounts{}, &InverseScatter{}, &QuantileK{}, &QuantileK{Median: true},
		&QuantileGather{In: dtype.Float64, Out: dtype.Float16}, &QuantileGather{In: dtype.Int64, Out: dtype.BFloat16},
		&QuantileGather{In: dtype.Float32, Out: dtype.Float64, SkipNaN: true}, &QuantileGather{In: dtype.BFloat16, Out: dtype.Float32, Median: true, SkipNaN: true})
	for _, sp := range specs {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			src, _, err := sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			log, _ := scanPtxas(t, src)
			regs, smem := scanRegs(log)
			t.Logf("%s: %d registers, %d bytes smem", sp.Key(), regs, smem)
		})
	}
}

// simAgree runs sp on the simulator and the CPU and requires equal buffers.
func simAgree(t *testing.T, sp spectest.Spec, grid, block int, args []spectest.Arg) [][]byte {
	t.Helper()
	s := spectest.Sim(t, sp, grid, block, 4, args)
	c := spectest.CPU(t, sp, grid, block, args)
	for i := range s {
		if s[i] != nil && !bytes.Equal(s[i], c[i]) {
			t.Fatalf("%s: buffer %d differs (sim vs CPU) at byte %d", sp.Key(), i, firstDiff(s[i], c[i]))
		}
	}
	return c
}

// The radix select and the top-k gather on the simulator, pass by pass.
func TestTopKSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 3))
	for _, c := range []struct {
		kt            dtype.DType
		desc          bool
		rows, n, k    int
		items, chunkT int
	}{
		{dtype.Float32, true, 2, 1500, 37, 2, 1},
		{dtype.Int16, false, 1, 3000, 400, 4, 2},
		{dtype.Float64, true, 1, 900, 1, 1, 3},
		{dtype.Uint8, false, 2, 700, 300, 2, 1},
		{dtype.Float32, false, 1, 1001, 10, 2, 1},
	} {
		if testenv.Race && c.kt != dtype.Float32 {
			continue
		}
		for _, v2 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/%dx%d/k%d/v2=%v", c.kt, c.rows, c.n, c.k, v2), func(t *testing.T) {
				o := SortKey{Type: c.kt, Descending: c.desc}
				ks := c.kt.Size()
				keys := sortSimKeys(rng, c.kt, c.rows*c.n)
				P := o.Passes()
				hist := &SelectHist{Order: o, Items: 2}
				if v2 {
					hist.Fused = true
					if ks == 4 || ks == 8 {
						hist.Vector, hist.Items = true, 16/ks
					}
				}
				step := &SelectStep{Passes: P}
				tile := SortBlock * c.items
				chunk := c.chunkT * tile
				chunks := (c.n + chunk - 1) / chunk
				histB := make([]byte, c.rows*RadixDigits*4)
				if v2 {
					histB = make([]byte, c.rows*(RadixDigits+1)*4) // and the tickets
				}
				state := make([]byte, c.rows*16)
				for p := P - 1; p >= 0; p-- {
					args := []spectest.Arg{spectest.Buf(keys), spectest.Buf(histB), spectest.Buf(state),
						spectest.U64(uint64(c.n)), spectest.U64(uint64(chunk)), spectest.U64(uint64(chunks)), spectest.U64(uint64(p))}
					if v2 {
						args = append(args, spectest.U64(uint64(c.k)))
					}
					r := simAgree(t, hist, c.rows*chunks, SortBlock, args)
					if v2 {
						histB, state = r[1], r[2]
					} else {
						r = simAgree(t, step, c.rows, SortBlock, []spectest.Arg{spectest.Buf(r[1]), spectest.Buf(state), spectest.U64(uint64(c.k)), spectest.U64(uint64(p))})
						histB, state = r[0], r[1]
					}
					if !checkZero(histB) {
						t.Fatal("select step left a histogram")
					}
				}
				tiles := (c.n + tile - 1) / tile
				count := &TopKCount{Order: o, Items: c.items, Striped: v2}
				r := simAgree(t, count, c.rows*tiles, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(state), spectest.Buf(make([]byte, c.rows*tiles*16)),
					spectest.U64(uint64(c.n)), spectest.U64(uint64(tiles))})
				counts := cpuSliceI64(r[2])
				prefix := make([]int64, len(counts))
				for row := 0; row < c.rows; row++ {
					var l, e int64
					for ti := 0; ti < tiles; ti++ {
						j := 2 * (row*tiles + ti)
						prefix[j], prefix[j+1] = l, e
						l, e = l+counts[j], e+counts[j+1]
					}
				}
				pb := make([]byte, 8*len(prefix))
				for i, v := range prefix {
					binary.LittleEndian.PutUint64(pb[8*i:], uint64(v))
				}
				gather := &TopKGather{Order: o, Items: c.items, Skip: v2}
				countsArg := spectest.U64(0)
				if v2 {
					countsArg = spectest.Buf(r[2])
				}
				r = simAgree(t, gather, c.rows*tiles, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(state), spectest.Buf(pb),
					spectest.Buf(make([]byte, c.rows*c.k*ks)), spectest.Buf(make([]byte, c.rows*c.k*8)), spectest.U64(uint64(c.n)), spectest.U64(uint64(tiles)), spectest.U64(uint64(c.k)),
					countsArg})
				if c.k <= TopKRankMax {
					rs := simAgree(t, &TopKRankSort{Order: o}, c.rows, SortBlock, []spectest.Arg{spectest.Buf(r[3]), spectest.Buf(make([]byte, c.rows*c.k*ks)),
						spectest.Buf(r[4]), spectest.Buf(make([]byte, c.rows*c.k*8)), spectest.U64(uint64(c.rows)), spectest.U64(uint64(c.k))})
					// The stable sort's first k, in order.
					for row := 0; row < c.rows; row++ {
						perm := make([]int, c.n)
						ord := make([]uint64, c.n)
						for i := range perm {
							perm[i] = i
							ord[i] = o.Ordered(loadRaw(keys, ks, row*c.n+i))
						}
						stableSortPerm(perm, ord)
						got := cpuSliceI64(rs[3])[row*c.k : (row+1)*c.k]
						for j, p := range perm[:c.k] {
							if got[j] != int64(p) {
								t.Fatalf("row %d: rank-sorted %d is index %d, want %d", row, j, got[j], p)
							}
							if g, w := loadRaw(rs[1], ks, row*c.k+j), loadRaw(keys, ks, row*c.n+p); g != w {
								t.Fatalf("row %d: rank-sorted key %d is %#x, want %#x", row, j, g, w)
							}
						}
					}
				}
				// The gathered keys are the k smallest (as a multiset, with the smallest
				// indices among ties at the k-th): compare with a stable sort's first k.
				perm := make([]int, c.n)
				ord := make([]uint64, c.n)
				for row := 0; row < c.rows; row++ {
					for i := range perm {
						perm[i] = i
						ord[i] = o.Ordered(loadRaw(keys, ks, row*c.n+i))
					}
					stableSortPerm(perm, ord)
					want := map[int64]bool{}
					for _, p := range perm[:c.k] {
						want[int64(p)] = true
					}
					got := cpuSliceI64(r[4])[row*c.k : (row+1)*c.k]
					for j, g := range got {
						if !want[g] {
							t.Fatalf("row %d: candidate %d is index %d, not among the k smallest", row, j, g)
						}
						delete(want, g)
					}
				}
			})
		}
	}
}

func cpuSliceI64(b []byte) []int64 {
	out := make([]int64, len(b)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

func TestSortAuxSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 4))
	for _, kt := range []dtype.DType{dtype.Float32, dtype.Int8, dtype.Float64, dtype.Uint16, dtype.Float16} {
		if testenv.Race && kt != dtype.Float32 {
			continue
		}
		o := SortKey{Type: kt}
		ks := kt.Size()
		n := 700
		keys := sortSimKeys(rng, kt, n)
		// Sorted (CPU order) for the flags and searches.
		perm := make([]int, n)
		ord := make([]uint64, n)
		for i := range perm {
			perm[i], ord[i] = i, o.Ordered(loadRaw(keys, ks, i))
		}
		stableSortPerm(perm, ord)
		sorted := make([]byte, n*ks)
		for i, p := range perm {
			copy(sorted[i*ks:(i+1)*ks], keys[p*ks:(p+1)*ks])
		}
		simAgree(t, &UniqueFlags{Order: o}, 2, SortBlock, []spectest.Arg{spectest.Buf(sorted), spectest.Buf(make([]byte, n)), spectest.U64(uint64(n))})
		for _, right := range []bool{false, true} {
			for _, lv := range []int{1, 3, 12} {
				sp := &SearchSorted{Order: o, Right: right, Levels: lv, Queries: 1 + lv%4}
				simAgree(t, sp, 2, SearchSortedBlock, []spectest.Arg{spectest.Buf(sorted), spectest.U64(uint64(n)), spectest.Buf(keys), spectest.Buf(make([]byte, n*8)), spectest.U64(uint64(n))})
				// A short array: most levels past the end of the search.
				simAgree(t, sp, 1, SearchSortedBlock, []spectest.Arg{spectest.Buf(sorted[:3*ks]), spectest.U64(3), spectest.Buf(keys), spectest.Buf(make([]byte, n*8)), spectest.U64(uint64(n))})
			}
		}
		for _, out := range []dtype.DType{dtype.Float32, dtype.Float64} {
			if kt == dtype.Float16 {
				break // (the simulator has no half conversions)
			}
			qs := []float64{0, 0.3, 0.5, 0.99, 1}
			qb := make([]byte, 8*len(qs))
			for i, q := range qs {
				binary.LittleEndian.PutUint64(qb[8*i:], math.Float64bits(q))
			}
			rows, rl := 7, 100
			simAgree(t, &QuantileGather{In: kt, Out: out}, 1, SortBlock, []spectest.Arg{spectest.Buf(sorted), spectest.Buf(make([]byte, len(qs)*rows*out.Size())),
				spectest.Buf(qb), spectest.U64(uint64(rows)), spectest.U64(uint64(rl)), spectest.U64(uint64(len(qs)))})
			simAgree(t, &QuantileGather{In: kt, Out: out, Median: true}, 1, SortBlock, []spectest.Arg{spectest.Buf(sorted), spectest.Buf(make([]byte, rows*out.Size())),
				spectest.Buf(qb), spectest.U64(uint64(rows)), spectest.U64(uint64(rl)), spectest.U64(1)})
			if !kt.IsFloat() {
				continue
			}
			// SkipNaN: sorted rows with 0, 1, some, all but one and all elements NaN.
			var pool []uint64 // the keys that aren't NaN (NaN's ordered key is the largest)
			for i := range n {
				if raw := loadRaw(keys, ks, i); o.Ordered(raw) != ^uint64(0)>>(64-8*ks) {
					pool = append(pool, raw)
				}
			}
			withNaN := make([]byte, rows*rl*ks)
			for r, c := range []int{0, 1, 37, rl - 1, rl, rl / 2, 0} {
				row := make([]uint64, rl-c)
				for i := range row {
					row[i] = pool[rng.IntN(len(pool))]
				}
				slices.SortFunc(row, func(a, b uint64) int { return cmp.Compare(o.Ordered(a), o.Ordered(b)) })
				for i := range rl {
					bits := quantileNaN(kt) // (a NaN)
					if i < len(row) {
						bits = row[i]
					}
					storeRaw(withNaN, ks, r*rl+i, bits)
				}
			}
			simAgree(t, &QuantileGather{In: kt, Out: out, SkipNaN: true}, 1, SortBlock, []spectest.Arg{spectest.Buf(withNaN),
				spectest.Buf(make([]byte, len(qs)*rows*out.Size())), spectest.Buf(qb), spectest.U64(uint64(rows)), spectest.U64(uint64(rl)), spectest.U64(uint64(len(qs)))})
			simAgree(t, &QuantileGather{In: kt, Out: out, Median: true, SkipNaN: true}, 1, SortBlock, []spectest.Arg{spectest.Buf(withNaN),
				spectest.Buf(make([]byte, rows*out.Size())), spectest.Buf(qb), spectest.U64(uint64(rows)), spectest.U64(uint64(rl)), spectest.U64(1)})
		}
	}
	// Counts and the inverse.
	starts := []int64{0, 3, 4, 10}
	sb := make([]byte, 32)
	for i, v := range starts {
		binary.LittleEndian.PutUint64(sb[8*i:], uint64(v))
	}
	simAgree(t, &UniqueCounts{}, 1, SortBlock, []spectest.Arg{spectest.Buf(sb), spectest.Buf(make([]byte, 32)), spectest.U64(4), spectest.U64(12)})
	n := 500
	pb, cb := make([]byte, 8*n), make([]byte, 8*n)
	for i, p := range rng.Perm(n) {
		binary.LittleEndian.PutUint64(pb[8*i:], uint64(p))
		binary.LittleEndian.PutUint64(cb[8*i:], uint64(i/3+1))
	}
	simAgree(t, &InverseScatter{}, 1, SortBlock, []spectest.Arg{spectest.Buf(pb), spectest.Buf(cb), spectest.Buf(make([]byte, 8*n)), spectest.U64(uint64(n))})
}

// TestSortGridDep: the plan's and passes' GridDep kernels begin with griddepcontrol's two
// instructions, before any parameter load or memory access (their only difference
// from the kernels without it), and need compute capability 9.0.
func TestSortGridDep(t *testing.T) {
	for _, pair := range [][2]interface {
		PTX(major, minor int) (string, string, error)
		Key() string
	}{
		{&RadixPlan{Passes: 4}, &RadixPlan{Passes: 4, GridDep: true}},
		{&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 8, Lookback: 8, LeanLookback: true},
			&RadixPass{Order: SortKey{Type: dtype.Float32}, Items: 8, Lookback: 8, LeanLookback: true, GridDep: true}},
	} {
		plain, _, err := pair[0].PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		dep, _, err := pair[1].PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		if pair[0].Key() == pair[1].Key() {
			t.Fatalf("%s: the same key with and without GridDep", pair[0].Key())
		}
		gd := "\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n"
		if got := strings.Replace(dep, gd, "", 1); got != plain || strings.Contains(got, "griddepcontrol") {
			t.Fatalf("%s: GridDep's PTX is not the plain PTX and griddepcontrol's two lines", pair[1].Key())
		}
		i := strings.Index(dep, gd)
		if j := strings.Index(dep, "ld.param"); j < i {
			t.Fatalf("%s: a parameter load at %d before griddepcontrol at %d", pair[1].Key(), j, i)
		}
		if _, _, err := pair[1].PTX(8, 0); err == nil {
			t.Fatalf("%s: PTX for sm_80 without an error", pair[1].Key())
		}
	}
}

// TestRadixPassFullTilesPTX checks the shape of RadixPass.FullTiles's PTX, which the
// simulator's results can't tell from the guarded copy's: a branch on the tile's
// count equal to Tile() (block-uniform) to the guarded copy, and before it the full
// tiles' copy, whose key loads all take one predicate set from a register holding 0
// (which ptxas folds to true), while the guarded copy's take one each.
func TestRadixPassFullTilesPTX(t *testing.T) {
	for _, p := range []*RadixPass{
		{Order: SortKey{Type: dtype.Float32}, Items: 3, Val: ValNone, Lookback: 4, LoadFence: true, LeanLookback: true, MinBlocks: 3, FullTiles: true},
		{Order: SortKey{Type: dtype.Int64, Descending: true}, Items: 16, Val: ValIndex, ValSize: 4, Lookback: 2, LoadFence: true, LeanLookback: true, MinBlocks: 3, FullTiles: true},
		{Order: SortKey{Type: dtype.Uint8}, Items: 5, Val: ValPayload, ValSize: 2, Lookback: 1, Rank: RankAtomicOr, FullTiles: true},
	} {
		src, _, err := p.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(src, "\n")
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		// The branch: setp.eq.u32 %pA, %rC, <tile>; @!%pA bra L.
		br, partial := -1, ""
		for i := 0; i+1 < len(lines); i++ {
			var pa, c, pb, l string
			var tile int
			if n, _ := fmt.Sscanf(lines[i], "setp.eq.u32 %s %s %d;", &pa, &c, &tile); n != 3 || tile != p.Tile() {
				continue
			}
			if n, _ := fmt.Sscanf(lines[i+1], "@!%s bra %s", &pb, &l); n == 2 && pb+"," == pa {
				br, partial = i+1, strings.TrimSuffix(l, ";")
				break
			}
		}
		if br < 0 {
			t.Errorf("%s: no branch on the count equal to the tile, %d keys", p.Key(), p.Tile())
			continue
		}
		at := slices.Index(lines, partial+":")
		if at < 0 {
			t.Fatalf("%s: no label %s", p.Key(), partial)
		}
		// The key loads of each copy, and their predicates.
		keyLoad := "ld.global.nc" + memType(p.Order.Size()).String() + " "
		preds := func(from, to int) (n int, ps map[string]bool) {
			ps = map[string]bool{}
			for _, l := range lines[from:to] {
				if i := strings.Index(l, keyLoad); i > 0 && strings.HasPrefix(l, "@") {
					n++
					ps[strings.TrimSpace(l[1:i])] = true
				}
			}
			return n, ps
		}
		end := at + 1
		for end < len(lines) && !strings.HasPrefix(lines[end], "$L") {
			end++ // (the guarded copy: up to the join's label)
		}
		nf, pf := preds(br+1, at)
		ng, pg := preds(at+1, end)
		// The ballot ranking: eight ballots an item in the full copy, one more for
		// the items' validity in the guarded copy.
		if p.Rank == RankBallot {
			ballots := func(from, to int) (n int) {
				for _, l := range lines[from:to] {
					if strings.HasPrefix(l, "vote.sync.ballot") {
						n++
					}
				}
				return n
			}
			if bf, bg := ballots(br+1, at), ballots(at+1, end); bf != 8*p.Items || bg != 9*p.Items {
				t.Errorf("%s: %d ballots in the full copy, %d in the guarded one; want %d and %d", p.Key(), bf, bg, 8*p.Items, 9*p.Items)
			}
		}
		if nf != p.Items || len(pf) != 1 || ng != p.Items || len(pg) != p.Items {
			t.Errorf("%s: the full copy has %d key loads under %d predicates, the guarded one %d under %d; want %d under 1 and %d under %d",
				p.Key(), nf, len(pf), ng, len(pg), p.Items, p.Items, p.Items)
			continue
		}
		// The full copy's predicate: setp.eq.u32 P, %rZ, 0 after a mov of 0 to %rZ.
		var always string
		for k := range pf {
			always = k
		}
		found := false
		for i, l := range lines[br+1 : at] {
			var pa, z string
			if n, _ := fmt.Sscanf(l, "setp.eq.u32 %s %s 0;", &pa, &z); n == 2 && pa == always+"," {
				z = strings.TrimSuffix(z, ",")
				found = slices.ContainsFunc(lines[br+1:br+1+i], func(l string) bool {
					return strings.HasPrefix(l, "mov.") && strings.HasSuffix(l, " "+z+", 0;")
				})
			}
		}
		if !found {
			t.Errorf("%s: the full copy's key loads take %s, not a predicate of a register holding 0", p.Key(), always)
		}
	}
}

// RadixFused.Full: every key load (step 1's ld.global.nc, the passes' ld.global.cg)
// takes one predicate, which ptxas folds to true; without Full each item has its own.
// With the ballot ranking, Full leaves out the ballot of the items' validity (9 ballots
// an item ranked, 8 with Full; EarlyRank ranks in two places).
func TestRadixFusedFullPTX(t *testing.T) {
	for _, c := range []struct {
		full bool
		rank SortRank
	}{{false, RankAtomicOr}, {true, RankAtomicOr}, {false, RankBallot}, {true, RankBallot}} {
		p := &RadixFused{Order: SortKey{Type: dtype.Float32}, Items: 5, LoadFence: true, MinBlocks: 1, Split: true, EarlyRank: true, Rank: c.rank, Full: c.full}
		full := c.full
		src, _, err := p.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		if c.rank == RankBallot {
			per := map[bool]int{false: 9, true: 8}[full]
			if n := strings.Count(src, "vote.sync.ballot"); n != 2*per*p.Items {
				t.Errorf("%s: %d ballots, want %d", p.Key(), n, 2*per*p.Items)
			}
		}
		loads, preds := 0, map[string]bool{}
		for _, l := range strings.Split(src, "\n") {
			l = strings.TrimSpace(l)
			for _, op := range []string{"ld.global.nc.u32 ", "ld.global.cg.u32 "} {
				if i := strings.Index(l, op); i > 0 && strings.HasPrefix(l, "@") {
					loads++
					preds[strings.TrimSpace(l[1:i])] = true
				}
			}
		}
		if want := map[bool]int{false: 2 * p.Items, true: 1}[full]; loads < 2*p.Items || len(preds) != want {
			t.Errorf("%s: %d predicated key loads under %d predicates, want at least %d under %d", p.Key(), loads, len(preds), 2*p.Items, want)
		}
	}
}

// RadixHist's CPU kernel counts spans of a segment in parallel (histSpan keys each):
// rows of several segments of several spans, with and without the store mode, against
// a plain count of every pass's digits.
func TestRadixHistCPUSpans(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 11))
	for _, c := range []struct {
		kt                  dtype.DType
		rows, rowLen, chunk int
		segLen              int
		store               bool
	}{
		{dtype.Float32, 1, 5*histSpan + 17, 4096, 5*histSpan + 17, false},
		{dtype.Int64, 2, 3*histSpan + 5, 4096, 2 * histSpan, false},
		{dtype.Uint16, 3, 2*histSpan + 1, 2 * histSpan, 2 * histSpan, true},
	} {
		order := SortKey{Type: c.kt}
		P, ks := order.Passes(), order.Size()
		keys := sortSimKeys(rng, c.kt, c.rows*c.rowLen)
		chunks := (c.rowLen + c.chunk - 1) / c.chunk
		segs := (c.rowLen + c.segLen - 1) / c.segLen
		store := uint64(0)
		if c.store {
			store = 1
		}
		hist := make([]byte, c.rows*segs*P*RadixDigits*4)
		for i := range hist {
			hist[i] = byte(i) // (the store mode overwrites)
		}
		if !c.store {
			clear(hist)
		}
		h := &RadixHist{Order: order, Items: 2, Lean: true}
		out := spectest.CPU(t, h, c.rows*chunks, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(hist), spectest.U64(uint64(c.rowLen)),
			spectest.U64(uint64(c.chunk)), spectest.U64(uint64(chunks)), spectest.U64(uint64(c.segLen)), spectest.U64(uint64(segs)), spectest.U64(store)})
		want := make([]uint32, len(hist)/4)
		for r := 0; r < c.rows; r++ {
			for i := 0; i < c.rowLen; i++ {
				s := r*segs + i/c.segLen
				o := order.Ordered(loadRaw(keys, ks, r*c.rowLen+i))
				for p := 0; p < P; p++ {
					want[(s*P+p)*RadixDigits+int(o>>(8*p)&0xff)]++
				}
			}
		}
		for j, w := range want {
			if got := binary.LittleEndian.Uint32(out[1][4*j:]); got != w {
				t.Fatalf("%v %dx%d, segments of %d: count %d (segment %d, pass %d, digit %d) is %d, want %d", c.kt, c.rows, c.rowLen, c.segLen,
					j, j/(P*RadixDigits), j/RadixDigits%P, j%RadixDigits, got, w)
			}
		}
	}
}
