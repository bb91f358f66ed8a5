package gpu

import (
	"context"

	"github.com/go-gpu/gpu/backend"
)

// ReduceCounters returns a copy of s's pooled ticket counters for fused reductions
// (nil if s has none yet), after the stream's work so far.
func ReduceCounters(s *Stream) ([]uint32, error) {
	s.scratchPool.mu.Lock()
	ms := append([]backend.Mem(nil), s.scratchPool.free[scratchTickets]...)
	s.scratchPool.mu.Unlock()
	if len(ms) == 0 {
		return nil, nil
	}
	if err := s.Synchronize(context.Background()); err != nil {
		return nil, err
	}
	var out []uint32
	for _, m := range ms {
		raw := make([]byte, m.Size())
		if err := s.be.CopyToHost(raw, m, 0); err != nil {
			return nil, err
		}
		if err := s.be.Synchronize(); err != nil {
			return nil, err
		}
		for i := 0; i+4 <= len(raw); i += 4 {
			out = append(out, uint32(raw[i])|uint32(raw[i+1])<<8|uint32(raw[i+2])<<16|uint32(raw[i+3])<<24)
		}
	}
	return out, nil
}

// ReducePlans returns the numbers of cached reduction plans made with Tuning.ReduceFuse
// on that kept two passes and that fused them.
func ReducePlans() (split, fused int) {
	redPlans.Range(func(k, v any) bool {
		if !k.(redPlanKey).fuse {
			return true
		}
		p := v.(*redPlan)
		if p.fused != nil {
			fused++
		} else if len(p.passes) == 2 {
			split++
		}
		return true
	})
	return
}

// SetReducePartialsScratchMax sets the most bytes of a reduction's partial results that
// come from the stream's scratch (larger ones are a buffer's), and returns a function
// restoring the previous value; not safe while reductions run.
func SetReducePartialsScratchMax(n int64) (restore func()) {
	old := redScratchMax
	redScratchMax = n
	return func() { redScratchMax = old }
}
