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
	return noHolderWindows(h, Attempts(h), holdsByStartTime(Holds(h)))
}

// noHolderWindows is NoHolderWindows over attempts and holds already derived
// from h (holds in start-time order).
func noHolderWindows(h History, all []Attempt, byTime []Hold) []NoHolderWindow {
	attempts := attemptsByClient(h, all)
	stops := stopTimes(h)
	var out []NoHolderWindow
	next := make([]int, len(attempts)) // per client: first attempt not yet behind us
	for _, gap := range gapsBetweenHolds(h, byTime) {
		var waits []clientWait
		for c, as := range attempts {
			for next[c] < len(as) && as[next[c]].ReturnTime <= gap.start && as[next[c]].CallTime < gap.start {
				next[c]++ // returned before the gap opened
			}
			if next[c] == len(as) || as[next[c]].CallTime > gap.end {
				continue
			}
			from, to := max(as[next[c]].CallTime, gap.start), gap.end
			if stop, ok := stops[c]; ok && stop >= from && stop < to {
				to = stop
			}
			waits = append(waits, clientWait{c, from, to})
		}
		out = append(out, mergeWaits(waits, gap)...)
	}
	return out
}

type clientWait struct {
	client   int
	from, to int64
}

// mergeWaits joins overlapping client waits of one gap into windows.
func mergeWaits(waits []clientWait, gap timeGap) []NoHolderWindow {
	slices.SortStableFunc(waits, func(a, b clientWait) int { return cmp.Compare(a.from, b.from) })
	var out []NoHolderWindow
	for _, w := range waits {
		if n := len(out); n > 0 && w.from <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, w.to)
			out[n-1].Clients = append(out[n-1].Clients, w.client)
			continue
		}
		out = append(out, NoHolderWindow{Start: w.from, End: w.to, Clients: []int{w.client}})
	}
	for i := range out {
		slices.Sort(out[i].Clients)
		out[i].Granted = gap.granted && out[i].End == gap.end
	}
	return out
}

type timeGap struct {
	start, end int64
	granted    bool // a hold starts at end
}

// gapsBetweenHolds is the complement in [0, End] of the union of all holds,
// in true time.
func gapsBetweenHolds(h History, holds []Hold) []timeGap {
	var gaps []timeGap
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

// holdsByStartTime is a copy of holds sorted by start time (gaps and
// availability are measured in true time).
func holdsByStartTime(holds []Hold) []Hold {
	byTime := slices.Clone(holds)
	slices.SortStableFunc(byTime, func(a, b Hold) int { return cmp.Compare(a.StartTime, b.StartTime) })
	return byTime
}

// attemptsByClient groups the attempts per client index, each in call order.
func attemptsByClient(h History, all []Attempt) [][]Attempt {
	n := len(h.Clients)
	for _, a := range all {
		n = max(n, a.Client+1)
	}
	// One backing array, cut per client: no slice grows.
	counts := make([]int, n)
	for _, a := range all {
		if a.Client >= 0 {
			counts[a.Client]++
		}
	}
	backing := make([]Attempt, 0, len(all))
	out := make([][]Attempt, n)
	for c := range out {
		out[c] = backing[len(backing) : len(backing) : len(backing)+counts[c]]
		backing = backing[:len(backing)+counts[c]]
	}
	for _, a := range all {
		if a.Client >= 0 {
			out[a.Client] = append(out[a.Client], a)
		}
	}
	return out
}

// stopTimes maps each client that stopped to the true time it first did.
func stopTimes(h History) map[int]int64 {
	stops := map[int]int64{}
	for _, e := range eventsInOrder(h) {
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
			Clients: w.Clients,
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
