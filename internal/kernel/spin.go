package kernel

import "github.com/go-gpu/gpu/ptx"

// Bounded waits. The look-backs (scans, compactions, the sort's passes) wait for tiles
// whose blocks took their tile numbers earlier from the launch's counter, so those
// blocks are running (or done) and publish within microseconds: a correct kernel never
// waits long. A wait that outlasts spinLimitNs is a bug (a status not zero at the
// launch, a tile that never publishes): the kernel then executes trap, so that the launch
// fails (a CUDA launch error, reported by the next wait) instead of spinning forever and
// hanging every later wait of the process.

// spinLimitNs is the longest a block waits in a look-back, from its start, before it
// traps: 20 s of %globaltimer (a variable for the tests, which make it short; the
// generated PTX holds its value).
var spinLimitNs uint64 = 20_000_000_000

// spinStart stores the block's start time (%globaltimer, ns) at the shared u64 sym;
// a barrier must follow before any thread's spinPause.
func spinStart(f *ptx.Func, sym string) {
	t := f.Special(ptx.GlobalTimer)
	f.St(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(ptx.Sym(sym), 0), t)
}

// spinPause emits one pause of a look-back's wait, where wait holds (every thread when
// wait is the zero Reg): a nanosleep, then a trap once the block has run spinLimitNs
// since spinStart stored its start at the shared u64 sym. Its registers live only here.
func spinPause(f *ptx.Func, wait ptx.Reg, sym string) {
	skip := f.NewLabel()
	if wait.Valid() {
		f.AtNot(wait).Bra(skip)
	}
	f.Op("nanosleep.u32", ptx.Int(32))
	now := f.Special(ptx.GlobalTimer)
	t0 := f.Reg(ptx.U64)
	f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(ptx.Sym(sym), 0), t0)
	f.Sub(now, now, t0)
	f.At(f.Setp(ptx.Gt, now, ptx.Uint(spinLimitNs))).Op("trap")
	f.Place(skip)
}
