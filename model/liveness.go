package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
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
	// Waits are the clients' waits the window is made of: each from its
	// first attempt in the gap (or the gap's start) to the gap's end or
	// its stop.
	Waits []ClientWait
}

// ClientWait is one client waiting, [From, To).
type ClientWait struct {
	Client   int
	From, To int64
}

// NoHolderWindows lists the windows of the whole run, in time order.
//
// A client counts as waiting in a gap between holds from the first of its
// acquire attempts that is in flight or called during the gap (not from the
// start of the gap: a client that failed just before the lock was freed and
// is backing off has not yet been refused anything), until the gap ends or
// the client stops. Failed attempts and the backoff between them keep it
// waiting. A gap with no attempt in it is no window at all.
//
// A hold the resource refused every access of (a stale fencing token) is
// no hold here: see Checker.keepProgress.
func NoHolderWindows(h History) []NoHolderWindow {
	c := &Checker{byTime: holdsByStartTime(nil, Holds(h))}
	c.keepProgress(h)
	return c.noHolderWindows(h, Attempts(h), c.progress)
}

// noHolderWindows is NoHolderWindows over attempts and holds already derived
// from h (holds in start-time order). The windows live in c's memory.
func (c *Checker) noHolderWindows(h History, all []Attempt, byTime []Hold) []NoHolderWindow {
	attempts := c.attemptsByClient(h, all)
	stops := c.stopTimes(h)
	c.gaps = gapsBetweenHolds(c.gaps[:0], h, byTime)
	c.windows, c.windowClients, c.windowWaits = c.windows[:0], c.windowClients[:0], c.windowWaits[:0]
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
		c.windows, c.windowClients, c.windowWaits = mergeWaits(c.windows, c.windowClients, c.windowWaits, waits, gap)
	}
	return c.windows
}

type clientWait struct {
	client   int
	from, to int64
}

// mergeWaits joins overlapping client waits of one gap into windows, appended
// to out. The windows' Clients and Waits are cut from clients and cws, which
// are returned grown.
func mergeWaits(out []NoHolderWindow, clients []int, cws []ClientWait, waits []clientWait, gap timeGap) ([]NoHolderWindow, []int, []ClientWait) {
	slices.SortStableFunc(waits, func(a, b clientWait) int { return cmp.Compare(a.from, b.from) })
	for i := 0; i < len(waits); {
		w := NoHolderWindow{Start: waits[i].from, End: waits[i].to}
		j := i + 1 // waits[i:j] make the window
		for ; j < len(waits) && waits[j].from <= w.End; j++ {
			w.End = max(w.End, waits[j].to)
		}
		first, firstWait := len(clients), len(cws)
		for _, x := range waits[i:j] {
			clients = append(clients, x.client)
			cws = append(cws, ClientWait{x.client, x.from, x.to})
		}
		w.Clients = clients[first:len(clients):len(clients)]
		slices.Sort(w.Clients)
		w.Waits = cws[firstWait:len(cws):len(cws)]
		w.Granted = gap.granted && w.End == gap.end
		out = append(out, w)
		i = j
	}
	return out, clients, cws
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

// CheckLiveness finds the first window of waiting clients with nobody
// holding the lock that lasted longer than bound while a majority of the
// key's nodes was up and reachable from a waiting client (History.Reach):
// faults that leave a majority reachable never excuse a lock that stays
// stuck, and time spent without one never counts against the algorithm.
// Without Reach (a history made by hand), a window counts from the moment
// every fault had healed (History.Healed).
//
// bound is a span of true time, as every instant of a History is.
func CheckLiveness(h History, bound time.Duration) (Violation, bool) {
	c := &Checker{byTime: holdsByStartTime(nil, Holds(h))}
	c.keepProgress(h)
	return c.checkLiveness(h, c.noHolderWindows(h, Attempts(h), c.progress), int64(bound))
}

func (c *Checker) checkLiveness(h History, windows []NoHolderWindow, bound int64) (Violation, bool) {
	v, n := c.livenessViolations(h, windows, bound, nil)
	return v, n > 0
}

// livenessViolations is the first window that passed bound, as
// checkLiveness finds it, and n, how many did; later, when not nil, gets
// every one after the first.
func (c *Checker) livenessViolations(h History, windows []NoHolderWindow, bound int64, later *[]Violation) (first Violation, n int) {
	if h.Reachable {
		c.indexReach(h)
	}
	for _, w := range windows {
		v, ok := c.windowViolation(h, w, bound)
		switch {
		case !ok:
			continue
		case n == 0:
			first = v
		case later != nil:
			*later = append(*later, v)
		}
		n++
	}
	return first, n
}

// windowViolation is the liveness violation of window w, if it passed
// bound (c.indexReach done).
func (c *Checker) windowViolation(h History, w NoHolderWindow, bound int64) (Violation, bool) {
	var from, at int64 // the wait judged from; when it passed the bound
	if h.Reachable {
		var ok bool
		if from, at, ok = c.availableIn(w, bound); !ok {
			return Violation{}, false
		}
	} else {
		from = max(w.Start, h.Healed)
		if w.End-from <= bound {
			return Violation{}, false
		}
		at = from + bound
	}
	names := make([]string, len(w.Clients))
	for i, cl := range w.Clients {
		names[i] = clientName(h, cl)
	}
	how := "until someone got it"
	if !w.Granted {
		how = "until the run ended"
	}
	nobody := "nobody holding the lock"
	if c.refused > 0 && c.refusedIn(w) {
		nobody = "nobody holding the lock but holders the resource refused (stale tokens)"
	}
	story := fmt.Sprintf("%s waited %s from %s with %s, %s (the liveness bound is %s)",
		strings.Join(names, ", "), Seconds(w.End-from), Seconds(from), nobody, how, Seconds(bound))
	if h.Reachable {
		story = fmt.Sprintf("%s waited %s from %s with %s, %s, more than the liveness bound (%s) of it with a majority of the key's nodes up and reachable",
			strings.Join(names, ", "), Seconds(w.End-from), Seconds(from), nobody, how, Seconds(bound))
	}
	return Violation{
		Kind:    Liveness,
		Time:    from,
		End:     at,
		Clients: slices.Clone(w.Clients), // w may live in a Checker's memory
		Story:   story,
	}, true
}

// indexReach cuts h.Reach per client, in c's memory.
func (c *Checker) indexReach(h History) {
	n := len(h.Clients)
	for _, r := range h.Reach {
		n = max(n, r.Client+1)
	}
	c.reachOf = slices.Grow(c.reachOf[:0], n)[:n]
	for i := range c.reachOf {
		c.reachOf[i] = c.reachOf[i][:0]
	}
	for _, r := range h.Reach {
		if r.Client >= 0 {
			c.reachOf[r.Client] = append(c.reachOf[r.Client], r)
		}
	}
}

type span struct{ from, to int64 }

// availableIn is how long, within window w, some waiting client could
// make progress (its waits intersected with its Reach): from the first
// such instant, and the instant the total passed bound (ok false: it
// never did).
func (c *Checker) availableIn(w NoHolderWindow, bound int64) (from, at int64, ok bool) {
	spans := c.spans[:0]
	for _, wt := range w.Waits {
		if wt.Client < 0 || wt.Client >= len(c.reachOf) {
			continue
		}
		for _, r := range c.reachOf[wt.Client] {
			if lo, hi := max(r.From, wt.From), min(r.To, wt.To); hi > lo {
				spans = append(spans, span{lo, hi})
			}
		}
	}
	c.spans = spans
	if len(spans) == 0 {
		return 0, 0, false
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	from = spans[0].from
	total, covered := int64(0), int64(math.MinInt64)
	for _, s := range spans {
		lo := max(s.from, covered)
		if s.to <= lo {
			continue
		}
		if total+(s.to-lo) > bound {
			return from, lo + (bound - total), true
		}
		total += s.to - lo
		covered = s.to
	}
	return from, 0, false
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
