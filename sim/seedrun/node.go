package seedrun

import (
	"encoding/binary"
	"hash/fnv"

	"github.com/locksim/locksim/sim/schedule"
)

// Running one schedule of a systematic exploration (Exhaust): here, not
// in exhaust, because a worker process (isolate) runs schedules too, and
// both must run them alike.

// NodeResult is what running one schedule of an exploration (a node of
// exhaust's frontier) leaves for the next level.
type NodeResult struct {
	Ran    bool // false: the exploration was stopped first
	Failed bool
	Hash   uint64 // ExecutionKey: two schedules with one key ran the same
	Events int64
	Alts   []uint8 // alternatives at the points from node.from on
	// Finding is a failing schedule's outcome when it must not run again
	// in this process (its worker's finding, or a misuse of the Env).
	Finding *Outcome
}

// ExecutionKey is o's trace hash with every fault it injected, whole
// (when, where, what, for how long): a fault not yet seen by the end
// leaves the trace alike and the world not.
// It is computed for every schedule, so without fmt.
func ExecutionKey(o Outcome) uint64 {
	h := fnv.New64a()
	b := binary.LittleEndian.AppendUint64(make([]byte, 0, 64), o.Hash)
	h.Write(b)
	for _, e := range o.Injected {
		b = append(append(append(append(append(b[:0], e.Kind...), '/'), e.Target...), '/'), e.Point...)
		for _, x := range [...]int64{int64(e.At), int64(e.Node), int64(e.Index), int64(e.Delta), int64(e.For), int64(e.Client), int64(e.Spread), int64(len(e.Nodes))} {
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		}
		for _, list := range [2][]int{e.Nodes, e.Hosts} {
			for _, n := range list {
				b = binary.LittleEndian.AppendUint64(b, uint64(n))
			}
			b = append(b, '/')
		}
		h.Write(append(b, boolByte(e.Wipe), boolByte(e.OneWay), boolByte(e.BlackHole)))
	}
	return h.Sum64()
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// RunNode runs one schedule s of an exploration, with its faults on
// t's plan, and returns the alternatives at its branching points from
// from on (-1: none); opt.Keep keeps its history and describes each
// deviation taken (a counterexample's). The alternatives are recorded into
// scratch's memory (nil: new memory).
func RunNode(t Target, s schedule.Schedule, from int, opt Options, scratch []uint8) (Outcome, []uint8, error) {
	ch := schedule.NewChooser(s, t.Config.Under(*t.Plan), from, scratch, opt.Keep)
	out, err := runSchedule(t.Variant, t.Config, schedule.ExploreSeed, *t.Plan, opt, ch)
	return out, ch.Alternatives(), err
}
