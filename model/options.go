package model

import (
	"fmt"
	"time"
)

// DefaultLivenessBoundTTLs is how many TTLs a waiting client may go without
// anyone holding the lock, once faults healed, before that is a liveness
// violation (plus the clients' longest think time, History.Think: a client
// that failed may wait that long before it asks again). One TTL covers a
// lock item left by a crashed holder expiring; the rest is slack for
// retries and backoff.
const DefaultLivenessBoundTTLs = 3

// CheckOptions tune Check. The zero value is DefaultCheckOptions.
type CheckOptions struct {
	// Porcupine makes Check decide mutual exclusion with porcupine as well as
	// the sweep. The sweep alone decides by default (it is much faster); the
	// two must agree, and CheckErr reports it as an error if they do not.
	Porcupine bool
	// LivenessBoundTTLs is the liveness bound in multiples of History.TTL,
	// plus History.Think; 0 means DefaultLivenessBoundTTLs.
	LivenessBoundTTLs int64
	// LivenessBoundNS, when positive, is the liveness bound in nanoseconds
	// and overrides LivenessBoundTTLs.
	LivenessBoundNS int64
	// SkipLiveness leaves liveness unjudged (its metrics are still computed).
	SkipLiveness bool
	// Every lists every violation after the first of its kind in
	// Verdict.Later (each overlap of holds, each time the application's
	// data was destroyed, each wait and item past the liveness bound).
	// Off, they are only counted (Violation.Count).
	Every bool `json:"Every,omitempty"`
}

// DefaultCheckOptions are the options Check uses unless told otherwise.
func DefaultCheckOptions() CheckOptions {
	return CheckOptions{LivenessBoundTTLs: DefaultLivenessBoundTTLs}
}

// Validate reports the first option that makes no sense.
func (o CheckOptions) Validate() error {
	switch {
	case o.LivenessBoundTTLs < 0:
		return fmt.Errorf("check options: liveness_bound_ttls (%d) must not be negative", o.LivenessBoundTTLs)
	case o.LivenessBoundNS < 0:
		return fmt.Errorf("check options: liveness_bound_ns (%d) must not be negative", o.LivenessBoundNS)
	}
	return nil
}

// LivenessBound is the bound these options set for h, a span of true time.
func (o CheckOptions) LivenessBound(h History) time.Duration {
	if o.LivenessBoundNS > 0 {
		return time.Duration(o.LivenessBoundNS)
	}
	ttls := o.LivenessBoundTTLs
	if ttls == 0 {
		ttls = DefaultLivenessBoundTTLs
	}
	return time.Duration(ttls)*h.TTL + h.Think
}
