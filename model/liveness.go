package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// NoHolderWindow is a stretch of true time during which nobody believed they
// held the lock while some client was trying to get it.
type NoHolderWindow struct {
	Start, End int64
	// Clients are the waiting clients, ascending.
	Clients []int
	// Granted says the window ended with a grant (false: the run ended, or
	// every waiter stopped).
	Granted bool
}

// NoHolderWindows lists the windows of the whole run, in time order.
//
// A client counts as waiting in a gap between holds from the first of its
// acquire attempts that is in flight or called during the gap (not from the
// start of the gap: a client that failed just before the lock was freed and
// is backing off has not yet been refused anything), until the gap ends or
// the client stops. Failed attempts and the backoff between them keep it
// waiting. A gap with no attempt in it is no window at all.
func NoHolderWindows(h History) []NoHolderWindow {
	return new(Checker).noHolderWindows(h, Attempts(h), holdsByStartTime(nil, Holds(h)))
}

// noHolderWindows is NoHolderWindows over attempts and holds already derived
// from h (holds in start-time order). The windows live in c's memory.
func (c *Checker) noHolderWindows(h History, all []Attempt, byTime []Hold) []NoHolderWindow {
	attempts := c.attemptsByClient(h, all)
	stops := c.stopTimes(h)
	c.gaps = gapsBetweenHolds(c.gaps[:0], h, byTime)
	c.windows, c.windowClients = c.windows[:0], c.windowClients[:0]
	c.next = slices.Grow(c.next[:0], len(attempts))[:len(attempts)]
	next := c.next // per client: first attempt not yet behind us
	clear(next)
	for _, gap := range c.gaps {
		waits := c.waits[:0]
		for client, as := range attempts {
			i := &next[client]
			for *i < len(as) && as[*i].ReturnTime <= gap.start && as[*i].CallTime < gap.start {
				*i++ // returned before the gap opened
			}
			if *i == len(as) || as[*i].CallTime > gap.end {
				continue
			}
			from, to := max(as[*i].CallTime, gap.start), gap.end
			if stop, ok := stops[client]; ok && stop >= from && stop < to {
				to = stop
			}
			waits = append(waits, clientWait{client, from, to})
		}
		c.waits = waits
		c.windows, c.windowClients = mergeWaits(c.windows, c.windowClients, waits, gap)
	}
	return c.windows
}

type clientWait struct {
	client   int
	from, to int64
}

// mergeWaits joins overlapping client waits of one gap into windows, appended
// to out. The windows' Clients are cut from clients, which is returned grown.
func mergeWaits(out []NoHolderWindow, clients []int, waits []clientWait, gap timeGap) ([]NoHolderWindow, []int) {
	slices.SortStableFunc(waits, func(a, b clientWait) int { return cmp.Compare(a.from, b.from) })
	for i := 0; i < len(waits); {
		w := NoHolderWindow{Start: waits[i].from, End: waits[i].to}
		j := i + 1 // waits[i:j] make the window
		for ; j < len(waits) && waits[j].from <= w.End; j++ {
			w.End = max(w.End, waits[j].to)
		}
		first := len(clients)
		for _, x := range waits[i:j] {
			clients = append(clients, x.client)
		}
		w.Clients = clients[first:len(clients):len(clients)]
		slices.Sort(w.Clients)
		w.Granted = gap.granted && w.End == gap.end
		out = append(out, w)
		i = j
	}
	return out, clients
}

type timeGap struct {
	start, end int64
	granted    bool // a hold starts at end
}

// gapsBetweenHolds appends to gaps the complement in [0, End] of the union of
// all holds, in true time.
func gapsBetweenHolds(gaps []timeGap, h History, holds []Hold) []timeGap {
	covered := int64(0) // everything before this is held or already a gap
	for _, hd := range holds {
		if hd.StartTime > covered {
			gaps = append(gaps, timeGap{covered, hd.StartTime, true})
		}
		covered = max(covered, hd.EndTime)
	}
	if h.End > covered {
		gaps = append(gaps, timeGap{covered, h.End, false})
	}
	return gaps
}

// holdsByStartTime is a copy of holds, in buf's memory, sorted by start time
// (gaps and availability are measured in true time).
func holdsByStartTime(buf, holds []Hold) []Hold {
	byTime := append(buf[:0], holds...)
	slices.SortStableFunc(byTime, func(a, b Hold) int { return cmp.Compare(a.StartTime, b.StartTime) })
	return byTime
}

// attemptsByClient groups the attempts per client index, each in call order,
// in c's memory.
func (c *Checker) attemptsByClient(h History, all []Attempt) [][]Attempt {
	n := len(h.Clients)
	for _, a := range all {
		n = max(n, a.Client+1)
	}
	// One backing array, cut per client: no slice grows.
	counts := slices.Grow(c.counts[:0], n)[:n]
	c.counts = counts
	clear(counts)
	for _, a := range all {
		if a.Client >= 0 {
			counts[a.Client]++
		}
	}
	backing := slices.Grow(c.byClientBacking[:0], len(all))
	c.byClientBacking = backing
	out := slices.Grow(c.byClient[:0], n)[:n]
	c.byClient = out
	for client := range out {
		out[client] = backing[len(backing) : len(backing) : len(backing)+counts[client]]
		backing = backing[:len(backing)+counts[client]]
	}
	for _, a := range all {
		if a.Client >= 0 {
			out[a.Client] = append(out[a.Client], a)
		}
	}
	return out
}

// stopTimes maps each client that stopped to the true time it first did, in
// c's memory.
func (c *Checker) stopTimes(h History) map[int]int64 {
	if c.stops == nil {
		c.stops = map[int]int64{}
	}
	stops := c.stops
	clear(stops)
	events := eventsInOrder(h)
	for i := range events {
		e := &events[i] // by pointer: an Event is over 100 bytes
		if _, seen := stops[e.Client]; e.Kind == ClientStop && !seen {
			stops[e.Client] = e.Time
		}
	}
	return stops
}

// CheckLiveness finds the first window that, judged from the moment every
// fault had healed, lasted longer than bound: waiting clients with nobody
// holding the lock. A window that began before History.Healed counts only
// from Healed on; so faults never excuse a lock that stays stuck after they
// heal, yet time spent under faults never counts against the algorithm.
func CheckLiveness(h History, bound int64) (Violation, bool) {
	return checkLiveness(h, NoHolderWindows(h), bound)
}

func checkLiveness(h History, windows []NoHolderWindow, bound int64) (Violation, bool) {
	for _, w := range windows {
		from := max(w.Start, h.Healed)
		if w.End-from <= bound {
			continue
		}
		names := make([]string, len(w.Clients))
		for i, c := range w.Clients {
			names[i] = clientName(h, c)
		}
		how := "until someone got it"
		if !w.Granted {
			how = "until the run ended"
		}
		return Violation{
			Kind:    Liveness,
			Time:    from,
			Clients: slices.Clone(w.Clients), // w may live in a Checker's memory
			Story: fmt.Sprintf("%s waited %s from %s with nobody holding the lock, %s (bound %s)",
				strings.Join(names, ", "), Seconds(w.End-from), Seconds(from), how, Seconds(bound)),
		}, true
	}
	return Violation{}, false
}

// LongestNoHolder is the longest NoHolderWindow of the whole run, ns.
func LongestNoHolder(h History) int64 { return longestNoHolder(NoHolderWindows(h)) }

func longestNoHolder(windows []NoHolderWindow) int64 {
	longest := int64(0)
	for _, w := range windows {
		longest = max(longest, w.End-w.Start)
	}
	return longest
}
