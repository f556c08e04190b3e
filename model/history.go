// Package model holds what a run leaves behind — its History — and the
// checkers that turn a History into a Verdict. It imports nothing of
// locksim's and knows nothing of the simulator: a History is plain data.
//
// Every instant in a History is true time, nanoseconds since the scenario
// epoch: the simulator's clock, which no process reads. Spans (TTL, Think,
// liveness bounds) are time.Duration, of true time too.
// Events are in the order they happened; Seq is their global sequence number
// (strictly increasing), which breaks ties between equal times.
package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind is what a history event records.
type Kind uint8

const (
	// AcquireCall: the client called Acquire.
	AcquireCall Kind = iota + 1
	// AcquireReturn: Acquire returned; Granted, Token, HasToken, ValidUntilTrue are set.
	AcquireReturn
	// BeliefEnd: the client stops believing it holds the lock: it is about to
	// call Release (Reason "release") or its validity deadline passed on its
	// own clock (Reason "expired").
	BeliefEnd
	// ReleaseCall and ReleaseReturn bracket the Release call.
	ReleaseCall
	ReleaseReturn
	// ResourceRead: the client read the protected resource; Value is what it
	// read, Accepted false if fencing rejected the token (then no value).
	ResourceRead
	// ResourceWrite: the client wrote Value; Accepted false if fencing rejected it.
	ResourceWrite
	// ClientStop: the client stopped for good (crashed or the run ended) in
	// the middle of an operation: its open operation's outcome is unknown.
	ClientStop
)

var kindNames = [...]string{"?", "acquire-call", "acquire-return", "belief-end", "release-call",
	"release-return", "resource-read", "resource-write", "client-stop"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "?"
}

// Event is one entry of a History.
type Event struct {
	Seq    uint64 `json:"seq"`
	Time   int64  `json:"t"`
	Client int    `json:"c"`
	Kind   Kind   `json:"k"`

	Granted  bool   `json:"granted,omitempty"`
	Token    uint64 `json:"token,omitempty"`
	HasToken bool   `json:"has_token,omitempty"`
	// ValidUntilTrue is the true time the grant's validity ends (the
	// instant the holder's clock reads Grant.ValidUntil); 0: none.
	ValidUntilTrue int64 `json:"valid_until,omitempty"`
	// LeaseLapsed: ValidUntilTrue is when the server ended a grant that
	// was valid when given (the holder's etcd lease expired or was
	// revoked while it held), which the holder was not told.
	LeaseLapsed bool  `json:"lease_lapsed,omitempty"`
	Value       int64 `json:"value,omitempty"`
	// Sent is the true time a resource access left the client (its event
	// is recorded when it reaches the resource).
	Sent     int64  `json:"sent,omitempty"`
	Accepted bool   `json:"accepted,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// Client describes one client thread.
type Client struct {
	Name string `json:"name"` // "h0/t1"
	Host string `json:"host"` // "h0"
}

// LockItem is a lock item found on a node when the run ended.
type LockItem struct {
	Node  string `json:"node"`
	Owner string `json:"owner"`
}

// Abort is set when the run did not end normally: a client panicked, a
// client never yielded, or the run hit its event cap.
type Abort struct {
	Kind   ViolationKind `json:"kind"` // Panic, Livelock or Misuse
	Client int           `json:"client"`
	Time   int64         `json:"t"`
	Detail string        `json:"detail"` // panic value and stack, or which cap
}

// History is what one run leaves behind for the checkers.
type History struct {
	Clients []Client `json:"clients"`
	Events  []Event  `json:"events"`
	// End is the true time the run ended.
	End int64 `json:"end"`
	// Healed is the true time from which no fault is active any more (the
	// end of the last timed fault); liveness is judged after it.
	Healed int64 `json:"healed"`
	// TTL is the lock's time to live as the deployment sets it, a span of
	// true time (each node's clock runs it at its own rate); liveness
	// bounds are multiples of it.
	TTL time.Duration `json:"ttl"`
	// Think is the longest a client waits between two attempts of its own
	// (the workload's think time), a span of true time: a waiting client
	// may spend that long not asking, so liveness bounds add it.
	Think time.Duration `json:"think,omitempty"`
	// Fenced says the resource checked tokens.
	Fenced bool `json:"fenced,omitempty"`
	// Leftovers are lock items still on nodes when the run ended.
	Leftovers []LockItem `json:"leftovers,omitempty"`
	// Messages counts messages sent (requests and replies) in the run.
	Messages int64 `json:"messages"`
	// FinalValue is the protected counter's value at the end.
	FinalValue int64  `json:"final_value"`
	Abort      *Abort `json:"abort,omitempty"`
	// Pauses are the pauses clients took at fault points, and the plan's
	// timed pauses that waited for one (in-acquire) when they struck, in
	// time order (the other timed pauses are in the plan). Facts for
	// reports and for checking a run against an envelope; no checker of
	// the properties reads them.
	Pauses []PointPause `json:"pauses,omitempty"`
	// Extends are the Extend calls of holders (real code: sim/realredis),
	// each with what it answered, in the order they returned: for reports;
	// a hold's validity is its grant's ValidUntilTrue, the last one an
	// Extend reported.
	Extends []Extend `json:"extends,omitempty"`
	// Restarts are the nodes that came back up, in time order: when, and
	// whether they had lost their data while down.
	Restarts []Restart `json:"restarts,omitempty"`
	// Replicas is how many nodes held the key when the run began.
	Replicas int `json:"replicas"`
	// Moves are the key's topology changes, when they happened.
	Moves []Move `json:"moves,omitempty"`
	// Reachable says Reach was recorded: liveness is then judged by it,
	// faults or not (else only after Healed).
	Reachable bool `json:"reachable,omitempty"`
	// Reach are the stretches of true time during which each client could
	// make progress on the lock, per client in time order.
	Reach []Reach `json:"reach,omitempty"`
	// LongItems are the lock items that stayed on a node for longer than
	// two TTLs, in the order they went (the end of the run last).
	LongItems []ItemLife `json:"long_items,omitempty"`
	// Items, when recorded (sim.Scenario.Items), are every lock item's
	// stays on nodes, in the order they ended (those still there when the
	// run ended last): what ExplainWait reads.
	Items []ItemLife `json:"items,omitempty"`
	// AppData names the keys the application kept its data under, and
	// DataLoss the times a client destroyed some of it, in time order.
	AppData  []string   `json:"app_data,omitempty"`
	DataLoss []DataLost `json:"data_loss,omitempty"`
	// Leaks are the times a Lock returned failure while its own key held
	// the lock on most of the nodes it asked (real code: sim/realredis
	// reads the nodes as the call returns), in time order.
	Leaks []Leak `json:"leaks,omitempty"`
	// GaveUps are the times a Lock that promises to keep trying returned
	// failure before its promise was up, and the lock then stayed free,
	// within the promise, long enough that a try would have got it (real
	// code: sim/realredis reads the nodes after the call returns), in
	// time order.
	GaveUps []GaveUp `json:"gave_ups,omitempty"`
	// Starved are the times a client stayed inside a Lock that promises
	// to keep trying while the lock was free, the client and the nodes it
	// asked clear of every fault, for longer than the promised gap
	// between tries and three round trips, with no one taking it (real
	// code: sim/realredis reads the nodes during the call), in time order.
	Starved []Starved `json:"starved,omitempty"`
	// Unsupported names the commands the lock sent that the simulator does
	// not simulate (a simulated Redis node answered each with Redis's
	// unknown-command error), sorted.
	Unsupported []string `json:"unsupported,omitempty"`
}

// DataLost is the application's data under Key on Node destroyed by a
// client's request at Time: How is "removed" or "overwrote".
type DataLost struct {
	Node   string `json:"node"`
	Key    string `json:"key"`
	Time   int64  `json:"t"`
	Client int    `json:"c"`
	How    string `json:"how"`
}

// Leak is a Lock that returned failure at Time while the key it wrote in
// that call held the lock in its name on Nodes, most of those it asked,
// until Until (true time, the latest of them): the library says the
// client does not hold a lock that the nodes grant it, and no one will
// release it before it expires.
type Leak struct {
	// Unlock: the call that left the lock in its client's name was an
	// Unlock that returned success, while a refresher extended the lock
	// (faults.Use.RefreshPPM; Reason is what the refresher answered), not
	// a Lock that returned failure.
	Unlock bool     `json:"unlock,omitempty"`
	Client int      `json:"c"`
	Time   int64    `json:"t"`
	Nodes  []string `json:"nodes"`
	Asked  int      `json:"asked"`
	Until  int64    `json:"until,omitempty"`  // 0: the key does not expire
	Reason string   `json:"reason,omitempty"` // the failure Lock returned
}

// GaveUp is a Lock by Client, called at Called, that returned failure at
// Time (Reason) although it promises to keep trying until Promised, while
// the lock was free on Nodes (of the Asked nodes it asked in that call,
// a majority, each up and reachable from its host) from FreeFrom to
// FreeTo, longer than Gap, the longest wait between tries it promises,
// plus two round trips: any try in that stretch would have got it.
type GaveUp struct {
	Client   int      `json:"c"`
	Called   int64    `json:"called"`
	Time     int64    `json:"t"`
	Promised int64    `json:"promised"`
	Gap      int64    `json:"gap"`
	FreeFrom int64    `json:"free_from"`
	FreeTo   int64    `json:"free_to"`
	Nodes    []string `json:"nodes"`
	Asked    int      `json:"asked"`
	Reason   string   `json:"reason,omitempty"`
}

// Starved is a Lock by Client, called at Called, that was still inside
// its call, trying, while the lock was free on Nodes (of the Asked nodes
// it had asked in that call, a majority) from FreeFrom to FreeTo, longer
// than Gap, the longest wait between tries it promises, plus three round
// trips; all that time the client was not paused, every node it asked was
// up, unclogged and reachable both ways, and none of its connections to
// them had lost a message, so nothing but the lock kept a try from taking
// it.
type Starved struct {
	Client   int      `json:"c"`
	Called   int64    `json:"called"`
	Gap      int64    `json:"gap"`
	FreeFrom int64    `json:"free_from"`
	FreeTo   int64    `json:"free_to"`
	Nodes    []string `json:"nodes"`
	Asked    int      `json:"asked"`
}

// Reach is a stretch of true time, [From, To), during which a client
// could make progress on the lock: it was not paused, it knew the key's
// current nodes, and a majority of them were up, took lock writes, and
// could be reached from its host and answer it.
type Reach struct {
	Client int   `json:"c"`
	From   int64 `json:"from"`
	To     int64 `json:"to"`
}

// ItemLife is one lock item's stay on a node: written (or last rewritten)
// by Client at From, gone at To (removed, expired, lost with its node's
// data, or still there when the run ended).
type ItemLife struct {
	Node  string `json:"node"`
	Owner string `json:"owner"`
	// Key is the item's key, and App marks the application's data under
	// it; both only in History.Items.
	Key    string `json:"key,omitempty"`
	App    bool   `json:"app,omitempty"`
	Client int    `json:"c"`
	From   int64  `json:"from"`
	To     int64  `json:"to"`
	// How the stay ended, in History.Items: "removed", "overwritten" (the
	// application's data, by a lock write), "rewritten" (its owner's next write),
	// "expired", "wiped" (its node lost its data), "" (still there when
	// the run ended). By is the client whose request ended it (-1: none),
	// and Sent the true time that request left the client: a late
	// duplicate shows as a Sent long before To.
	How  string `json:"how,omitempty"`
	By   int    `json:"by,omitempty"`
	Sent int64  `json:"sent,omitempty"`
}

// Move is the key's topology becoming Nodes: true from Time, known to
// every client by Until (caches learn of it at their own moments).
type Move struct {
	Time  int64 `json:"t"`
	Nodes []int `json:"nodes"`
	Until int64 `json:"until"`
}

// Restart is a node coming back up after its last open crash window.
type Restart struct {
	Node  int   `json:"node"`
	Time  int64 `json:"t"`
	Empty bool  `json:"empty,omitempty"` // a crash while it was down lost its data
}

// PointPause is one pause a client took at a fault point.
type PointPause struct {
	Client int    `json:"c"`
	Time   int64  `json:"t"`   // true time it began
	For    int64  `json:"for"` // ns
	Point  string `json:"point"`
}

// Extend is one Extend call of a holder: called and returned at true
// times Called and Time, extended (OK) or not (Reason), and the hold's
// validity, true time, before (From) and after (To; 0: the lock said
// none).
type Extend struct {
	Client int    `json:"c"`
	Called int64  `json:"called"`
	Time   int64  `json:"t"`
	OK     bool   `json:"ok"`
	From   int64  `json:"from,omitempty"`
	To     int64  `json:"to,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// ViolationKind names what went wrong.
type ViolationKind string

const (
	// MutualExclusion: two clients believed they held the lock at once.
	MutualExclusion ViolationKind = "mutual-exclusion"
	// LostUpdate: the protected counter's accesses do not linearize as atomic increments.
	LostUpdate ViolationKind = "lost-update"
	// Liveness: clients waited without anyone holding the lock, while a
	// majority of the key's nodes was up and reachable from them, for
	// longer than the bound (without Reach: after every fault healed).
	Liveness ViolationKind = "liveness"
	// Leftover: a lock item stayed on a node, used by no one, for longer
	// than the liveness bound.
	Leftover ViolationKind = "leftover"
	// DataLoss: a client's lock calls destroyed the application's data.
	DataLoss ViolationKind = "data-loss"
	// Panic: a client's algorithm panicked.
	Panic ViolationKind = "panic"
	// Livelock: a client never yielded, or the run hit its event cap.
	Livelock ViolationKind = "livelock"
	// Misuse: a client's algorithm called its Env from a goroutine of
	// its own, which the simulator cannot order.
	Misuse ViolationKind = "misuse"
	// Crash: the worker process running the seed died: a panic outside
	// the client's coroutine, a runtime fatal error (explore.Isolation).
	Crash ViolationKind = "crash"
	// Hang: the worker made no progress for its wall-clock budget: a loop
	// that never calls its Env.
	Hang ViolationKind = "hang"
	// Memory: the worker exceeded its memory budget.
	Memory ViolationKind = "memory"
	// LeakedLock: a Lock returned failure while the key it wrote held the
	// lock in its client's name on most of the nodes it asked (History.Leaks):
	// a grant the library reported as a failure.
	LeakedLock ViolationKind = "leaked-lock"
	// GaveUpWhileFree: a Lock that promises to keep trying (a retry
	// budget) returned failure before its budget was up, and the lock was
	// then free long enough within the budget that a try would have got
	// it (History.GaveUps): a Lock that gives up while the lock is free.
	GaveUpWhileFree ViolationKind = "gave-up-while-free"
	// StarvedWhileFree: a client inside a Lock that promises to keep
	// trying (a retry gap) let the lock stay free, with nothing in the
	// way, for longer than its gap and three round trips while no one
	// took it (History.Starved): per-client starvation judged against
	// the lock's own promise, and the failover bound of such a lock (a
	// freed lock is taken within a gap and the round trips by anyone
	// waiting).
	StarvedWhileFree ViolationKind = "starved-while-free"
	// Nondeterminism: the same seed, world and plan ran another way when
	// run again: the lock drew on something the simulator does not control
	// (math/rand/v2's global functions, crypto/rand, time read outside the
	// run, state a package kept from an earlier run). Its failure cannot
	// be replayed, so it is a finding of its own, never a pass.
	Nondeterminism ViolationKind = "nondeterminism"
)

// IsSafety reports whether the kind is a safety violation.
func (k ViolationKind) IsSafety() bool {
	return k == MutualExclusion || k == LostUpdate || k == DataLoss
}

// IsProcessDeath reports whether the kind is of a run that took its worker
// process down, or may take the process it runs in down: crash, hang,
// memory, misuse. Such a run must not be run again in a process that
// matters (to minimise it, to draw its timeline).
func (k ViolationKind) IsProcessDeath() bool {
	return k == Crash || k == Hang || k == Memory || k == Misuse
}

// IsLiveness reports whether the kind is a liveness violation: a wait or
// an item left behind.
func (k ViolationKind) IsLiveness() bool {
	return k == Liveness || k == Leftover || k == LeakedLock || k == GaveUpWhileFree || k == StarvedWhileFree
}

// Violation is one thing that went wrong, with enough to find it in a timeline.
type Violation struct {
	Kind ViolationKind `json:"kind"`
	Time int64         `json:"t"` // true time, ns
	// End, for a liveness kind, is when the bound was passed (Time is when
	// the wait or the stay began); 0 for the others.
	End     int64  `json:"end,omitempty"`
	Clients []int  `json:"clients"` // client indexes involved
	Story   string `json:"story"`   // one line a person can read
	// Count, when more than one, is how many violations of its kind the
	// run had, this first one among them (Verdict.Later lists the others
	// when CheckOptions.Every asks). A lost update counts once: the
	// counter's history stops linearizing there.
	Count int `json:"count,omitempty"`
}

// Metrics summarise a run.
type Metrics struct {
	Grants            int     `json:"grants"`
	FailedAttempts    int     `json:"failed_attempts"`
	AcquireP50        int64   `json:"acquire_p50_ns"` // acquire latency percentiles (granted ones), ns
	AcquireP99        int64   `json:"acquire_p99_ns"`
	Availability      float64 `json:"availability"`       // fraction of run time some client held the lock
	MessagesPerGrant  float64 `json:"messages_per_grant"` // 0 when there were no grants
	LongestNoHolderNS int64   `json:"longest_no_holder_ns"`
	Leftovers         int     `json:"leftovers"`
}

// Verdict is a checked History.
type Verdict struct {
	// Violations are the first violation of each kind, in time order:
	// what a verdict is judged and compared by.
	Violations []Violation `json:"violations,omitempty"`
	// Later are the violations after the first of each kind, in time
	// order, when CheckOptions.Every asks for them.
	Later   []Violation `json:"later,omitempty"`
	Metrics Metrics     `json:"metrics"`
	// Unsupported is the history's: commands the lock used that locksim
	// does not simulate. A verdict with any says so: the run is not what
	// the lock does against a real server.
	Unsupported []string `json:"unsupported,omitempty"`
}

// UnsupportedNote is the sentence a report prints for v.Unsupported, or "".
func (v Verdict) UnsupportedNote() string {
	if len(v.Unsupported) == 0 {
		return ""
	}
	return "note: the lock sent commands locksim does not simulate (each got Redis's unknown-command error): " + strings.Join(v.Unsupported, ", ")
}

// OK reports whether there is no violation.
func (v Verdict) OK() bool { return len(v.Violations) == 0 }

// First returns the first violation of the given kind, if any.
func (v Verdict) First(kind ViolationKind) (Violation, bool) {
	for _, x := range v.Violations {
		if x.Kind == kind {
			return x, true
		}
	}
	return Violation{}, false
}

// TraceEvent is one simulator event as recorded in a trace: enough for a
// timeline and for naming the first event where two runs differ.
type TraceEvent struct {
	Time int64  `json:"t"`
	Seq  uint64 `json:"seq"`
	What string `json:"what"` // e.g. "deliver h0/t0->n1 write k_lock owner=h0"
}

// String is the verdict as the CLI prints it: "ok, no violation", or one
// line per violation, its kind, true time and story.
func (v Verdict) String() string {
	if v.OK() {
		if n := v.UnsupportedNote(); n != "" {
			return "ok, no violation\n" + n
		}
		return "ok, no violation"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "VIOLATION (%d)", len(v.Violations))
	for _, x := range v.Violations {
		fmt.Fprintf(&b, "\n  %s", x)
	}
	if n := v.UnsupportedNote(); n != "" {
		b.WriteString("\n" + n)
	}
	return b.String()
}

// String is the violation in one line: kind, true time, story, and how
// many of its kind the run had.
func (x Violation) String() string {
	if x.Count > 1 {
		return fmt.Sprintf("%s at %s: %s (the first of %d)", x.Kind, Seconds(x.Time), x.Story, x.Count)
	}
	return fmt.Sprintf("%s at %s: %s", x.Kind, Seconds(x.Time), x.Story)
}

// SameAs reports whether v and w find the same violations: the same kinds,
// at the same times, with the same clients, in the same order, and the
// same metrics. The stories are not compared: a story reworded by a newer
// locksim tells the same finding (a replay of an older repro still says
// reproduced).
func (v Verdict) SameAs(w Verdict) bool {
	return v.Metrics == w.Metrics && v.SameViolations(w)
}

// SameViolations is SameAs without the metrics: the same findings, though
// a newer locksim may count a metric differently (the application's data
// is no lock item left).
func (v Verdict) SameViolations(w Verdict) bool {
	if len(v.Violations) != len(w.Violations) || !slices.Equal(v.Unsupported, w.Unsupported) {
		return false
	}
	for i, a := range v.Violations {
		b := w.Violations[i]
		if a.Kind != b.Kind || a.Time != b.Time || a.End != b.End || !slices.Equal(a.Clients, b.Clients) {
			return false
		}
	}
	return true
}
