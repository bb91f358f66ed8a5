package gpu

import (
	"context"
)

// ReduceCounters returns a copy of s's ticket counters for fused reductions (nil if s
// has none yet), after the stream's work so far.
func ReduceCounters(s *Stream) ([]uint32, error) {
	m := s.redCnt.Load()
	if m == nil {
		return nil, nil
	}
	if err := s.Synchronize(context.Background()); err != nil {
		return nil, err
	}
	raw := make([]byte, (*m).Size())
	if err := s.be.CopyToHost(raw, *m, 0); err != nil {
		return nil, err
	}
	if err := s.be.Synchronize(); err != nil {
		return nil, err
	}
	out := make([]uint32, len(raw)/4)
	for i := range out {
		out[i] = uint32(raw[4*i]) | uint32(raw[4*i+1])<<8 | uint32(raw[4*i+2])<<16 | uint32(raw[4*i+3])<<24
	}
	return out, nil
}

// ReducePlans returns the numbers of cached reduction plans with two passes and with
// the fused one.
func ReducePlans() (split, fused int) {
	redPlans.Range(func(_, v any) bool {
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
