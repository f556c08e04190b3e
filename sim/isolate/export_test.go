package isolate

import "os"

// Hooks of the package's external tests (isolate_test), which run
// sweeps, comparisons and explorations, all of which import this package.

// SetWorkerStarted makes f see each worker's process once it started
// (nil: nothing does).
func SetWorkerStarted(f func(*os.Process)) { workerStarted = f }

// SetPdeathsig turns the parent-death signal of the workers started from
// now on on or off (off: the lifeline pipe alone ends an orphaned worker).
func SetPdeathsig(on bool) { usePdeathsig = on }
