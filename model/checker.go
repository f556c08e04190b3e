package model

import "github.com/anishathalye/porcupine"

// Checker checks histories as Check does, keeping the memory the checkers
// derive from a history (holds, attempts, gaps, no-holder windows, counter
// operations) for the next one. A sweep checks thousands of histories and
// throws each away; allocating that memory anew for every one kept the
// garbage collector running every few seeds.
//
// The zero value is ready to use. A Checker must not be used by two
// goroutines at once (keep one per worker); nothing a call returns points
// into its memory.
type Checker struct {
	holds, byTime []Hold
	progress      []Hold // byTime without the holds the resource refused (keepProgress), or byTime itself
	progressBuf   []Hold // progress's own memory, never byTime's
	refused       int    // how many it left out
	refusedHold   []bool // by index into byTime: the resource refused that hold
	bySeq         []int  // keepProgress's scratch: byTime's indexes by StartSeq
	tallies       []accessTally
	lastGrant     []uint64
	attempts      []Attempt
	// byClient cuts byClientBacking per client: attemptsByClient.
	byClient        [][]Attempt
	byClientBacking []Attempt
	counts          []int // attempts per client
	next            []int // per client: noHolderWindows' first attempt not behind us
	stops           map[int]int64
	gaps            []timeGap
	waits           []clientWait
	windows         []NoHolderWindow
	windowClients   []int // backing of windows' Clients
	windowWaits     []ClientWait
	spans           []span // availableIn's
	reachOf         [][]Reach
	counterOps      []counterOp
	incs            []int // collidedIncrements' indexes into counterOps
	ops             []porcupine.Operation
	latencies       []float64
}

// Check is the package's Check with the Checker's memory.
func (c *Checker) Check(h History, opts CheckOptions) Verdict {
	v, err := c.CheckErr(h, opts)
	if err != nil {
		panic(err)
	}
	return v
}
