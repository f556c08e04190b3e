package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Check turns a history into a verdict: the run's abort if any, mutual
// exclusion (the first overlap), resource safety (lost updates), liveness
// after faults healed, and metrics. Violations are in time order, then kind
// order; the same history always yields the same verdict.
//
// Check panics where CheckErr would return an error: on invalid options, or
// when opts.Porcupine is set and porcupine disagrees with the sweep. Either is
// a bug in the caller or in this package, never a property of the history.
func Check(h History, opts CheckOptions) Verdict {
	v, err := CheckErr(h, opts)
	if err != nil {
		panic(err)
	}
	return v
}

// CheckErr is Check returning its errors instead of panicking. Without
// opts.Porcupine, it errs only on invalid options.
func CheckErr(h History, opts CheckOptions) (Verdict, error) { return new(Checker).CheckErr(h, opts) }

// CheckErr is the package's CheckErr with the Checker's memory.
func (c *Checker) CheckErr(h History, opts CheckOptions) (Verdict, error) {
	if err := opts.Validate(); err != nil {
		return Verdict{}, err
	}
	var v Verdict
	v.Unsupported = h.Unsupported
	if h.Abort != nil {
		v.Violations = append(v.Violations, abortViolation(h))
	}
	// Holds, attempts and no-holder windows feed several checkers: derive
	// each once.
	c.holds = holdsInto(c.holds, h)
	c.byTime = holdsByStartTime(c.byTime, c.holds)
	c.attempts = attemptsInto(c.attempts, h)
	c.keepProgress(h)
	windows := c.noHolderWindows(h, c.attempts, c.progress)
	var later *[]Violation // every violation after the first of its kind
	if opts.Every {
		later = &v.Later
	}
	overlap, n := overlaps(h, c.holds, later)
	found := n > 0
	if found {
		overlap.Count = n
		v.Violations = append(v.Violations, overlap)
	}
	if opts.Porcupine {
		if ok := CheckMutexPorcupine(h); ok == found {
			return Verdict{}, &DisagreementError{Sweep: overlap, SweepFound: found, PorcupineOK: ok}
		}
	}
	if lost, found := c.checkCounter(h); found {
		v.Violations = append(v.Violations, lost)
	}
	if len(h.DataLoss) > 0 {
		lost := dataLossViolation(h, 0)
		lost.Count = len(h.DataLoss)
		v.Violations = append(v.Violations, lost)
		if later != nil {
			for i := range h.DataLoss[1:] {
				v.Later = append(v.Later, dataLossViolation(h, i+1))
			}
		}
	}
	if bound := int64(opts.LivenessBound(h)); !opts.SkipLiveness && bound > 0 {
		if stuck, n := c.livenessViolations(h, windows, bound, later); n > 0 {
			stuck.Count = n
			v.Violations = append(v.Violations, stuck)
		}
		if left, n := leftovers(h, c.attempts, c.holds, bound, later); n > 0 {
			left.Count = n
			v.Violations = append(v.Violations, left)
		}
	}
	if !opts.SkipLiveness {
		recorded(&v, later != nil, h, len(h.Leaks), leakViolation)
		recorded(&v, later != nil, h, len(h.GaveUps), gaveUpViolation)
		recorded(&v, later != nil, h, len(h.Starved), starvedViolation)
	}
	for i := range v.Violations {
		if v.Violations[i].Count == 1 {
			v.Violations[i].Count = 0 // said only of a kind that broke more than once
		}
	}
	byTime := func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)))
	}
	slices.SortStableFunc(v.Violations, byTime)
	slices.SortStableFunc(v.Later, byTime)
	v.Metrics = c.computeMetrics(h, c.attempts, c.byTime, windows)
	return v, nil
}

// DisagreementError says the sweep and porcupine judged mutual exclusion
// differently: one of the two checkers is wrong.
type DisagreementError struct {
	Sweep       Violation // the sweep's finding, when SweepFound
	SweepFound  bool
	PorcupineOK bool
}

func (e *DisagreementError) Error() string {
	if e.SweepFound {
		return "model: mutual-exclusion checkers disagree: porcupine linearizes the history, the sweep found: " + e.Sweep.Story
	}
	return "model: mutual-exclusion checkers disagree: the sweep found no overlap, porcupine found the history not linearizable"
}

// kindRank orders violations of the same instant: the order kinds are
// declared in history.go.
func kindRank(k ViolationKind) int {
	order := []ViolationKind{MutualExclusion, LostUpdate, DataLoss, Liveness, Leftover, LeakedLock, GaveUpWhileFree, StarvedWhileFree, Panic, Livelock, Misuse, Crash, Hang, Memory, Nondeterminism}
	if i := slices.Index(order, k); i >= 0 {
		return i
	}
	return len(order)
}

// abortViolation reports the run's abnormal end, story from the first line
// of its detail (the rest is a stack trace).
func abortViolation(h History) Violation {
	a := h.Abort
	kind := a.Kind
	if kind == "" {
		kind = Livelock
	}
	detail, _, _ := strings.Cut(a.Detail, "\n")
	v := Violation{Kind: kind, Time: a.Time}
	who := "the run"
	if a.Client >= 0 && a.Client < len(h.Clients) {
		v.Clients = []int{a.Client}
		who = clientName(h, a.Client)
	}
	switch kind {
	case Panic:
		v.Story = fmt.Sprintf("%s panicked at %s: %s", who, Seconds(a.Time), detail)
	case Misuse:
		v.Story = fmt.Sprintf("by %s: %s", Seconds(a.Time), detail)
	default:
		v.Story = fmt.Sprintf("%s stopped making progress at %s (%s): %s", who, Seconds(a.Time), kind, detail)
	}
	return v
}

// dataLossViolation reports the i-th time a client destroyed the
// application's data.
func dataLossViolation(h History, i int) Violation {
	d := h.DataLoss[i]
	return Violation{Kind: DataLoss, Time: d.Time, Clients: []int{d.Client},
		Story: fmt.Sprintf("%s %s the application's data under %s on %s at %s", clientName(h, d.Client), d.How, d.Key, d.Node, Seconds(d.Time))}
}

// leakViolation reports the i-th Lock that returned failure while its key
// held the lock.
func leakViolation(h History, i int) Violation {
	l := h.Leaks[i]
	until := "with no expiry"
	if l.Until > 0 {
		until = "until " + Seconds(l.Until)
	}
	why := ""
	if l.Reason != "" {
		why = " (" + l.Reason + ")"
	}
	if l.Unlock {
		return Violation{Kind: LeakedLock, Time: l.Time, Clients: []int{l.Client},
			Story: fmt.Sprintf("%s's Unlock returned success at %s, a refresher extending as it unlocked%s, while the key its Lock wrote held the lock in its name on %s (%d of the %d nodes it asked), %s: a release that left the lock held, for no one",
				clientName(h, l.Client), Seconds(l.Time), why, strings.Join(l.Nodes, ", "), len(l.Nodes), l.Asked, until)}
	}
	return Violation{Kind: LeakedLock, Time: l.Time, Clients: []int{l.Client},
		Story: fmt.Sprintf("%s's Lock returned failure at %s%s while the key it wrote held the lock in its name on %s (%d of the %d nodes it asked), %s: a grant reported as a failure, which no one releases",
			clientName(h, l.Client), Seconds(l.Time), why, strings.Join(l.Nodes, ", "), len(l.Nodes), l.Asked, until)}
}

// gaveUpViolation reports the i-th Lock that gave up before its retry
// budget was up while the lock was free. Its Time is the return, its End
// when the free stretch had lasted a retry gap and two round trips: a
// breach before then is one the call lived through.
func gaveUpViolation(h History, i int) Violation {
	g := h.GaveUps[i]
	why := ""
	if g.Reason != "" {
		why = " (" + g.Reason + ")"
	}
	return Violation{Kind: GaveUpWhileFree, Time: g.Time, End: g.FreeTo, Clients: []int{g.Client},
		Story: fmt.Sprintf("%s's Lock, called at %s, returned failure at %s%s, %s into a retry budget that runs to %s; the lock was then free on %s (%d of the %d nodes it asked, up and reachable) from %s to %s, longer than its longest wait between tries (%s) and two round trips: a Lock that gave up while the lock was acquirable",
			clientName(h, g.Client), Seconds(g.Called), Seconds(g.Time), why, Seconds(g.Time-g.Called), Seconds(g.Promised),
			strings.Join(g.Nodes, ", "), len(g.Nodes), g.Asked, Seconds(g.FreeFrom), Seconds(g.FreeTo), Seconds(g.Gap))}
}

// starvedViolation reports the i-th client that stayed in its Lock while
// the lock was free and nothing was in the way. Its Time is when the free
// stretch began, its End when it had lasted a retry gap and three round
// trips.
func starvedViolation(h History, i int) Violation {
	s := h.Starved[i]
	return Violation{Kind: StarvedWhileFree, Time: s.FreeFrom, End: s.FreeTo, Clients: []int{s.Client},
		Story: fmt.Sprintf("%s was inside its Lock (called at %s) while the lock was free on %s (%d of the %d nodes it asked, up, unclogged and reachable, its connections whole, the client not paused) from %s to %s with no one taking it, longer than its longest wait between tries (%s) and three round trips: a Lock that stopped trying, or tries in a way that cannot take a free lock",
			clientName(h, s.Client), Seconds(s.Called), strings.Join(s.Nodes, ", "), len(s.Nodes), s.Asked, Seconds(s.FreeFrom), Seconds(s.FreeTo), Seconds(s.Gap))}
}

// recorded adds the first of n violations the run recorded (the i-th made
// by violation), counted, and, with every, the rest to v.Later.
func recorded(v *Verdict, every bool, h History, n int, violation func(History, int) Violation) {
	if n == 0 {
		return
	}
	first := violation(h, 0)
	first.Count = n
	v.Violations = append(v.Violations, first)
	for i := 1; every && i < n; i++ {
		v.Later = append(v.Later, violation(h, i))
	}
}
