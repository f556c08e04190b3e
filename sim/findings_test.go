package sim

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// misbehaving is a variant whose Acquire does something bad on client bad
// (by name) and behaves like naiveLock on the others.
func misbehaving(bad string, do func(env algorithm.Env)) algorithm.Variant {
	return algorithm.Variant{Name: "misbehaving", New: func() algorithm.Lock { return badLock{bad, do} }}
}

type badLock struct {
	bad string
	do  func(env algorithm.Env)
}

func (l badLock) Acquire(env algorithm.Env, key string) algorithm.Grant {
	if env.ClientName() == l.bad {
		env.Sleep(10 * time.Second) // misbehave mid-run, with the others busy
		l.do(env)
	}
	return naiveLock{}.Acquire(env, key)
}

func (l badLock) Release(env algorithm.Env, key string, g algorithm.Grant) {
	naiveLock{}.Release(env, key, g)
}

// runFinding runs a misbehaving variant and returns its abort; the run must
// end normally (no error, no crash of the test binary, no hang).
func runFinding(t *testing.T, c Config, v algorithm.Variant) (*model.Abort, Result) {
	t.Helper()
	res, err := Run(Scenario{Config: c, Variant: v, Seed: 5})
	if err != nil {
		t.Fatalf("a misbehaving algorithm is a finding, not an error: %v", err)
	}
	if res.History.Abort == nil {
		t.Fatal("the run should have ended with an abort")
	}
	return res.History.Abort, res
}

// badClient is client 1 ("h1/t0") in smallConfig.
const badClient = 1

func TestFindingPanicNamesClientAndStack(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		do         func(env algorithm.Env)
	}{
		{"panic", "acquire exploded", func(algorithm.Env) { panic("acquire exploded") }},
		{"runtime error", "index out of range", func(env algorithm.Env) {
			top := env.Topology(LockKey)
			_ = top[len(top)+env.Rand().IntN(1)]
		}},
	} {
		a, res := runFinding(t, smallConfig(), misbehaving("h1/t0", tc.do))
		if a.Kind != model.Panic || a.Client != badClient {
			t.Fatalf("%s: abort %s by client %d, want panic by client %d", tc.name, a.Kind, a.Client, badClient)
		}
		if !strings.Contains(a.Detail, tc.want) || !strings.Contains(a.Detail, "h1/t0") || !strings.Contains(a.Detail, "findings_test.go") {
			t.Fatalf("%s: detail should name the client, the panic value and the stack:\n%s", tc.name, a.Detail)
		}
		if a.Time < int64(10*time.Second) {
			t.Fatalf("%s: abort at %d, but the client misbehaved only after 10s", tc.name, a.Time)
		}
		if res.History.End != a.Time {
			t.Fatalf("%s: history ends at %d, want the abort time %d", tc.name, res.History.End, a.Time)
		}
	}
}

// A client that loops on calls that never wait would spin forever inside
// one event; the step limit ends it.
func TestFindingEndlessLoopWithoutYieldIsLivelock(t *testing.T) {
	c := smallConfig()
	c.MaxStepsNoYield = 10_000
	calls := 0
	a, _ := runFinding(t, c, misbehaving("h1/t0", func(env algorithm.Env) {
		for {
			calls++
			env.Now()
		}
	}))
	if a.Kind != model.Livelock || a.Client != badClient || !strings.Contains(a.Detail, "h1/t0") {
		t.Fatalf("abort %+v, want a livelock by client %d naming it", a, badClient)
	}
	if calls != 10_001 {
		t.Fatalf("the loop ran %d calls, want it stopped right past the 10000-step limit", calls)
	}
}

// A client that yields but lets virtual time pass only at a crawl keeps
// the event loop busy; the event cap, scaled to the run, ends it and says
// that time was passing.
func TestFindingZeroSleepLoopHitsEventCap(t *testing.T) {
	c := smallConfig()
	c.MaxEvents = 50_000
	a, res := runFinding(t, c, misbehaving("h1/t0", func(env algorithm.Env) {
		for {
			env.Sleep(0)
		}
	}))
	limit := c.EventCap(c.Hosts * c.ThreadsPerHost)
	if a.Kind != model.Livelock || a.Client != -1 || !strings.Contains(a.Detail, fmt.Sprintf("event cap of %d", limit)) || !strings.Contains(a.Detail, "time was passing") {
		t.Fatalf("abort %+v, want a livelock at the event cap of %d, saying time was passing", a, limit)
	}
	if res.Events != limit+1 || a.Time < int64(10*time.Second) {
		t.Fatalf("stopped after %d events at %d, want the cap+1 (%d), after 10s", res.Events, a.Time, limit+1)
	}
}

// The event cap scales with the clients and the duration: a long run with
// many clients makes far more events than max_events and is not cut short.
func TestEventCapScalesWithTheRun(t *testing.T) {
	c := smallConfig()
	c.Hosts, c.ThreadsPerHost, c.Duration = 4, 3, 5*time.Minute
	c.MaxEvents = 1_000
	res, err := Run(Scenario{Config: c, Variant: naive, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.History.Abort != nil || res.Events <= c.MaxEvents {
		t.Fatalf("%d events, abort %+v: want a whole run of more than %d events", res.Events, res.History.Abort, c.MaxEvents)
	}
}

// Calls that take no time at all: the events pile up at one instant, and
// the finding says that virtual time stood still.
func TestFindingTimelessCallsStopAtOneInstant(t *testing.T) {
	c := smallConfig()
	c.LatencyMin, c.LatencyMax, c.LatencyTail = 0, 0, 0
	a, _ := runFinding(t, c, misbehaving("h1/t0", func(env algorithm.Env) {
		for {
			env.Sleep(0)
		}
	}))
	if a.Kind != model.Livelock || !strings.Contains(a.Detail, "without virtual time passing") {
		t.Fatalf("abort %+v, want a livelock without virtual time passing", a)
	}
}

// An endless loop of server calls lets virtual time pass (each call takes
// a round trip), but the client never sleeps and never returns: a
// livelock finding naming it, at the calls cap.
func TestFindingEndlessCallsLoop(t *testing.T) {
	c := smallConfig()
	c.MaxCallsNoSleep = 2_000
	a, _ := runFinding(t, c, misbehaving("h1/t0", func(env algorithm.Env) {
		for {
			env.Topology("k")[0].ReadKey("k")
		}
	}))
	if a.Kind != model.Livelock || !strings.Contains(a.Detail, "h1/t0 made 2000 server calls in one Acquire") {
		t.Fatalf("abort %+v, want a livelock of h1/t0 at 2000 calls in one Acquire", a)
	}
}

// Well-behaved runs hit neither limit; the limits are not a hair trigger.
func TestFindingNoneForAWellBehavedRun(t *testing.T) {
	res, err := Run(Scenario{Config: smallConfig(), Variant: naive, Seed: 5})
	if err != nil || res.History.Abort != nil {
		t.Fatalf("naive lock, no faults: err %v abort %+v", err, res.History.Abort)
	}
}

// The virtual-time cap: a run ends at its duration whatever the clients are
// doing, and an operation still open then is closed with a ClientStop.
func TestRunEndsAtItsDuration(t *testing.T) {
	c := smallConfig()
	res, err := Run(Scenario{Config: c, Variant: misbehaving("h0/t0", func(env algorithm.Env) {
		env.Sleep(time.Hour) // still inside Acquire when the run ends
	}), Seed: 5})
	if err != nil || res.History.Abort != nil {
		t.Fatalf("err %v abort %+v", err, res.History.Abort)
	}
	if res.History.End != int64(c.Duration) {
		t.Fatalf("history ends at %d, want the duration %d", res.History.End, int64(c.Duration))
	}
	last := res.History.Events[len(res.History.Events)-1]
	stopped := false
	for _, e := range res.History.Events {
		if e.Time > int64(c.Duration) {
			t.Fatalf("event after the end: %+v", e)
		}
		if e.Client == 0 && e.Kind == model.ClientStop && strings.Contains(e.Reason, "acquire") {
			stopped = true
		}
	}
	if !stopped {
		t.Fatalf("client 0's open acquire should end with a ClientStop; last event %+v", last)
	}
}

// Aborted runs leave no client coroutine behind: every one is stopped.
func TestAbortedRunsLeaveNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	c := smallConfig()
	c.MaxStepsNoYield = 1000
	for range 5 {
		runFinding(t, c, misbehaving("h1/t0", func(algorithm.Env) { panic("boom") }))
		runFinding(t, c, misbehaving("h1/t0", func(env algorithm.Env) {
			for {
				env.Now()
			}
		}))
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before, %d after ten aborted runs", before, after)
	}
}

// A variant whose constructor panics is a finding too, never a crashed harness.
func TestFindingPanicInVariantConstructor(t *testing.T) {
	v := algorithm.Variant{Name: "broken-new", New: func() algorithm.Lock { panic("no lock for you") }}
	res, err := Run(Scenario{Config: smallConfig(), Variant: v, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	a := res.History.Abort
	if a == nil || a.Kind != model.Panic || !strings.Contains(a.Detail, "no lock for you") {
		t.Fatalf("want a panic finding naming the constructor's panic, got %+v", a)
	}
}

// A panic in an event handler is a simulator bug, not a client's finding,
// even when the handler runs on a blocked client's coroutine (see
// process.block): it must reach the caller of Run.
func TestSimulatorPanicInHandlerIsNotAFinding(t *testing.T) {
	c := smallConfig()
	plan := faults.Plan{Events: []faults.Event{{Kind: faults.Crash, Node: 0, At: 10 * time.Second}}}
	w, err := newWorld(Scenario{Config: c, Variant: naive, Plan: plan, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	w.plan.Events[0].Kind = "no such kind" // startFault panics on it
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "unknown fault kind") {
			t.Fatalf("recovered %v, want the handler's panic", r)
		}
		if w.abort != nil {
			t.Fatalf("the handler's panic became a finding: %s", w.abort.Detail)
		}
	}()
	w.loop()
}
