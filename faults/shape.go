package faults

import (
	"fmt"
	"time"
)

// Shape is the part of the simulated world a plan refers to by index, so a
// plan can be checked (Validate) and drawn (Swarm, PlanGen) without
// importing the simulator's config.
type Shape struct {
	Nodes       int           // DHT nodes: valid node indexes are [0, Nodes)
	Replication int           // nodes holding the key: the size of a drawn topology
	Hosts       int           // client hosts: valid host indexes are [0, Hosts)
	Clients     int           // client threads as configured (hosts × threads per host)
	Duration    time.Duration // virtual time a run lasts: events happen in [0, Duration)
	// TTL is the lock's time-to-live; generators size some faults around it
	// (a pause inside an acquire that outlasts it). Zero: the post's minute.
	TTL time.Duration
	// Ring: keys are placed on a consistent-hashing ring, and a topology
	// change names the ring's members (any number of nodes) rather than the
	// key's replica set.
	Ring bool
}

// ttl is the shape's TTL, the post's minute when unset.
func (s Shape) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return time.Minute
}

// Validate reports the first field of the shape that makes no sense.
func (s Shape) Validate() error {
	switch {
	case s.Nodes < 1:
		return fmt.Errorf("shape: nodes %d must be at least 1", s.Nodes)
	case s.Replication < 1 || s.Replication > s.Nodes:
		return fmt.Errorf("shape: replication %d must be in [1, %d nodes]", s.Replication, s.Nodes)
	case s.Hosts < 1:
		return fmt.Errorf("shape: hosts %d must be at least 1", s.Hosts)
	case s.Clients < 1:
		return fmt.Errorf("shape: clients %d must be at least 1", s.Clients)
	case s.Duration <= 0:
		return fmt.Errorf("shape: duration %v must be positive", s.Duration)
	case s.TTL < 0:
		return fmt.Errorf("shape: ttl %v must not be negative", s.TTL)
	}
	return nil
}

// ClientsFor is the number of client threads when p runs: the plan's
// ThreadsPerHost, when set, overrides the configured threads on every host.
// Pause events index clients in [0, ClientsFor(p)).
func (s Shape) ClientsFor(p Plan) int {
	if p.ThreadsPerHost > 0 {
		return s.Hosts * p.ThreadsPerHost
	}
	return s.Clients
}

// processes is how many processes of kind k the shape has (0: unknown kind).
func (s Shape) processes(k ProcessKind) int {
	switch k {
	case NodeProcess:
		return s.Nodes
	case HostProcess:
		return s.Hosts
	}
	return 0
}

// mustValidate panics on a shape generators cannot draw for: a generator
// has no error to return, and drawing indexes from an empty range would
// panic later with a less helpful message.
func (s Shape) mustValidate() {
	if err := s.Validate(); err != nil {
		panic("faults: " + err.Error())
	}
}
