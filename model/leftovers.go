package model

import "fmt"

// checkLeftovers finds the first lock item that stayed on a node, used by
// no one, for longer than bound (History.LongItems). An item is in use
// from its write until the acquire that wrote it returned, or, if that
// acquire was granted, until the hold it granted ended: a client that
// keeps a lock keeps its items. After that it is left behind, and it
// blocks others until it is removed or expires. attempts and holds are
// what Check derived from h.
func checkLeftovers(h History, attempts []Attempt, holds []Hold, bound int64) (Violation, bool) {
	v, n := leftovers(h, attempts, holds, bound, nil)
	return v, n > 0
}

// leftovers is the item checkLeftovers finds, and n, how many items stayed
// unused longer than bound; later, when not nil, gets every one of them but
// that one.
func leftovers(h History, attempts []Attempt, holds []Hold, bound int64, later *[]Violation) (first Violation, n int) {
	for _, it := range h.LongItems {
		from := leftSince(it, attempts, holds)
		if it.To-from <= bound {
			continue
		}
		n++
		if n > 1 && from+bound >= first.End {
			if later != nil {
				*later = append(*later, leftoverViolation(h, it, from, bound))
			}
			continue
		}
		if n > 1 && later != nil {
			*later = append(*later, first) // it gives way to one that passed the bound earlier
		}
		first = leftoverViolation(h, it, from, bound)
	}
	return first, n
}

func leftoverViolation(h History, it ItemLife, from, bound int64) Violation {
	until := "until the run ended"
	if it.To < h.End {
		until = "until " + Seconds(it.To)
	}
	return Violation{Kind: Leftover, Time: from, End: from + bound, Clients: []int{it.Client},
		Story: fmt.Sprintf("a lock item of %s (written by %s at %s) stayed on %s unused from %s for %s, %s (bound %s)",
			it.Owner, clientName(h, it.Client), Seconds(it.From), it.Node, Seconds(from), Seconds(it.To-from), until, Seconds(bound))}
}

// leftSince is when item it stopped being used: the end of the acquire
// that wrote it, or of the hold that acquire granted.
func leftSince(it ItemLife, attempts []Attempt, holds []Hold) int64 {
	for _, a := range attempts {
		if a.Client != it.Client || a.CallTime > it.From || a.ReturnTime < it.From {
			continue
		}
		if a.Outcome == Granted {
			for _, hd := range holds {
				if hd.StartSeq == a.ReturnSeq {
					return max(it.From, hd.EndTime)
				}
			}
		}
		return max(it.From, a.ReturnTime)
	}
	for _, hd := range holds { // written while holding
		if hd.Client == it.Client && hd.StartTime <= it.From && it.From <= hd.EndTime {
			return hd.EndTime
		}
	}
	return it.From
}
