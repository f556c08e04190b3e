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

// keepProgress sets c.progress to c.byTime without the holds the resource
// refused every access of, and c.refusedHold to which those are (by index
// into c.byTime), all in c's memory: c.progress is c.byTime itself when the
// history is not fenced or none was refused, never a slice of its memory
// otherwise (a later check filling it would overwrite the holds).
func (c *Checker) keepProgress(h History) {
	byTime := c.byTime
	c.progress, c.refused = byTime, 0
	c.refusedHold = slices.Grow(c.refusedHold[:0], len(byTime))[:len(byTime)]
	clear(c.refusedHold)
	if !h.Fenced {
		return
	}
	// Each access belongs to its client's last grant before it (a paused
	// holder's late write comes after its belief ended, but it is that
	// hold's write).
	c.bySeq = slices.Grow(c.bySeq[:0], len(byTime))[:len(byTime)] // indexes of byTime, by StartSeq
	for i := range c.bySeq {
		c.bySeq[i] = i
	}
	slices.SortFunc(c.bySeq, func(a, b int) int { return cmp.Compare(byTime[a].StartSeq, byTime[b].StartSeq) })
	c.tallies = slices.Grow(c.tallies[:0], len(byTime))[:len(byTime)]
	clear(c.tallies)
	c.lastGrant = slices.Grow(c.lastGrant[:0], len(h.Clients))[:len(h.Clients)] // per client: StartSeq of its last grant; 0: none
	clear(c.lastGrant)
	for _, e := range eventsInOrder(h) {
		switch {
		case e.Client < 0 || e.Client >= len(c.lastGrant):
		case e.Kind == AcquireReturn && e.Granted:
			c.lastGrant[e.Client] = e.Seq
		case (e.Kind == ResourceRead || e.Kind == ResourceWrite) && c.lastGrant[e.Client] != 0:
			j, found := slices.BinarySearchFunc(c.bySeq, c.lastGrant[e.Client], func(i int, seq uint64) int { return cmp.Compare(byTime[i].StartSeq, seq) })
			if !found {
				continue
			}
			if t := &c.tallies[c.bySeq[j]]; e.Accepted {
				t.accepted++
			} else {
				t.refused++
			}
		}
	}
	for i, t := range c.tallies {
		if t.refused > 0 && t.accepted == 0 {
			c.refusedHold[i] = true
			c.refused++
		}
	}
	if c.refused == 0 {
		return
	}
	c.progressBuf = c.progressBuf[:0]
	for i, hd := range byTime {
		if !c.refusedHold[i] {
			c.progressBuf = append(c.progressBuf, hd)
		}
	}
	c.progress = c.progressBuf
}

// accessTally counts one hold's resource accesses.
type accessTally struct{ accepted, refused int }

// refusedIn reports whether a hold the resource refused started in window w.
func (c *Checker) refusedIn(w NoHolderWindow) bool {
	for i, hd := range c.byTime {
		if c.refusedHold[i] && hd.StartTime >= w.Start && hd.StartTime <= w.End {
			return true
		}
	}
	return false
}
