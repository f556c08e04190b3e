package cli

import (
	"strings"

	"github.com/locksim/locksim/sim/explore"
)

// saveFailure writes a repro file for a failing outcome into dir (if dir is
// set) and returns the one command that replays the failure: by seed when
// the scenario flags rebuild the config, else from the file. A config only a
// -config file can express always gets a file, in repros/ (where sweep and
// explore write theirs) if no directory is given.
func (sc *scenarioFlags) saveFailure(t explore.Target, o explore.Outcome, dir string) (replay, path string, err error) {
	// A plan given in a file replays from the repro, which holds it.
	bySeed := expressibleByFlags(t.Config) && t.Plan == nil
	if dir == "" && !bySeed {
		dir = defaultReproDir
	}
	if dir != "" {
		if path, err = explore.WriteRepro(dir, explore.NewRepro(t, o)); err != nil {
			return sc.replayCommand(t, o.Seed), "", err // the seed still replays it, if flags can say its world
		}
	}
	if bySeed {
		return sc.replayCommand(t, o.Seed), path, nil
	}
	return explore.ReplayFileCommand(path), path, nil
}

// defaultReproDir is where every subcommand writes repro files unless -out
// says otherwise.
const defaultReproDir = "repros"

// replayCommand is explore.ReplayCommand with the check options the flags
// set that change a verdict: a -liveness-bound other than the default.
func (sc *scenarioFlags) replayCommand(t explore.Target, seed uint64) string {
	cmd := explore.ReplayCommand(t, seed)
	if b := strings.TrimSpace(sc.bound); b != "" && b != defaultLivenessBound {
		cmd += " -liveness-bound " + b
	}
	return cmd
}
