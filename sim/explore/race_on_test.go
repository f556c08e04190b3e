//go:build race

package explore

// raceEnabled: the race detector reports a misused Env itself.
const raceEnabled = true
