package sim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/internal/arch386"
)

// determinismSeeds is how many swarm seeds the determinism tests run.
func determinismSeeds() int {
	if raceEnabled {
		return 20
	}
	return 200
}

// swarmScenario is seed's scenario: the default world, four simulated
// minutes long, and a swarm plan drawn from every fault class.
func swarmScenario(seed uint64) Scenario {
	c := DefaultConfig()
	c.Duration = 4 * time.Minute
	return Scenario{Config: c, Variant: ttlVariant, Seed: seed,
		Plan: faults.Swarm(seed, []faults.Class{faults.ClassAll}, shapeOf(c))}
}

// swarmHashes runs seeds 1..n once each and returns their trace hashes.
func swarmHashes(t testing.TB, n int) []uint64 {
	hashes := make([]uint64, n)
	for i := range hashes {
		res, err := Run(swarmScenario(uint64(i + 1)))
		if err != nil {
			t.Fatalf("seed %d: %v", i+1, err)
		}
		hashes[i] = res.TraceHash
	}
	return hashes
}

// Every seed, with every fault kind in play across the seeds, runs twice in
// this process to the same hash; distinct seeds give distinct hashes.
func TestDeterminismInProcess(t *testing.T) {
	n := determinismSeeds()
	first, second := swarmHashes(t, n), swarmHashes(t, n)
	for i := range first {
		if first[i] != second[i] {
			s := swarmScenario(uint64(i + 1))
			_, err := CheckDeterminism(s)
			t.Errorf("seed %d: hashes %016x then %016x: %v", i+1, first[i], second[i], err)
		}
	}
	if distinct := len(slices.Compact(slices.Sorted(slices.Values(first)))); distinct != n {
		t.Errorf("%d seeds gave only %d distinct hashes", n, distinct)
	}
	// The seeds must have exercised every timed fault kind and both restarts.
	seen := map[string]bool{}
	for i := range n {
		p := swarmScenario(uint64(i + 1)).Plan
		for _, e := range p.Events {
			seen[string(e.Kind)] = true
			if e.Kind == faults.Crash {
				seen[fmt.Sprintf("crash wipe=%v", e.Wipe)] = true
			}
		}
		if p.ThreadsPerHost > 0 {
			seen["threads"] = true
		}
	}
	for _, k := range []string{"crash", "partition", "clog", "jump", "pause", "topology", "crash wipe=true", "crash wipe=false", "threads"} {
		if !seen[k] {
			t.Errorf("no seed's plan has a %s fault: the determinism test does not cover it", k)
		}
	}
}

// Tracing only records: a traced run has the same hash as an untraced one,
// and CheckDeterminism agrees with Run.
func TestTracingDoesNotChangeTheRun(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		s := swarmScenario(seed)
		plain, _ := Run(s)
		h, err := CheckDeterminism(s)
		if err != nil || h != plain.TraceHash {
			t.Fatalf("seed %d: traced hash %016x (%v), untraced %016x", seed, h, err, plain.TraceHash)
		}
	}
}

const childEnv = "LOCKSIM_DETERMINISM_CHILD"

// The same seeds in a fresh process (another heap, another GOMAXPROCS,
// another map hash seed) give the same hashes: nothing outside the
// scenario leaks into a run.
func TestDeterminismFreshProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	n := determinismSeeds()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestDeterminismChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(n), "GOMAXPROCS=1", "GOGC=10")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child process: %v\n%s%s", err, out.String(), stderr.String())
	}
	child := map[uint64]uint64{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var seed, hash uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(sc.Text()), "hash %d %x", &seed, &hash); err == nil {
			child[seed] = hash
		}
	}
	if len(child) != n {
		t.Fatalf("child reported %d hashes, want %d:\n%s", len(child), n, out.String())
	}
	for i, h := range swarmHashes(t, n) {
		if seed := uint64(i + 1); child[seed] != h {
			t.Errorf("seed %d: hash %016x here, %016x in a fresh process", seed, h, child[seed])
		}
	}
}

// The same seeds on a 32-bit build (GOARCH=386: another int size, another
// word size for every hash and slice) give the same hashes: a seed's run
// is the same on any machine, not only on this one's architecture.
func TestDeterminismOn386(t *testing.T) {
	bin := arch386.TestBinary(t)
	n := determinismSeeds()
	out, err := arch386.Run(t, bin, []string{childEnv + "=" + strconv.Itoa(n)}, "-test.run=^TestDeterminismChild$", "-test.count=1")
	if err != nil {
		t.Fatalf("the 386 binary: %v\n%s", err, out)
	}
	other := map[uint64]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var seed, hash uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(sc.Text()), "hash %d %x", &seed, &hash); err == nil {
			other[seed] = hash
		}
	}
	if len(other) != n {
		t.Fatalf("the 386 binary reported %d hashes, want %d:\n%s", len(other), n, out)
	}
	mismatches := 0
	for i, h := range swarmHashes(t, n) {
		if seed := uint64(i + 1); other[seed] != h {
			mismatches++
			t.Errorf("seed %d: hash %016x on %s, %016x on 386", seed, h, runtime.GOARCH, other[seed])
		}
	}
	t.Logf("%d seeds, %d mismatches between %s and 386", n, mismatches, runtime.GOARCH)
}

// TestDeterminismChild is the fresh process's half: it runs only when the
// parent test starts it.
func TestDeterminismChild(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv(childEnv))
	if err != nil {
		t.Skip("runs only as TestDeterminismFreshProcess's child")
	}
	for i, h := range swarmHashes(t, n) {
		fmt.Printf("hash %d %016x\n", i+1, h)
	}
}

// flakyLock behaves differently on every run: the nondeterminism
// CheckDeterminism exists to catch.
type flakyLock struct{ runs *int }

func (l flakyLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	if *l.runs%2 == 1 && env.ClientName() == "h2/t0" {
		env.Topology(key)[0].ReadKey("unexpected")
	}
	return naiveLock{}.Acquire(env, key)
}

func (flakyLock) Release(env algorithm.Env, key string, g algorithm.Grant) {
	naiveLock{}.Release(env, key, g)
}

func TestCheckDeterminismNamesFirstDifference(t *testing.T) {
	runs, made := 0, 0
	v := algorithm.Variant{Name: "flaky", New: func() algorithm.Lock {
		if made%3 == 0 { // smallConfig has three clients: a new run
			runs++
		}
		made++
		return flakyLock{&runs}
	}}
	_, err := CheckDeterminism(Scenario{Config: smallConfig(), Variant: v, Seed: 1})
	var de *DeterminismError
	if !errors.As(err, &de) {
		t.Fatalf("got %v, want a DeterminismError", err)
	}
	if de.Index < 0 || de.LineA == de.LineB || !strings.Contains(de.LineA+de.LineB, "unexpected") {
		t.Fatalf("the error should name the first differing line, the stray read: %+v", de)
	}
	if !strings.Contains(err.Error(), "first difference at trace line") {
		t.Fatalf("message: %v", err)
	}
}
