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

// highPartBoundedByClocks is why the mistakes in choosing a token's high
// part among the replies are equivalent inside fenced's envelope.
const highPartBoundedByClocks = "every reply is at least the holder's clock (a counter below it is raised to it), " +
	"so the high part is too, and inside fenced's envelope clocks agree within 5 s: a holder is refused only until its " +
	"clock passes the last token, as with catch-up-skipped (0 of 30,000 seeds). Where the clocks do not make up for it, " +
	"it starves holders (TestHighPartMistakesStarveWhereClocksDoNotMakeUp)"

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
		{"fenced", "token-no-clock", "server.Increment(fenceKey), not server.RaiseCounter(fenceKey, clock): the counters alone", mutTokenNoClock, ""},
		{"fenced", "tie-bits-on-top", "g.Token = env.Rand().Uint64N(1<<tokenTieBits)<<tokenHighBits | high", mutTieBitsOnTop, ""},
		{"fenced", "token-last-reply", "token = v", mutTokenLastReply, highPartBoundedByClocks},
		{"fenced", "token-least-reply", "token = min(token, v)", mutTokenLeastReply, highPartBoundedByClocks},
		{"fenced", "raise-as-is", "no Increment after the raise: its reply is the node's value as it is", mutRaiseAsIs,
			"the raise's reply is at least the holder's clock; a holder whose clock is behind a counter repeats the high part it holds, " +
				"and the tie bits order the two, so it is refused half the time until its clock passes the last token: within 5 s inside " +
				"fenced's envelope, as with catch-up-skipped (0 of 30,000 seeds). Where the clocks do not make up for it, it starves holders " +
				"(TestHighPartMistakesStarveWhereClocksDoNotMakeUp)"},
		{"fenced", "token-any-reply", "if len(replies) == 0 { return 0, false }", mutTokenAnyReply,
			"the catch-up confirms only nodes that replied and fails the draw unless a majority of them holds the token, " +
				"so a draw from fewer replies fails there instead, after at most a raise to each replier (0 of 30,000 seeds)"},
		{"fenced", "no-validity-left", "if !ok || high >= 1<<tokenHighBits, without env.Now() >= g.ValidUntil", mutNoValidityLeft,
			"a client checks its grant's validity before it uses it, and one granted with none left ends its belief at once and releases, " +
				"as fenced's give-back would; and fenced promises the resource, not the lock: a holder that used it anyway carries a " +
				"token drawn after the last, which the resource orders (0 of 30,000 seeds)"},
		{"fenced", "failed-draw-kept", "return algorithm.Grant{} without f.lock.Release(env, key, g)", mutFailedDrawKept, ""},
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
