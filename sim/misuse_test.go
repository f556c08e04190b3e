package sim

import (
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/model"
)

// internalWords are what no finding may show a user: the simulator's own
// types, or a raw pointer.
var internalWords = regexp.MustCompile(`sim\.[a-z]|0x[0-9a-f]{6,}|Signal`)

// Env called from a goroutine the lock started is a misuse finding, every
// time, whether the client's own goroutine waits for that goroutine (on a
// channel, a WaitGroup, a mutex), sleeps meanwhile, or has gone on; and the
// finding says what the lock did, in words. On one P, as in an isolated
// worker: with more, a goroutine that calls while its client sleeps may
// not get to call before the run ends (it calls on a finished world then).
func TestMisuseOfEnvFromAGoroutineIsAlwaysMisuse(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector reports the misuse itself")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, tc := range []struct {
		name, call string
		do         func(env algorithm.Env)
	}{
		{"waits on a channel for a server call", "Server.ReadKey", func(env algorithm.Env) {
			s := env.Topology(LockKey)[0]
			done := make(chan struct{})
			go func() {
				s.ReadKey(LockKey)
				close(done)
			}()
			<-done
		}},
		{"waits on a WaitGroup for Now", "Env.Now", func(env algorithm.Env) {
			var wg sync.WaitGroup
			wg.Go(func() { env.Now() })
			wg.Wait()
		}},
		{"waits on a mutex for Sleep", "Env.Sleep", func(env algorithm.Env) {
			var mu sync.Mutex
			mu.Lock()
			go func() { env.Sleep(time.Second); mu.Unlock() }()
			mu.Lock()
		}},
		{"sleeps while its goroutine calls", "", func(env algorithm.Env) {
			go func() {
				for {
					env.Now()
				}
			}()
			env.Sleep(time.Millisecond)
		}},
		{"waits forever for a goroutine that calls", "Env.ClientName", func(env algorithm.Env) {
			never := make(chan struct{})
			go func() { env.ClientName(); close(never) }()
			<-never
			select {}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 20; seed++ {
				settle()
				res, err := Run(Scenario{Config: smallConfig(), Variant: misbehaving("h1/t0", tc.do), Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				a := res.History.Abort
				if a == nil || a.Kind != model.Misuse {
					t.Fatalf("seed %d: abort %+v, want misuse", seed, a)
				}
				want := "h1/t0's lock called Env.Now from a goroutine it started" // while its client goes on: in Acquire or not
				if tc.call != "" {
					want = "h1/t0's lock called " + tc.call + " from a goroutine it started, during Acquire"
				}
				if a.Client != badClient || !strings.Contains(a.Detail, want) {
					t.Fatalf("seed %d: detail %q, want it to say %q", seed, a.Detail, want)
				}
				if internalWords.MatchString(a.Detail) {
					t.Fatalf("seed %d: detail %q shows the simulator's insides", seed, a.Detail)
				}
				if res.History.End != a.Time || a.Time < int64(10*time.Second) {
					t.Fatalf("seed %d: history ends at %d, abort at %d: want both at the misuse, after 10s", seed, res.History.End, a.Time)
				}
			}
		})
	}
}

// settle lets goroutines that earlier tests and seeds left ending (here:
// the waiters TestAGoroutineThatLeavesTheEnvAloneIsNoMisuse releases) end,
// as in a worker process, where nothing else starts or ends goroutines
// while a seed runs (see world.others: one ending as the lock starts one
// would hide it).
func settle() {
	for same, n := 0, runtime.NumGoroutine(); same < 3; {
		runtime.Gosched()
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			same, n = 0, m
		}
	}
}

// A run that is not misused, with a goroutine of the lock's own alive that
// never calls the Env, is the run without it: the check for a foreign
// caller never takes the client's own calls for one.
func TestAGoroutineThatLeavesTheEnvAloneIsNoMisuse(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	quiet := misbehaving("h1/t0", func(env algorithm.Env) {
		go func() { <-stop }()
	})
	for seed := uint64(1); seed <= 5; seed++ {
		with, err := Run(Scenario{Config: smallConfig(), Variant: quiet, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		without, err := Run(Scenario{Config: smallConfig(), Variant: misbehaving("h1/t0", func(algorithm.Env) {}), Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if with.History.Abort != nil || with.TraceHash != without.TraceHash {
			t.Fatalf("seed %d: abort %+v, hash %x; without the goroutine %x", seed, with.History.Abort, with.TraceHash, without.TraceHash)
		}
	}
}

// runtime.Goexit in Acquire ends the run with a panic finding that says so,
// not the goroutine that called Run; the other runs of the process go on.
func TestGoexitInAcquireIsAFinding(t *testing.T) {
	before := runtime.NumGoroutine()
	for seed := uint64(1); seed <= 3; seed++ {
		a, _ := runFinding(t, smallConfig(), misbehaving("h1/t0", func(algorithm.Env) { runtime.Goexit() }))
		if a.Kind != model.Panic || a.Client != badClient || !strings.Contains(a.Detail, "h1/t0 called runtime.Goexit in Acquire") {
			t.Fatalf("seed %d: abort %+v, want a panic finding saying h1/t0 called runtime.Goexit in Acquire", seed, a)
		}
	}
	if after := runtime.NumGoroutine(); after > before+3 {
		t.Fatalf("%d goroutines before, %d after three runs: more than their three lost coroutines", before, after)
	}
}
