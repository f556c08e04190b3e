package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// WaitWhy says why nobody got the lock during a wait (a Liveness
// violation), from the run's own state: how each failed attempt of the
// waiters failed, whose lock items were in their way and how those items
// got there, and how long the waiters slept between attempts.
//
// An attempt failed for one of four reasons, judged by the lock items on
// the nodes while it was in flight (History.Items; the application's data
// under a name the lock writes counts as an item of nobody's):
//   - Blocked: an item no contender was writing in the attempt's time: left
//     behind by a failed attempt, a hold that ended, a client that stopped,
//     or the application's data;
//   - Split: items of other waiters' attempts in flight at the same time,
//     and none of them a majority: the votes split;
//   - Own: only items of its own client's earlier attempts;
//   - Clear: no item but its own: its calls were lost, late or unanswered,
//     or it gave up early.
type WaitWhy struct {
	// From and To are the wait explained: from when it counted to when it
	// passed the liveness bound.
	From, To int64
	// Bound is the liveness bound the wait passed.
	Bound int64
	// Failed counts the waiters' attempts that ended in the wait without a
	// grant, and Blocked, Split, Own and Clear how they failed.
	Failed, Blocked, Split, Own, Clear int
	// Blockers are the items left behind that blocked attempts, most time
	// in the wait first.
	Blockers []Blocker
	// Slept is the longest a waiter (Sleeper) went without an attempt in
	// flight during the wait; TTL the lock's.
	Slept, TTL int64
	Sleeper    int
	// Recorded says the run recorded its items (History.Items): without
	// them only the attempts and the sleep are known.
	Recorded bool
	names    []string
}

// Blocker is one way lock items (or the application's data) were left
// in the waiters' way: every item left behind the same way, together.
type Blocker struct {
	// Mechanism is how they got there and why they stayed, a phrase:
	// "left by failed attempts that did not clear them".
	Mechanism string
	Items     int      // how many stays of items on nodes
	Owners    []string // their owner fields, in the order first seen ("" for the application's data)
	Nodes     []string // where they were, in the order first seen
	Time      int64    // the longest one of them stood in the wait
	First     string   // the longest one's story
}

// ExplainWait explains the liveness violation v of h. ok is false for a
// violation of another kind. It takes time in proportion to the waiters'
// attempts and the items, times the log of their number: a wait of tens
// of thousands of attempts is explained at once.
func ExplainWait(h History, v Violation) (WaitWhy, bool) {
	if v.Kind != Liveness {
		return WaitWhy{}, false
	}
	to := v.End
	if to <= v.Time {
		to = h.End
	}
	why := WaitWhy{From: v.Time, To: to, Bound: to - v.Time, TTL: int64(h.TTL), Sleeper: -1,
		Recorded: len(h.Items) > 0}
	x := newWaitIndex(h, Attempts(h), Holds(h))
	failed := why.failedAttempts(x, v.Clients)
	x.indexItems(h, failed)
	majority := h.Replicas/2 + 1
	seen := map[int]bool{} // items counted in a blocker, by index in x.items
	votes := map[int]map[string]bool{}
	for _, a := range failed {
		why.Failed++
		why.classify(h, x, a, majority, seen, votes)
	}
	slices.SortStableFunc(why.Blockers, func(a, b Blocker) int { return cmp.Compare(b.Time, a.Time) })
	why.names = make([]string, len(h.Clients))
	for i := range h.Clients {
		why.names[i] = clientName(h, i)
	}
	return why, true
}

// failedAttempts is the attempts of clients that ended in the wait without
// a grant, client by client in the order given. It also records in why the
// longest sleep among those clients, and the first of them to sleep it.
func (why *WaitWhy) failedAttempts(x *waitIndex, clients []int) []Attempt {
	var failed []Attempt
	for _, c := range clients {
		if c < 0 || c >= len(x.attempts) {
			continue
		}
		for _, a := range x.attempts[c] {
			if a.Outcome != Granted && a.Outcome != Unknown && a.ReturnTime >= why.From && a.ReturnTime <= why.To {
				failed = append(failed, a)
			}
		}
		if s, ok := longestSleep(x.attempts[c], why.From, why.To); ok && s > why.Slept {
			why.Slept, why.Sleeper = s, c
		}
	}
	return failed
}

// classify counts how failed attempt a failed, by the items that stood
// while it was in flight, and adds those that blocked it to the blockers,
// each once: seen holds the items already added. votes is scratch space,
// the other clients' items by client and node, kept across calls so that a
// long wait does not allocate it per attempt.
func (why *WaitWhy) classify(h History, x *waitIndex, a Attempt, majority int, seen map[int]bool, votes map[int]map[string]bool) {
	var blocked, split, own bool
	clear(votes)
	x.overlapping(a.CallTime, a.ReturnTime, func(i int) {
		it := x.items[i]
		if !it.App && it.Client != a.Client {
			if votes[it.Client] == nil {
				votes[it.Client] = map[string]bool{}
			}
			votes[it.Client][it.Node] = true
		}
		switch {
		case !it.App && it.Client == a.Client && it.From >= a.CallTime:
			// its own vote
		case !it.App && it.Client == a.Client:
			own = true
		case !it.App && x.contending(it, a):
			split = true
		default:
			blocked = true
			if !seen[i] {
				seen[i] = true
				why.block(h, x, it)
			}
		}
	})
	// Whether some client's items stood on a majority: the order the map
	// is read in does not matter.
	won := false
	for _, nodes := range votes {
		won = won || len(nodes) >= majority
	}
	switch {
	case blocked:
		why.Blocked++
	case split && !won:
		why.Split++
	case split:
		why.Blocked++ // a contender stood on a majority and still was not granted: counted as in the way
	case own:
		why.Own++
	default:
		why.Clear++
	}
}

// waitIndex answers, fast, what ExplainWait asks of a long run: which
// items stood on a node in a stretch of time, and which attempt or hold a
// client had at an instant.
type waitIndex struct {
	// items are the stays that can block a lock write: lock items, and the
	// application's data under a key the lock writes items under; in
	// lanes, one per node and key, each in time order.
	items []ItemLife
	lanes [][2]int // items[lo:hi] of one node and key
	// attempts and holds, per client, in call and start order.
	attempts [][]Attempt
	holds    [][]Hold
}

func newWaitIndex(h History, attempts []Attempt, holds []Hold) *waitIndex {
	n := len(h.Clients)
	for _, a := range attempts {
		n = max(n, a.Client+1)
	}
	x := &waitIndex{attempts: make([][]Attempt, n), holds: make([][]Hold, n)}
	for _, a := range attempts {
		if a.Client >= 0 {
			x.attempts[a.Client] = append(x.attempts[a.Client], a)
		}
	}
	for _, hd := range holds {
		if hd.Client >= 0 && hd.Client < n {
			x.holds[hd.Client] = append(x.holds[hd.Client], hd)
		}
	}
	for _, hs := range x.holds {
		slices.SortStableFunc(hs, func(a, b Hold) int { return cmp.Compare(a.StartTime, b.StartTime) })
	}
	return x
}

// indexItems keeps the stays of h's items that stood during some attempt
// of failed, in lanes.
func (x *waitIndex) indexItems(h History, failed []Attempt) {
	if len(failed) == 0 {
		return
	}
	from, to := failed[0].CallTime, failed[0].ReturnTime
	for _, a := range failed {
		from, to = min(from, a.CallTime), max(to, a.ReturnTime)
	}
	lockKeys := map[string]bool{}
	for _, it := range h.Items {
		if !it.App {
			lockKeys[it.Key] = true
		}
	}
	for _, it := range h.Items {
		if it.To > from && it.From < to && (!it.App || lockKeys[it.Key]) {
			x.items = append(x.items, it)
		}
	}
	slices.SortStableFunc(x.items, func(a, b ItemLife) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Key, b.Key), cmp.Compare(a.From, b.From))
	})
	for lo := 0; lo < len(x.items); {
		hi := lo + 1
		for hi < len(x.items) && x.items[hi].Node == x.items[lo].Node && x.items[hi].Key == x.items[lo].Key {
			hi++
		}
		x.lanes = append(x.lanes, [2]int{lo, hi})
		lo = hi
	}
}

// overlapping calls f with the index of every item that stood during
// [from, to). A node holds one item under a key at a time, so a lane's
// stays follow one another: the search stops at the first that ended
// before from.
func (x *waitIndex) overlapping(from, to int64, f func(i int)) {
	for _, l := range x.lanes {
		lane := x.items[l[0]:l[1]]
		j, _ := slices.BinarySearchFunc(lane, to, func(it ItemLife, t int64) int { return cmp.Compare(it.From, t) })
		for k := j - 1; k >= 0 && lane[k].To > from; k-- {
			f(l[0] + k)
		}
	}
}

// lastAttempt is client's last attempt called at or before t, or nil.
func (x *waitIndex) lastAttempt(client int, t int64) *Attempt {
	if client < 0 || client >= len(x.attempts) {
		return nil
	}
	as := x.attempts[client]
	i, _ := slices.BinarySearchFunc(as, t+1, func(a Attempt, t int64) int { return cmp.Compare(a.CallTime, t) })
	if i == 0 {
		return nil
	}
	return &as[i-1]
}

// holdAt is client's hold that began at or before t and had not ended by
// it, or nil.
func (x *waitIndex) holdAt(client int, t int64) *Hold {
	if client < 0 || client >= len(x.holds) {
		return nil
	}
	hs := x.holds[client]
	i, _ := slices.BinarySearchFunc(hs, t+1, func(h Hold, t int64) int { return cmp.Compare(h.StartTime, t) })
	if i > 0 && hs[i-1].EndTime >= t {
		return &hs[i-1]
	}
	return nil
}

// contending reports whether item it was written by an attempt of another
// client that was in flight while attempt a was: a contender's vote.
func (x *waitIndex) contending(it ItemLife, a Attempt) bool {
	b := x.lastAttempt(it.Client, it.From)
	return b != nil && it.From <= b.ReturnTime && b.Outcome != Granted &&
		b.CallTime < a.ReturnTime && b.ReturnTime > a.CallTime
}

// block adds item it to why's blockers, by the way it was left behind.
func (why *WaitWhy) block(h History, x *waitIndex, it ItemLife) {
	mechanism, story := itemHow(h, x, it)
	i := slices.IndexFunc(why.Blockers, func(b Blocker) bool { return b.Mechanism == mechanism })
	if i < 0 {
		i = len(why.Blockers)
		why.Blockers = append(why.Blockers, Blocker{Mechanism: mechanism})
	}
	b := &why.Blockers[i]
	b.Items++
	if !slices.Contains(b.Owners, it.Owner) {
		b.Owners = append(b.Owners, it.Owner)
	}
	if !slices.Contains(b.Nodes, it.Node) {
		b.Nodes = append(b.Nodes, it.Node)
	}
	if t := min(it.To, why.To) - max(it.From, why.From); t > b.Time {
		b.Time, b.First = t, fmt.Sprintf("%s on %s, %s", ownerOf(it), it.Node, story)
	}
}

func ownerOf(it ItemLife) string {
	if it.App {
		return "the application's data under " + it.Key
	}
	return "the item of " + it.Owner
}

// itemHow says how item it got onto its node and why it stayed: a
// mechanism shared by items left the same way, and this item's story.
func itemHow(h History, x *waitIndex, it ItemLife) (mechanism, story string) {
	if it.App {
		return "the application's data under " + it.Key, "there from the start"
	}
	who := clientName(h, it.Client)
	const afterHold = "left when their holds ended"
	if hd := x.holdAt(it.Client, it.From); hd != nil {
		return afterHold, fmt.Sprintf("written by %s while it held the lock; its hold ended at %s (%s) and the item stayed",
			who, Seconds(hd.EndTime), holdEnd(*hd))
	}
	last := x.lastAttempt(it.Client, it.From)
	switch {
	case last == nil:
		return "written outside any attempt", "written by " + who + " at " + Seconds(it.From)
	case last.Outcome == Granted:
		if hd := x.holdAt(it.Client, last.ReturnTime); hd != nil && hd.StartSeq == last.ReturnSeq {
			return afterHold, fmt.Sprintf("written for %s's grant at %s; its hold ended at %s (%s) and the item stayed",
				who, Seconds(last.ReturnTime), Seconds(hd.EndTime), holdEnd(*hd))
		}
		return afterHold, fmt.Sprintf("written for %s's grant at %s", who, Seconds(last.ReturnTime))
	case last.Outcome == Unknown:
		return "written by attempts that never returned (their clients stopped)",
			fmt.Sprintf("written by %s's attempt, which never returned (it stopped at %s)", who, Seconds(last.ReturnTime))
	case it.From > last.ReturnTime:
		return "written after their attempts had given up (a write that timed out but applied)",
			fmt.Sprintf("a write of %s's attempt that failed at %s, applied at %s", who, Seconds(last.ReturnTime), Seconds(it.From))
	}
	return "left by failed attempts that did not clear them",
		fmt.Sprintf("written by %s's attempt that failed at %s", who, Seconds(last.ReturnTime))
}

func holdEnd(hd Hold) string {
	switch hd.EndReason {
	case "release":
		return "released"
	case "expired":
		return "its belief expired"
	case ReasonStopped:
		return "it stopped"
	}
	return "the run ended"
}

// longestSleep is the longest stretch of [from, to) in which a client,
// whose attempts as are, had no attempt in flight and then made another:
// a client that stops trying is not asleep.
func longestSleep(as []Attempt, from, to int64) (int64, bool) {
	longest, at := int64(0), from
	seen := false
	for _, a := range as {
		if a.ReturnTime <= from || a.CallTime >= to {
			continue
		}
		seen = true
		longest = max(longest, a.CallTime-at)
		at = max(at, a.ReturnTime)
	}
	return longest, seen
}

// String is the explanation in a sentence or three.
func (w WaitWhy) String() string {
	name := func(c int) string {
		if c >= 0 && c < len(w.names) {
			return w.names[c]
		}
		return fmt.Sprintf("c%d", c)
	}
	var parts []string
	if w.Failed == 0 {
		parts = append(parts, "no attempt of the waiters failed in it: they were still in their first attempts")
	} else {
		var how []string
		for _, x := range []struct {
			n    int
			what string
		}{
			{w.Blocked, "blocked by an item left behind"},
			{w.Split, "lost to a split vote among contenders"},
			{w.Own, "met only the client's own earlier items"},
			{w.Clear, "met no other item (calls lost, late or unanswered)"},
		} {
			if x.n > 0 {
				how = append(how, fmt.Sprintf("%d %s", x.n, x.what))
			}
		}
		if !w.Recorded {
			how = []string{"items not recorded"}
		}
		parts = append(parts, fmt.Sprintf("%d attempts failed in it: %s", w.Failed, strings.Join(how, ", ")))
	}
	for _, b := range w.Blockers {
		parts = append(parts, fmt.Sprintf("%s: %s on %s, the longest %s of the wait (%s)", b.Mechanism,
			plural(b.Items, "item"), strings.Join(b.Nodes, ", "), Seconds(b.Time), b.First))
	}
	if w.Sleeper >= 0 && w.TTL > 0 && w.Slept > w.TTL {
		parts = append(parts, fmt.Sprintf("%s slept %s between attempts, past the TTL (%s)", name(w.Sleeper), Seconds(w.Slept), Seconds(w.TTL)))
	}
	return strings.Join(parts, "; ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
