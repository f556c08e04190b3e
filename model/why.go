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
// violation of another kind.
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
	attempts := Attempts(h)
	holds := Holds(h)
	lockKeys := map[string]bool{}
	for _, it := range h.Items {
		if !it.App {
			lockKeys[it.Key] = true
		}
	}
	majority := h.Replicas/2 + 1
	blockers := map[string]int{} // by mechanism: index in why.Blockers
	seen := map[int]bool{}       // items counted in a blocker, by index in h.Items
	for _, c := range v.Clients {
		for _, a := range attempts {
			if a.Client != c || a.Outcome == Granted || a.ReturnTime < why.From || a.ReturnTime > why.To ||
				a.Outcome == Unknown {
				continue
			}
			why.Failed++
			var blocked, split, own bool
			for idx, it := range h.Items {
				if it.To <= a.CallTime || it.From >= a.ReturnTime || (it.App && !lockKeys[it.Key]) {
					continue
				}
				switch {
				case !it.App && it.Client == c && it.From >= a.CallTime:
					// its own vote
				case !it.App && it.Client == c:
					own = true
				case !it.App && contending(attempts, it, a):
					split = true
				default:
					blocked = true
					if !seen[idx] {
						seen[idx] = true
						why.block(h, attempts, holds, it, blockers)
					}
				}
			}
			switch {
			case blocked:
				why.Blocked++
			case split && !splitWon(h.Items, a, majority):
				why.Split++
			case split:
				why.Blocked++ // a contender wrote a majority and still was not granted: counted as in the way
			case own:
				why.Own++
			default:
				why.Clear++
			}
		}
		if s, ok := longestSleep(attempts, c, why.From, why.To); ok && s > why.Slept {
			why.Slept, why.Sleeper = s, c
		}
	}
	slices.SortStableFunc(why.Blockers, func(a, b Blocker) int { return cmp.Compare(b.Time, a.Time) })
	why.names = make([]string, len(h.Clients))
	for i := range h.Clients {
		why.names[i] = clientName(h, i)
	}
	return why, true
}

// contending reports whether item it was written by an attempt of another
// client that was in flight while attempt a was: a contender's vote.
func contending(attempts []Attempt, it ItemLife, a Attempt) bool {
	for _, b := range attempts {
		if b.Client == it.Client && b.CallTime <= it.From && it.From <= b.ReturnTime && b.Outcome != Granted {
			return b.CallTime < a.ReturnTime && b.ReturnTime > a.CallTime
		}
	}
	return false
}

// splitWon reports whether, while attempt a was in flight, some other
// client's items stood on a majority of nodes at once: then it was no split.
func splitWon(items []ItemLife, a Attempt, majority int) bool {
	count := map[int]map[string]bool{}
	for _, it := range items {
		if it.App || it.Client == a.Client || it.To <= a.CallTime || it.From >= a.ReturnTime {
			continue
		}
		if count[it.Client] == nil {
			count[it.Client] = map[string]bool{}
		}
		count[it.Client][it.Node] = true
		if len(count[it.Client]) >= majority {
			return true
		}
	}
	return false
}

// block adds item it to why's blockers, by the way it was left behind.
func (why *WaitWhy) block(h History, attempts []Attempt, holds []Hold, it ItemLife, index map[string]int) {
	mechanism, story := itemHow(h, attempts, holds, it)
	i, ok := index[mechanism]
	if !ok {
		i = len(why.Blockers)
		index[mechanism] = i
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
func itemHow(h History, attempts []Attempt, holds []Hold, it ItemLife) (mechanism, story string) {
	if it.App {
		return "the application's data under " + it.Key, "there from the start"
	}
	who := clientName(h, it.Client)
	var last *Attempt // the writer's last attempt called by the write
	for i := range attempts {
		a := &attempts[i]
		if a.Client == it.Client && a.CallTime <= it.From {
			last = a
		}
	}
	const afterHold = "left when their holds ended"
	for _, hd := range holds {
		if hd.Client == it.Client && hd.StartTime <= it.From && it.From <= hd.EndTime {
			return afterHold, fmt.Sprintf("written by %s while it held the lock; its hold ended at %s (%s) and the item stayed",
				who, Seconds(hd.EndTime), holdEnd(hd))
		}
	}
	switch {
	case last == nil:
		return "written outside any attempt", "written by " + who + " at " + Seconds(it.From)
	case last.Outcome == Granted:
		for _, hd := range holds {
			if hd.StartSeq == last.ReturnSeq {
				return afterHold, fmt.Sprintf("written for %s's grant at %s; its hold ended at %s (%s) and the item stayed",
					who, Seconds(last.ReturnTime), Seconds(hd.EndTime), holdEnd(hd))
			}
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

// longestSleep is the longest stretch of [from, to) in which client had
// no attempt in flight and then made another: a client that stops trying
// is not asleep.
func longestSleep(attempts []Attempt, client int, from, to int64) (int64, bool) {
	longest, at := int64(0), from
	seen := false
	for _, a := range attempts {
		if a.Client != client || a.ReturnTime <= from || a.CallTime >= to {
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
