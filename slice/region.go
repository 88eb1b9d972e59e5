package slice

import "fmt"

// Bound is one end of a region: an event sequence number, or the K-th
// marker (MGTRACE_MARK or MGTRACE_CPOINT) of a name. The zero Bound is
// open (the run's start or end).
type Bound struct {
	Set    bool
	Seq    uint64
	Marker string
	K      int // from 1
}

func (b Bound) String() string {
	if b.Marker != "" {
		return fmt.Sprintf("%s#%d", b.Marker, b.K)
	}
	return fmt.Sprint(b.Seq)
}

// marker finds the K-th marker named b.Marker.
func (r *Run) marker(b Bound) (Marker, error) {
	n := 0
	for _, m := range r.Markers {
		if m.Name == b.Marker {
			if n++; n == b.K {
				return m, nil
			}
		}
	}
	if n == 0 {
		return Marker{}, fmt.Errorf("--region: no marker named %q in the trace", b.Marker)
	}
	return Marker{}, fmt.Errorf("--region: marker %q appears %d times, not %d", b.Marker, n, b.K)
}

// RegionStart returns the first instance at or after the bound.
func (r *Run) RegionStart(b Bound) (uint32, error) {
	if !b.Set {
		return 0, nil
	}
	if b.Marker != "" {
		m, err := r.marker(b)
		if err != nil {
			return 0, err
		}
		return m.Inst, nil
	}
	// Not a binary search: a system call that blocked while other threads
	// ran is an instance where it completed, after instances of later
	// events, so the events are not quite in order.
	for i, s := range r.seq {
		if s >= b.Seq {
			return uint32(i), nil
		}
	}
	return uint32(len(r.seq)), nil
}

// CheckRegionEnd checks that the criterion lies before the region's end.
func (r *Run) CheckRegionEnd(p Point, b Bound) error {
	if !b.Set || p.Last < 0 {
		return nil
	}
	end := b.Seq
	if b.Marker != "" {
		m, err := r.marker(b)
		if err != nil {
			return err
		}
		if uint32(p.Last) >= m.Inst {
			return fmt.Errorf("criterion %s comes after the region's end (marker %s)", p.Label, b)
		}
		return nil
	}
	if r.seq[p.Last] > end {
		return fmt.Errorf("criterion %s (event %d) comes after the region's end (event %d)", p.Label, r.seq[p.Last], end)
	}
	return nil
}
