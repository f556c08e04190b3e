//go:build race

package isolate_test

// raceEnabled: the race detector reports a misused Env itself.
const raceEnabled = true
