//go:build race

package sim

// raceEnabled: the race detector slows runs about tenfold; the long
// property tests run fewer seeds under it.
const raceEnabled = true
