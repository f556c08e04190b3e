package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/locksim/locksim/sim"
)

// PCT is the probabilistic concurrency testing scheduler of Burckhardt,
// Kothari, Musuvathi and Nagarakatte (ASPLOS 2010), over the simulator's
// message deliveries: each client gets a random priority, and the messages
// of a client with a higher priority are delivered sooner (the lowest
// latency the config allows for the highest priority, the highest for the
// lowest, evenly between). At Depth-1 change points, drawn among the first
// Steps latency choices, the client whose message it is drops below every
// other. A bug that needs d ordering constraints among n clients and k
// steps is found with probability at least 1/(n·k^(d-1)) per seed. Every
// other choice point (loss, faults, think and hold times) is the seed's,
// as in a swarm sweep. Deterministic: the seed draws the priorities and
// the change points from a stream of its own.
type PCT struct {
	Depth int `json:"depth"` // d: d-1 priority change points; 1: none
	Steps int `json:"steps"` // k: where the change points may fall, in latency choices
}

// DefaultPCTSteps is PCT.Steps unless told otherwise: about the latency
// choices of a ten-minute run's first few acquisitions.
const DefaultPCTSteps = 400

// pctStream keeps PCT's draws apart from every stream of the kernel.
const pctStream = 0x9c7_5eed

// Validate checks the depth and the steps against their limits.
func (p PCT) Validate() error {
	switch {
	case p.Depth < 1 || p.Depth > 16:
		return fmt.Errorf("pct: depth %d is not between 1 and 16", p.Depth)
	case p.Steps < p.Depth-1 || p.Steps > 1_000_000:
		return fmt.Errorf("pct: steps %d must be at least depth-1 (%d) and at most 1000000", p.Steps, p.Depth-1)
	}
	return nil
}

// Choices is the Chooser of one seed's run with clients clients.
func (p PCT) Choices(seed uint64, clients int) func(sim.Chooser) sim.Chooser {
	return func(base sim.Chooser) sim.Chooser {
		r := rand.New(rand.NewPCG(seed, pctStream))
		c := &pctChooser{base: base, prio: make([]int, clients), low: -1}
		for i, v := range r.Perm(clients) {
			c.prio[i] = v // 0 .. clients-1, higher first
		}
		for len(c.changes) < p.Depth-1 {
			if at := 1 + r.IntN(p.Steps); !slices.Contains(c.changes, at) {
				c.changes = append(c.changes, at)
			}
		}
		return c
	}
}

type pctChooser struct {
	base    sim.Chooser
	prio    []int // per client; higher runs first
	changes []int // latency choices (1-based) at which the client drops
	step    int
	low     int // the next priority a dropped client gets
}

func (c *pctChooser) Between(ch sim.Choice, lo, hi int64) int64 {
	if ch.Kind != sim.ChoiceLatency || ch.Client < 0 || ch.Client >= len(c.prio) || len(c.prio) < 2 {
		return c.base.Between(ch, lo, hi)
	}
	c.step++
	if slices.Contains(c.changes, c.step) {
		c.prio[ch.Client] = c.low
		c.low--
	}
	above := 0 // clients that go before this one
	for i, p := range c.prio {
		if i != ch.Client && p > c.prio[ch.Client] {
			above++
		}
	}
	return lo + (hi-lo)*int64(above)/int64(len(c.prio)-1)
}

func (c *pctChooser) Chance(ch sim.Choice, ppm uint32) bool { return c.base.Chance(ch, ppm) }
