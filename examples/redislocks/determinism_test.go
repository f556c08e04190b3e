package redislocks

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/realredis"
)

// referenceTargets are the reference locks as the default check runs
// them: each in its own world, under every fault class.
func referenceTargets(t *testing.T) map[string]explore.Target {
	out := map[string]explore.Target{}
	targets := []struct {
		lock  realredis.Lock
		nodes int
	}{
		{realredis.Lock{Name: "naive", New: Naive}, 1},
		{realredis.Lock{Name: "redsync-3", New: Redsync, Envelope: redlockEnvelope(), Retry: redsyncPromise}, 3},
		{realredis.Lock{Name: "redsync-5", New: Redsync, Envelope: redlockEnvelope(), Retry: redsyncPromise}, 5},
		{realredis.Lock{Name: "redislock", New: Redislock, Envelope: oneNodeEnvelope(), Retry: redislockPromise}, 1},
	}
	for _, x := range targets {
		c := realredis.DefaultConfig()
		c.Nodes, c.Replication = x.nodes, x.nodes
		out[x.lock.Name] = explore.Target{Variant: x.lock.Variant(), Config: c, Classes: []faults.Class{faults.ClassAll},
			Runner: realredis.Runner{T: t, Lock: x.lock}}
	}
	return out
}

// hashes runs seeds 1..n of the target on every core and returns their
// trace hashes, by seed.
func hashes(t *testing.T, target explore.Target, n int) []uint64 {
	out := make([]uint64, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	next := 0
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				o, err := explore.RunSeed(target, uint64(i+1), explore.DefaultOptions())
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				out[i] = o.Hash
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
	return out
}

// Every reference lock replays: the same seed gives the same trace hash
// twice in this process (whatever ran beside it) and in a fresh one; a
// seed that does not is named with its first divergent event. 1,000 seeds
// each with -long.
func TestSameSeedSameHashInProcessAndInAFreshOne(t *testing.T) {
	if os.Getenv("REDISLOCKS_HASHES") != "" {
		t.Skip("the child's test runs instead")
	}
	n := 12
	if testing.Short() {
		n = 4
	}
	if *long {
		n = 1000
	}
	targets := referenceTargets(t)
	for _, name := range []string{"naive", "redsync-3", "redsync-5", "redislock"} {
		target := targets[name]
		a, b := hashes(t, target, n), hashes(t, target, n)
		cmd := exec.Command(os.Args[0], "-test.run=^TestPrintHashes$", "-test.count=1")
		cmd.Env = append(os.Environ(), "REDISLOCKS_HASHES="+name+":"+strconv.Itoa(n))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: the fresh process failed: %v\n%s", name, err, out)
		}
		fresh := map[uint64]uint64{}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			var seed, h uint64
			if _, err := fmt.Sscanf(sc.Text(), "hash %d %x", &seed, &h); err == nil {
				fresh[seed] = h
			}
		}
		for i := range n {
			seed := uint64(i + 1)
			if a[i] == b[i] && fresh[seed] == a[i] {
				continue
			}
			lock := target.Runner.(realredis.Runner).Lock
			at := target.At(seed)
			_, derr := realredis.CheckDeterminism(t, realredis.Scenario{Config: at.Config, Lock: lock, Seed: seed, Plan: target.PlanFor(seed)})
			t.Fatalf("%s seed %d: hashes %016x, %016x in this process, %016x in a fresh one; %v", name, seed, a[i], b[i], fresh[seed], derr)
		}
		t.Logf("%s: %d seeds, the same hash twice in process and once in a fresh process", name, n)
	}
}

// TestPrintHashes is the fresh process's half: it prints one target's
// hashes.
func TestPrintHashes(t *testing.T) {
	spec := os.Getenv("REDISLOCKS_HASHES")
	if spec == "" {
		t.Skip("run by TestSameSeedSameHashInProcessAndInAFreshOne")
	}
	name, count, _ := strings.Cut(spec, ":")
	n, err := strconv.Atoi(count)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hashes(t, referenceTargets(t)[name], n) {
		fmt.Printf("hash %d %016x\n", i+1, h)
	}
}
