package variants

import "github.com/locksim/locksim/algorithm"

// corrected is the original with every fix that needs no help from the
// protected resource:
//
//   - a strict majority of the topology (fix-quorum);
//   - a unique owner per acquisition (fix-identity), and a new one for each
//     retry within it;
//   - a validity deadline, TTL - elapsed - drift margin (fix-validity);
//   - node-side TTLs, SetIfAbsentTTL and CompareAndDelete (fix-clock);
//   - a failed attempt clears its own items, lost replies included (fix-partial);
//   - restarted nodes refuse writes for one TTL (fix-amnesia);
//   - it writes every server before deciding, instead of giving up on the
//     first KeyAlreadyExists, and retries a failed attempt up to three times
//     after a randomised backoff, instead of scavenging;
//   - it retries a release that times out, up to three times per server, and
//     a failed attempt clears what every attempt of the acquire wrote.
//
// It is safe only inside its envelope (leaseEnvelope): clock rates differ
// by at most the drift margin and no clock steps, a client never pauses (or
// waits on the network) between its validity check and its use of the
// resource for longer than what is left of its validity, the topology does
// not change while a lock is held, and restarted nodes are quarantined.
// Without fencing, a long enough pause between the validity check and the
// resource write still breaks it: the lock expires, another client takes
// it, and the paused client's write lands anyway. Only the resource can
// refuse that write (see fenced). Inside the envelope, 100,000 seeds of
// every fault class show no bug (TestNoBugInsideTheEnvelope, -long).
func init() {
	registerDHT(algorithm.Variant{
		Name:     "corrected",
		Summary:  "every fix short of fencing: majority, unique owner, node TTL, validity, partial release, quarantine, backoff",
		Envelope: leaseEnvelope(retriedReleaseLossMaxPPM),
	}, Place{Family: AllFixes}, correctedFixes)
}

// leaseEnvelope is the envelope of a lock whose holder stops at a validity
// deadline and nothing else protects the resource: corrected and redlock.
// They differ in the message loss under which they stay live.
func leaseEnvelope(lossMaxPPM int64) algorithm.Envelope {
	return algorithm.Envelope{
		Safety: algorithm.Assumptions{
			// The validity ends driftMarginPPM of the TTL (plus 2 ms) before
			// the items do, so clocks may run that much apart. True time
			// counts as a clock: the quarantine is measured in it.
			ClockRateDiffMaxPPM: driftMarginPPM,
			// A node clock stepping forward expires items early; a host
			// clock stepping back extends the belief. The margin's fixed
			// 2 ms is all the slack there is, so no step is tolerated.
			NoClockJumps:           true,
			UseWithinValidity:      true,
			FixedTopologyWhileHeld: true,
			RestartQuarantine:      true,
		},
		// A lock item under a name the application uses too is never
		// the lock's: SET NX fails there for ever (found by locksim once
		// worlds held application data, <key>_lock on a majority of the
		// key's nodes). The DHT's namespace is shared; the deployment
		// must keep lock names to the lock.
		Liveness: algorithm.Assumptions{MessageLossMaxPPM: lossMaxPPM, ReservedLockNames: true},
	}
}

var correctedFixes = fixes{
	strictQuorum:   true,
	uniqueOwner:    true,
	validity:       true,
	nodeClock:      true,
	releasePartial: true,
	tryAll:         true,
	backoff:        true,
	releaseRetries: true,
	writeRetries:   true,
}
