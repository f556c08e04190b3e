package variants

// mutation names one deliberate one-line mistake in a variant, for the
// mutation tests (mutants_test.go): they measure how reliably locksim's
// default sweep, inside each variant's envelope, finds the mistakes a
// reviewer could make in a corrected lock. Each is a branch beside the line
// it mistakes, as the fix-* variants keep the original's line beside
// their fix. The zero value is the variant as designed; no registered
// variant is ever built with another, so `locksim variants` never shows a
// mutant.
type mutation uint8

const (
	asDesigned mutation = iota

	// corrected (and fenced, which is corrected underneath)
	mutQuorumHalf        // successfulLocks >= n/2: half is not a majority
	mutNoDriftMargin     // validity = ttl - elapsed: the drift margin forgotten
	mutMarginSign        // validity = ttl - elapsed + margin: the margin's sign slipped
	mutValidityFromNow   // validity measured from the grant, not from the first write
	mutOwnerPerClient    // owner = host/client, no nonce: one identity for all of a thread's acquisitions
	mutForeignCounted    // || for &&: an item read back with another owner counts as written
	mutNoPartialClear    // a failed attempt keeps what it wrote
	mutReleaseOnce       // a release that times out is not retried
	mutNoEarlyStop       // an attempt writes every server, even once a majority is out of reach
	mutBackoffPerAcquire // the backoff starts afresh with every acquire
	mutRetryTrustsTaken  // a retried write that finds the key taken counts it as its own

	// fenced
	mutTokenNoTieBreak  // the token is the bare high part, no tie bits
	mutCatchUpImpatient // one try per call to a counter: raise, increment, catch-up
	mutCatchUpSkipped   // the token is the highest counter read; the lagging counters are not raised to it
	mutTokenNoClock     // the counters are incremented, not raised to the holder's clock: the high part from the counters alone
	mutTieBitsOnTop     // the random tie bits above the high part, not below it
	mutTokenLastReply   // token = v: the high part is the last reply, not the largest
	mutTokenLeastReply  // the high part is the smallest reply, not the largest
	mutTokenAnyReply    // a token drawn from any reply, not from a majority of them
	mutRaiseAsIs        // the raise's reply is used as it is: no increment past a counter ahead of the clock
	mutNoValidityLeft   // the grant is returned even with no validity left after the draw
	mutFailedDrawKept   // a failed draw returns no grant but does not release the lock

	// redlock
	mutRedlockQuorumHalf // locked >= N/2: the +1 forgotten
	mutRedlockNoDrift    // validity = ttl - elapsed: the drift term forgotten
	mutRedlockLateStart  // start read after the SETs, not before
	mutRedlockHostValue  // value = the host name, not a random value per acquire
)
