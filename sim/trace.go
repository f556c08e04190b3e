package sim

import (
	"fmt"

	"github.com/locksim/locksim/model"
)

// The trace hash folds every event into 64 bits (FNV-1a over 64-bit words,
// then a final avalanche): cheap enough to run always, so every run is
// fingerprinted, not only traced ones.
const (
	fnvOffset = 0xcbf29ce484222325
	fnvPrime  = 0x100000001b3
)

func (w *world) mix(a, b, c, d uint64) {
	h := w.hash
	h = (h ^ a) * fnvPrime
	h = (h ^ b) * fnvPrime
	h = (h ^ c) * fnvPrime
	h = (h ^ d) * fnvPrime
	w.hash = h
}

func finalHash(h uint64) uint64 { return splitmix64(h) }

// note appends a human-readable trace line when tracing is on. Its arguments
// are evaluated and boxed before it can return, so per-message callers test
// w.tracing first: an untraced run must not pay for describing messages.
func (w *world) note(format string, args ...any) {
	if !w.tracing {
		return
	}
	w.trace = append(w.trace, model.TraceEvent{Time: w.now, Seq: uint64(len(w.trace) + 1), What: fmt.Sprintf(format, args...)})
}
