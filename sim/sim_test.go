package sim

import (
	"errors"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// naiveLock is a deliberately simple test algorithm: write-if-absent on every
// node of the topology, granted on a majority, released by removing its own
// items. Owner is the client name.
type naiveLock struct{}

func (naiveLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	owner := env.ClientName()
	ok := 0
	top := env.Topology(key)
	for _, s := range top {
		if err := s.WriteIfDoesNotExistsOrSameServer(key+"_lock", owner, env.Now()+time.Minute); err == nil {
			ok++
		}
	}
	if ok > len(top)/2 {
		return algorithm.Grant{Granted: true, Owner: owner}
	}
	naiveLock{}.Release(env, key, algorithm.Grant{Owner: owner})
	return algorithm.Grant{}
}

func (naiveLock) Release(env algorithm.Env, key string, g algorithm.Grant) {
	for _, s := range env.Topology(key) {
		if it, err := s.ReadKey(key + "_lock"); err == nil && it.Owner == g.Owner {
			_ = s.RemoveKey(key+"_lock", it.Version)
		}
	}
}

var naive = algorithm.Variant{Name: "naive", New: func() algorithm.Lock { return naiveLock{} }}

// smallConfig is the default world for two minutes, every key on n0, n1, n2
// in that order (PlacementFirst), so that tests can name nodes by index.
func smallConfig() Config {
	c := DefaultConfig()
	c.Placement = PlacementFirst
	c.Duration = 2 * time.Minute
	return c
}

func TestRunProducesHistory(t *testing.T) {
	res, err := Run(Scenario{Config: smallConfig(), Variant: naive, Seed: 1, Trace: true})
	if err != nil {
		t.Fatal(err)
	}
	h := res.History
	grants := 0
	for _, e := range h.Events {
		if e.Kind == model.AcquireReturn && e.Granted {
			grants++
		}
	}
	if grants == 0 || h.FinalValue == 0 || h.Messages == 0 {
		t.Fatalf("a fault-free run should grant and write: grants=%d final=%d messages=%d", grants, h.FinalValue, h.Messages)
	}
	if h.Abort != nil {
		t.Fatalf("unexpected abort: %+v", h.Abort)
	}
	t.Logf("events=%d grants=%d final=%d messages=%d trace lines=%d hash=%x", res.Events, grants, h.FinalValue, h.Messages, len(res.Trace), res.TraceHash)
}

func TestSameSeedSameHash(t *testing.T) {
	s := Scenario{Config: smallConfig(), Variant: naive, Seed: 7}
	a, _ := Run(s)
	b, _ := Run(s)
	if a.TraceHash != b.TraceHash {
		t.Fatalf("same scenario, different hashes %x %x", a.TraceHash, b.TraceHash)
	}
	s.Seed = 8
	c, _ := Run(s)
	if c.TraceHash == a.TraceHash {
		t.Fatalf("different seeds gave the same hash %x", a.TraceHash)
	}
}

func TestInvalidConfigNamesField(t *testing.T) {
	c := smallConfig()
	c.Replication = 9
	_, err := Run(Scenario{Config: c, Variant: naive})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "replication" {
		t.Fatalf("want a replication ConfigError, got %v", err)
	}
	_ = faults.Plan{}
}
