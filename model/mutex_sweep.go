package model

import (
	"cmp"
	"fmt"
	"slices"
)

// FirstOverlap finds the first instant at which two clients both believed
// they held the lock, by a sweep over the hold intervals: O(n log n), O(n)
// when the holds are already in start order (Holds returns them so).
//
// Every overlap begins at some hold's start, so visiting holds in start order
// while remembering the earlier hold that ends last finds the earliest one:
// the first start that comes before that end. The Violation names the earlier
// holder first and the newcomer second; Time is the newcomer's grant.
func FirstOverlap(h History) (Violation, bool) { return firstOverlap(h, Holds(h)) }

// firstOverlap is FirstOverlap over holds already derived from h (it may
// reorder them).
func firstOverlap(h History, holds []Hold) (Violation, bool) {
	v, n := overlaps(h, holds, nil)
	return v, n > 0
}

// overlaps is the first overlap, as firstOverlap finds it, and n, how many
// holds began while an earlier one was still held (each one an overlap).
// later, when not nil, gets every overlap after the first.
func overlaps(h History, holds []Hold, later *[]Violation) (first Violation, n int) {
	slices.SortStableFunc(holds, func(a, b Hold) int { return cmp.Compare(a.StartSeq, b.StartSeq) })
	longest := -1 // index of the earlier hold with the latest EndSeq
	for i, cur := range holds {
		if longest >= 0 && holds[longest].EndSeq > cur.StartSeq {
			switch {
			case n == 0:
				first = overlapViolation(h, holds[longest], cur)
			case later != nil:
				*later = append(*later, overlapViolation(h, holds[longest], cur))
			}
			n++
		}
		if longest < 0 || cur.EndSeq > holds[longest].EndSeq {
			longest = i
		}
	}
	return first, n
}

func overlapViolation(h History, earlier, later Hold) Violation {
	a, b := clientName(h, earlier.Client), clientName(h, later.Client)
	return Violation{
		Kind:    MutualExclusion,
		Time:    later.StartTime,
		Clients: []int{earlier.Client, later.Client},
		Story: fmt.Sprintf("%s and %s both held the lock from %s (%s since %s)",
			a, b, Seconds(later.StartTime), a, Seconds(earlier.StartTime)),
	}
}
