package faults

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"
)

const swarmSeeds = 2000

func TestSwarmIsDeterministic(t *testing.T) {
	for seed := range uint64(200) {
		a := Swarm(seed, []Class{ClassAll}, defaultShape)
		b := Swarm(seed, []Class{ClassAll}, defaultShape)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: two draws differ:\n%+v\n%+v", seed, a, b)
		}
		// A set of classes, not a list: order does not matter.
		c := Swarm(seed, []Class{ClassPause, ClassLoss, ClassCrash}, defaultShape)
		d := Swarm(seed, []Class{ClassCrash, ClassPause, ClassLoss, ClassPause}, defaultShape)
		if !reflect.DeepEqual(c, d) {
			t.Fatalf("seed %d: class order changed the plan", seed)
		}
	}
	if reflect.DeepEqual(Swarm(1, []Class{ClassAll}, defaultShape), Swarm(2, []Class{ClassAll}, defaultShape)) {
		t.Error("seeds 1 and 2 draw the same plan")
	}
}

// TestSwarmByClass checks, for every class and shape, that swarm plans are
// valid, contain only the class's faults, are never fault-free unless the
// class is none, and over many seeds contain every fault of the class.
func TestSwarmByClass(t *testing.T) {
	for _, tc := range classFaults {
		for si, s := range testShapes {
			t.Run(fmt.Sprintf("%s/shape%d", tc.class, si), func(t *testing.T) {
				seen := map[string]bool{}
				for seed := range uint64(swarmSeeds) {
					p := Swarm(seed, []Class{tc.class}, s)
					checkPlan(t, p, tc.class, s, fmt.Sprintf("seed %d", seed))
					if tc.class != ClassNone && p.Size() == 0 {
						t.Fatalf("seed %d: fault-free plan for class %s", seed, tc.class)
					}
					for _, f := range p.Faults() {
						seen[f] = true
					}
				}
				for _, f := range tc.faults {
					if !seen[f] {
						t.Errorf("%d seeds never produced %s", swarmSeeds, f)
					}
				}
			})
		}
	}
}

// checkPlan fails t unless p is valid in s, respects class, is sorted, and
// round-trips through JSON.
func checkPlan(t fataler, p Plan, class Class, s Shape, what string) {
	t.Helper()
	if err := p.Validate(s); err != nil {
		t.Fatalf("%s: %v\n%+v", what, err, p)
	}
	if err := Allow(class).Check(p); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, f := range p.Faults() {
		if !slices.Contains(allowedFaults(Allow(class)), f) {
			t.Fatalf("%s: fault %s outside class %s", what, f, class)
		}
	}
	roundTrip(t, p)
}

// TestSwarmRanges pins the documented parameter ranges.
func TestSwarmRanges(t *testing.T) {
	var topologies, maxDrift, pausesOverTTL, oneWay, forever, bursts int
	var emptyTopologies, staleTopologies, blackHoles int
	for seed := range uint64(swarmSeeds) {
		p := Swarm(seed, []Class{ClassAll}, defaultShape)
		n := p.Network
		if n.LossPPM != 0 && (n.LossPPM < 1_000 || n.LossPPM > 200_000) ||
			n.DuplicatePPM != 0 && (n.DuplicatePPM < 1_000 || n.DuplicatePPM > 100_000) ||
			n.ReplyLossPPM != 0 && (n.ReplyLossPPM < 10_000 || n.ReplyLossPPM > 300_000) {
			t.Fatalf("seed %d: network %+v out of range", seed, n)
		}
		for _, c := range p.Clocks {
			maxDrift = max(maxDrift, int(abs(c.DriftPPM)))
		}
		if p.ThreadsPerHost != 0 && (p.ThreadsPerHost < 2 || p.ThreadsPerHost > 3) {
			t.Fatalf("seed %d: threads %d", seed, p.ThreadsPerHost)
		}
		topologies = 0
		crashesAt := map[time.Duration][]int{} // nodes crashing at one instant
		for _, e := range p.Events {
			if e.Kind == Crash {
				if slices.Contains(crashesAt[e.At], e.Node) {
					t.Fatalf("seed %d: node %d crashes twice at %v", seed, e.Node, e.At)
				}
				crashesAt[e.At] = append(crashesAt[e.At], e.Node)
			}
			if e.Kind == Topology {
				topologies++
				if len(e.Nodes) != defaultShape.Replication && !(len(e.Nodes) == 0 && e.For > 0) {
					t.Fatalf("seed %d: topology %v is not replication-sized, nor empty for a while", seed, e.Nodes)
				}
				if len(e.Nodes) == 0 {
					emptyTopologies++
				}
				if e.Spread > 0 {
					staleTopologies++
				}
			}
			if e.Kind == Pause && e.For > defaultTTL {
				pausesOverTTL++
			}
			if e.OneWay {
				oneWay++
			}
			if e.Kind == Crash && e.For == 0 {
				forever++
			}
			if e.BlackHole {
				blackHoles++
			}
		}
		if topologies > 3 {
			t.Fatalf("seed %d: %d topology events", seed, topologies)
		}
		if len(p.Events) > maxSwarmEvents*(1+maxBurstExtra) {
			t.Fatalf("seed %d: %d events", seed, len(p.Events))
		}
		for _, nodes := range crashesAt {
			if len(nodes) > 1+maxBurstExtra {
				t.Fatalf("seed %d: a burst of %d crashes", seed, len(nodes))
			}
			if len(nodes) > 1 {
				bursts++
			}
		}
	}
	if maxDrift < 100_000 {
		t.Errorf("largest drift %d ppm: large drift is never drawn", maxDrift)
	}
	if pausesOverTTL == 0 || oneWay == 0 || forever == 0 || bursts == 0 || emptyTopologies == 0 || staleTopologies == 0 || blackHoles == 0 {
		t.Errorf("pauses over the TTL %d, one-way partitions %d, crashes for good %d, crash bursts %d, empty topologies %d, "+
			"stale topologies %d, black-hole crashes %d: want some of each",
			pausesOverTTL, oneWay, forever, bursts, emptyTopologies, staleTopologies, blackHoles)
	}
	ring := defaultShape
	ring.Ring = true
	sizes := map[int]bool{}
	for seed := range uint64(swarmSeeds) {
		for _, e := range Swarm(seed, []Class{ClassTopology}, ring).Events {
			if err := (Plan{Events: []Event{e}}).Validate(ring); err != nil {
				t.Fatalf("seed %d: ring topology %v: %v", seed, e, err)
			}
			sizes[len(e.Nodes)] = true
		}
	}
	for n := 0; n <= ring.Nodes; n++ {
		if !sizes[n] {
			t.Errorf("no ring topology change has %d members (want every size, 0 for a while)", n)
		}
	}
}

const defaultTTL = 60e9

func abs(v int64) int64 { return max(v, -v) }

// allowedFaults names every fault a allows: the world's and the deployment
// lapses.
func allowedFaults(a Allowed) []string {
	var out []string
	for f := feature(0); f < numFeatures; f++ {
		if a.permits(f) {
			out = append(out, f.String())
		}
	}
	return out
}
