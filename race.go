package gpu

// raceState is the race checker's state (filled in below).
type raceState struct{}

func (r *raceState) checkUntracked(s *Stream, uses []use) {}
func (r *raceState) recordUntracked(s *Stream, u use)     {}
