package variants

import "locksim/algorithm"

// corrected is the original with every fix that needs no help from the
// protected resource:
//
//   - a strict majority of the topology (fix-quorum);
//   - a unique owner per acquisition (fix-identity);
//   - a validity deadline, TTL - elapsed - drift margin (fix-validity);
//   - node-side TTLs, SetIfAbsentTTL and CompareAndDelete (fix-clock);
//   - a failed attempt clears its own items, lost replies included (fix-partial);
//   - restarted nodes refuse writes for one TTL (fix-amnesia);
//   - it writes every server before deciding, instead of giving up on the
//     first KeyAlreadyExists, and retries a failed attempt up to three times
//     after a randomised backoff, instead of scavenging.
//
// It is safe only under its assumptions: clock rates differ by less than the
// drift margin, a client never pauses between its validity check and its use
// of the resource for longer than what is left of its validity, and the
// topology does not change while a lock is held. Without fencing, a long
// enough pause between the validity check and the resource write still
// breaks it: the lock expires, another client takes it, and the paused
// client's write lands anyway. Only the resource can refuse that write
// (see fenced).
func init() {
	registerDHT(algorithm.Variant{
		Name:        "corrected",
		Summary:     "every fix short of fencing: majority, unique owner, node TTL, validity, partial release, quarantine, backoff",
		Quarantine:  true,
		Assumptions: "clock rates differ by less than the drift margin, no client pause between validity check and use, fixed topology while held",
	}, correctedFixes)
}

var correctedFixes = fixes{
	strictQuorum:   true,
	uniqueOwner:    true,
	validity:       true,
	nodeClock:      true,
	releasePartial: true,
	tryAll:         true,
	backoff:        true,
}
