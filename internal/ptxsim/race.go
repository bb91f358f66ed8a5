package ptxsim

// The shared-memory hazard check (what compute-sanitizer's racecheck reports): two
// accesses to one byte by different threads conflict when one of them is a plain write
// and no barrier separates them: the same block barrier interval (epoch), and for
// threads of one warp also the same bar.warp.sync interval. Atomics don't conflict
// with atomics, nor with strong reads (.volatile, .relaxed: PTX's memory model makes an
// atomic and a strong read morally strong, not a data race); a plain write conflicts
// with either. The shadow keeps, per byte, the last write and the reads of the current
// interval (whether all of them were strong).

// access is the shadow of one shared byte. Epochs are stored plus one, so that the
// zero value means none.
type access struct {
	wEpoch, wTid, wWep int32 // the last write: epoch+1, thread, its warp epoch
	wAtomic            bool
	rEpoch, rTid       int32 // the reads: epoch+1, reader (-1: several)
	rWarp, rWep        int32 // the readers' warp (-1: several), their largest warp epoch
	rStrong            bool  // every read of the interval was strong
}

type accKind uint8

const (
	accRead accKind = iota
	accWrite
	accAtomic     // an atomic or strong access: conflicts with plain accesses only
	accStrongRead // a strong read (.volatile, .relaxed): a read that atomics don't conflict with
)

// ordered reports whether an access by thread tid in (epoch+1) e and warp epoch wep is
// separated from t's access now by a barrier (or is t's own).
func (t *thread) ordered(e, tid, wep int32) bool {
	if e != t.epoch+1 || tid == int32(t.lin) {
		return true
	}
	return tid/32 == int32(t.lin/32) && wep != t.wepoch
}

// shared returns the n shared bytes at addr for an access of the given kind, after
// the bounds, alignment and hazard checks.
func (t *thread) shared(addr uint64, n int, kind accKind) []byte {
	b := t.blk
	if b == nil {
		faultf("shared memory access outside a block (Run runs threads alone)")
	}
	if addr+uint64(n) > uint64(len(b.smem)) || addr%uint64(min(n, 16)) != 0 {
		faultf("shared access of %d bytes at %#x (%d bytes of shared memory)", n, addr, len(b.smem))
	}
	b.hw = max(b.hw, int(addr)+n)
	tid, e := int32(t.lin), t.epoch+1
	for i := int(addr); i < int(addr)+n; i++ {
		s := &b.shadow[i]
		if s.wEpoch != 0 && !((kind == accAtomic || kind == accStrongRead) && s.wAtomic) && !t.ordered(s.wEpoch, s.wTid, s.wWep) {
			what := "read after write"
			if kind != accRead && kind != accStrongRead {
				what = "write after write"
			}
			faultf("shared memory %s hazard at byte %d with thread %d", what, i, s.wTid)
		}
		if (kind == accWrite || kind == accAtomic && !s.rStrong) && s.rEpoch == e {
			conflict := false
			switch {
			case s.rTid == tid:
			case s.rTid >= 0:
				conflict = !t.ordered(s.rEpoch, s.rTid, s.rWep)
			default: // several readers: unordered unless all of t's warp before a bar.warp.sync
				conflict = s.rWarp != tid/32 || s.rWep == t.wepoch
			}
			if conflict {
				faultf("shared memory write after read hazard at byte %d (read by thread %d, -1: several)", i, s.rTid)
			}
		}
		switch {
		case kind == accWrite || kind == accAtomic:
			s.wEpoch, s.wTid, s.wWep, s.wAtomic = e, tid, t.wepoch, kind == accAtomic
		case s.rEpoch != e:
			s.rEpoch, s.rTid, s.rWarp, s.rWep, s.rStrong = e, tid, tid/32, t.wepoch, kind == accStrongRead
		default:
			s.rStrong = s.rStrong && kind == accStrongRead
			if s.rTid != tid {
				s.rTid = -1
				if s.rWarp != tid/32 {
					s.rWarp = -1
				}
				s.rWep = max(s.rWep, t.wepoch)
			}
		}
	}
	return b.smem[addr : addr+uint64(n)]
}
