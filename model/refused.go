package model

import (
	"cmp"
	"slices"
)

// A holder the resource refuses makes no progress. With fencing (History.
// Fenced), a hold whose every access to the resource was refused (its
// token was stale) did none of the work the lock is for: the waiters it
// kept waiting were kept waiting for nothing. So liveness, and the
// no-holder windows the metrics measure, count only the holds the
// resource let in: a lock whose tokens go backwards, and whose every later
// holder the resource turns away, starves its clients as surely as one
// that grants no one. A hold that made no access at all (its belief ended
// first) still counts: the lock was free for it to use.

// progressHolds is byTime without the holds the resource refused every
// access of, in buf's memory; byTime itself when the history is not fenced
// or refused none. refused counts the holds left out.
func progressHolds(buf []Hold, h History, byTime []Hold) (progress []Hold, refused int) {
	if !h.Fenced {
		return byTime, 0
	}
	// Each access belongs to its client's last grant before it (a paused
	// holder's late write comes after its belief ended, but it is that
	// hold's write).
	type tally struct{ accepted, refused int }
	bySeq := make([]int, len(byTime)) // indexes of byTime, by StartSeq
	for i := range bySeq {
		bySeq[i] = i
	}
	slices.SortFunc(bySeq, func(a, b int) int { return cmp.Compare(byTime[a].StartSeq, byTime[b].StartSeq) })
	tallies := make([]tally, len(byTime))
	last := make([]uint64, len(h.Clients)) // per client: StartSeq of its last grant; 0: none
	for _, e := range eventsInOrder(h) {
		switch {
		case e.Client < 0 || e.Client >= len(last):
		case e.Kind == AcquireReturn && e.Granted:
			last[e.Client] = e.Seq
		case (e.Kind == ResourceRead || e.Kind == ResourceWrite) && last[e.Client] != 0:
			j, found := slices.BinarySearchFunc(bySeq, last[e.Client], func(i int, seq uint64) int { return cmp.Compare(byTime[i].StartSeq, seq) })
			if !found {
				continue
			}
			if t := &tallies[bySeq[j]]; e.Accepted {
				t.accepted++
			} else {
				t.refused++
			}
		}
	}
	isRefused := func(i int) bool { return tallies[i].refused > 0 && tallies[i].accepted == 0 }
	for i := range byTime {
		if isRefused(i) {
			refused++
		}
	}
	if refused == 0 {
		return byTime, 0
	}
	progress = buf[:0]
	for i, hd := range byTime {
		if !isRefused(i) {
			progress = append(progress, hd)
		}
	}
	return progress, refused
}
