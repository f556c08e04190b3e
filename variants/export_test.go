package variants

import (
	"time"

	"github.com/locksim/locksim/algorithm"
)

// Mutant is a registered variant with one deliberate mistake: a line a
// reviewer could get wrong. It keeps its base's envelope, so a sweep holds
// it to the same promises in the same worlds.
type Mutant struct {
	Name    string // "corrected~quorum-half"
	Base    string // the variant it mutates
	Mistake string // the mistaken line, as a reviewer would write it
	// Equivalent, when set, says why the mistake breaks nothing the base
	// promises: no sweep can flag it, and the kill rate leaves it out.
	Equivalent string
	Variant    algorithm.Variant
}

// Mutants lists every mutant, by mechanism.
func Mutants() []Mutant {
	type m struct {
		base, name, mistake string
		mut                 mutation
		equivalent          string
	}
	list := []m{
		{"corrected", "quorum-half", "successfulLocks >= n/2", mutQuorumHalf, ""},
		{"corrected", "no-drift-margin", "validity := l.ttl - (now - start)", mutNoDriftMargin, ""},
		{"corrected", "margin-sign", "validity := l.ttl - (now - start) + driftMargin(l.ttl)", mutMarginSign, ""},
		{"corrected", "validity-from-grant", "start := env.Now() after lockKey, not before it", mutValidityFromNow, ""},
		{"corrected", "owner-per-client", `owner := env.HostName() + "/" + env.ClientName()`, mutOwnerPerClient, ""},
		{"corrected", "foreign-item-counted", "if rerr != nil && val.Owner != owner { return err }", mutForeignCounted, ""},
		{"corrected", "no-partial-clear", "fail returns false without clearLock", mutNoPartialClear, ""},
		{"corrected", "release-once", "one CompareAndDelete per server, no retry", mutReleaseOnce,
			"a delete that goes unanswered is remembered and sent again at the client's next clear (its next failure, release or acquire), " +
				"and the item expires within a TTL anyway: a release sent once leaves an item a little longer, never past the liveness bound"},
		{"corrected", "no-early-stop", "continue on KeyAlreadyExists, without the majority-out-of-reach break", mutNoEarlyStop, ""},
		{"corrected", "backoff-per-acquire", "depth, not depth + *l.contended, in pause", mutBackoffPerAcquire,
			"it changes how much work contention costs, not whether anyone is granted: 0 of 10,000 seeds starve either way, and the sweep runs 2.2x slower"},
		{"corrected", "retry-trusts-taken", "if errors.Is(err, ErrKeyAlreadyExists) { err = nil } after the retried write", mutRetryTrustsTaken, ""},
		{"fenced", "token-no-tie-break", "g.Token = high", mutTokenNoTieBreak, ""},
		{"fenced", "catch-up-impatient", "one try per call to a counter: raise, increment, catch-up", mutCatchUpImpatient, ""},
		{"fenced", "catch-up-skipped", "return token, true: the lagging counters are not raised to the token", mutCatchUpSkipped,
			"fenced raises every counter to the holder's clock, and inside its envelope clocks agree within 5 s, so tokens pass the last " +
				"within 5 s even where lagging counters would not: skipping the catch-up costs refused holders for at most that long, " +
				"a third of the shortest liveness bound, and no safety (0 of 30,000 seeds starve with liveness counted and late round " +
				"trips judged together). Its refused holders are flagged where the clocks do not make up for it " +
				"(TestRefusedHoldersFlagFencedWithoutCatchUp)"},
		{"fenced", "quorum-half", "successfulLocks >= n/2 (in its lock)", mutQuorumHalf,
			"fenced promises the resource, not the lock: two holders of a broken lock still draw different tokens, and the resource lets only one of them in"},
		{"redlock", "quorum-half", "if locked >= len(masters)/2 && validity > 0", mutRedlockQuorumHalf, ""},
		{"redlock", "no-drift", "validity := r.ttl - (now - start)", mutRedlockNoDrift, ""},
		{"redlock", "late-start", "start := env.Now() after the SET loop", mutRedlockLateStart, ""},
		{"redlock", "host-value", "value := env.HostName()", mutRedlockHostValue, ""},
	}
	out := make([]Mutant, len(list))
	for i, x := range list {
		base, err := Lookup(x.base)
		if err != nil {
			panic(err)
		}
		v := base
		v.Name = x.base + "~" + x.name
		v.Summary = "mutant of " + x.base + ": " + x.mistake
		v.New = mutantConstructor(x.base, x.mut)
		out[i] = Mutant{Name: v.Name, Base: x.base, Mistake: x.mistake, Equivalent: x.equivalent, Variant: v}
	}
	return out
}

// mutantConstructor builds base's lock with mutation mut, as its file does.
func mutantConstructor(base string, mut mutation) func() algorithm.Lock {
	switch base {
	case "corrected":
		return func() algorithm.Lock {
			return newDHTLock(correctedFixes, mut)
		}
	case "fenced":
		return func() algorithm.Lock {
			return fencedLock{lock: newDHTLock(correctedFixes, mut), mut: mut}
		}
	case "redlock":
		return func() algorithm.Lock {
			return redlock{attempts: 3, retryDelayMax: 200 * time.Millisecond, mut: mut}
		}
	}
	panic("variants: no mutants of " + base)
}
