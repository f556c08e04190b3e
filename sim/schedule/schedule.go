// Package schedule decides a run's choice points other than by its seed:
// by a Schedule of a systematic exploration (the default at every point
// but a few deviations, each chosen from a Menu: package exhaust), or by
// the PCT scheduler, which orders a seed's message deliveries by client
// priorities. Both are sim.Choosers over the kernel's choice points
// (Chooser, PCT.Choices); neither runs anything: seedrun runs a seed with
// them.
//
// It imports sim, faults and model only: what it needs of a target comes
// as values (MenuFor takes a world and safety bounds; seedrun.MenuFor
// takes a target).
package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
)

// A Schedule is a run decided by a systematic exploration (Exhaust), not
// by a seed's random draws: every choice point of the simulator takes its
// default (the lowest latency, no loss, no fault, the shortest think and
// hold), except the deviations. A deviation is one departure from the
// default at one branching point: a choice point where the Menu offers
// alternatives. Branching points are counted in the order the run meets
// them, so a schedule is a pure function of the scenario and the menu.
type Schedule struct {
	Menu       Menu        `json:"menu"`
	Deviations []Deviation `json:"deviations"`
}

// Deviation takes alternative Alt (1-based) at branching point Pos.
type Deviation struct {
	Pos int `json:"pos"`
	Alt int `json:"alt"`
	// What is the deviation in words, as the run took it ("n1 crashes
	// (2 s) at 0.104s, before h0/t0 calls it"); informational.
	What string `json:"what,omitempty"`
}

// Validate checks a schedule read from a file: deviations at increasing
// points, each with an alternative.
func (s *Schedule) Validate() error {
	if s == nil {
		return nil
	}
	for i, d := range s.Deviations {
		switch {
		case d.Pos < 0 || d.Alt < 1:
			return fmt.Errorf("schedule: deviation %d (point %d, alternative %d) needs a point >= 0 and an alternative >= 1", i, d.Pos, d.Alt)
		case i > 0 && d.Pos <= s.Deviations[i-1].Pos:
			return fmt.Errorf("schedule: deviation %d is at point %d, not after the one before it (%d)", i, d.Pos, s.Deviations[i-1].Pos)
		}
	}
	if s.Menu.CrashFor < 0 || s.Menu.WipeFor < 0 || s.Menu.Edge < 0 || s.Menu.PastBy < 0 || s.Menu.EmptyFor < 0 {
		return fmt.Errorf("schedule: the menu's durations must not be negative")
	}
	return nil
}

// Faults is the number of deviations: the schedule's k.
func (s Schedule) Faults() int { return len(s.Deviations) }

// String lists the deviations in words, or says there are none.
func (s Schedule) String() string {
	if len(s.Deviations) == 0 {
		return "no fault: the default schedule"
	}
	parts := make([]string, len(s.Deviations))
	for i, d := range s.Deviations {
		parts[i] = d.What
		if parts[i] == "" {
			parts[i] = fmt.Sprintf("alternative %d at point %d", d.Alt, d.Pos)
		}
	}
	return strings.Join(parts, "; ")
}

// Menu is what an exploration may do at a branching point, besides the
// default. It is recorded in every schedule, so a replay offers the same.
type Menu struct {
	// Loss loses a message (a request, or a reply after its request was
	// applied); Delay gives it the largest latency instead of the
	// smallest, so later messages overtake it; Duplicate delivers it twice.
	Loss      bool `json:"loss,omitempty"`
	Delay     bool `json:"delay,omitempty"`
	Duplicate bool `json:"duplicate,omitempty"`
	// Crash crashes the node a client is about to call, for CrashFor.
	// Wipe restarts it (or, at a holder's fault points, any node) after
	// WipeFor, without its data: a reboot that loses what was in memory.
	Crash    bool          `json:"crash,omitempty"`
	Wipe     bool          `json:"wipe,omitempty"`
	CrashFor time.Duration `json:"crash_for,omitempty"`
	WipeFor  time.Duration `json:"wipe_for,omitempty"`
	// PauseWithin pauses a holder at a fault point until Edge of its
	// grant's validity is left: the longest pause inside the envelope.
	// PausePast pauses it PastBy beyond its validity (or, without one,
	// beyond the lock's TTL): time for another client to take the lock.
	PauseWithin bool          `json:"pause_within,omitempty"`
	PausePast   bool          `json:"pause_past,omitempty"`
	Edge        time.Duration `json:"edge,omitempty"`
	PastBy      time.Duration `json:"past_by,omitempty"`
	// ClockSteps, at a holder's fault points, steps a node's clock forward
	// by each of them, and a host's clock forward or back: just under and
	// just past the lock's TTL, so the items a node holds expire early (or
	// nearly), a host reads another's expiry as past, or writes one that
	// is, or a holder's validity ends early or late on its own clock.
	ClockSteps []time.Duration `json:"clock_steps,omitempty"`
	// Moves, before a call, makes the node called leave the key's nodes
	// (with PlacementFirst the lowest node outside them takes its place,
	// if there is one; on a ring the ring places the key anew), or leaves
	// the key with no node for EmptyFor: a DHT rebalancing, or
	// bootstrapping. MovesWhileHeld, at a holder's fault points, makes
	// any node of the key's leave them, or all of them at once (a
	// rebalancing moves the key to other nodes), where nodes outside them
	// are left to take it. Every client learns of a move at
	// once; what a client has read of the key's nodes before it stays
	// what it acts on.
	Moves          bool          `json:"moves,omitempty"`
	MovesWhileHeld bool          `json:"moves_while_held,omitempty"`
	EmptyFor       time.Duration `json:"empty_for,omitempty"`
}

// String lists what the menu offers, in words.
func (m Menu) String() string {
	var parts []string
	add := func(on bool, s string) {
		if on {
			parts = append(parts, s)
		}
	}
	add(m.Loss, "loss")
	add(m.Delay, "delay")
	add(m.Duplicate, "duplication")
	add(m.Crash, fmt.Sprintf("crash (%s)", m.CrashFor))
	add(m.Wipe, fmt.Sprintf("restart without data (down %s)", m.WipeFor))
	add(m.PauseWithin, fmt.Sprintf("pause until %s of the validity is left", m.Edge))
	add(m.PausePast, fmt.Sprintf("pause %s past the validity or TTL", m.PastBy))
	for _, d := range m.ClockSteps {
		add(true, fmt.Sprintf("a node's clock steps %s forward, a host's %s either way", d, d))
	}
	add(m.Moves, "the node called leaves the key's nodes")
	add(m.Moves && m.EmptyFor > 0, fmt.Sprintf("no node holds the key for %s", m.EmptyFor))
	add(m.MovesWhileHeld, "a node leaves the key's nodes during a hold")
	if len(parts) == 0 {
		return "nothing: the default schedule only"
	}
	return strings.Join(parts, ", ")
}

// Within is m narrowed to the deviations of the fault classes given (all
// of m for ClassAll): loss loses, delays and duplicates messages;
// ambiguous loses and delays them (a reply lost after its request was
// applied); partition loses them (a schedule cuts one message at a time);
// crash crashes nodes; amnesia crashes and restarts them without data;
// skew, jump and localtime step clocks; pause pauses holders; topology
// moves the key. threads and none add no deviation: threads is the
// world's (-threads), none the default run alone.
func (m Menu) Within(classes []faults.Class) Menu {
	if slices.Contains(classes, faults.ClassAll) {
		return m
	}
	in := func(cs ...faults.Class) bool {
		return slices.ContainsFunc(cs, func(c faults.Class) bool { return slices.Contains(classes, c) })
	}
	n := m
	n.Loss = m.Loss && in(faults.ClassLoss, faults.ClassAmbiguous, faults.ClassPartition)
	n.Delay = m.Delay && in(faults.ClassLoss, faults.ClassAmbiguous)
	n.Duplicate = m.Duplicate && in(faults.ClassLoss)
	n.Crash = m.Crash && in(faults.ClassCrash, faults.ClassAmnesia)
	n.Wipe = m.Wipe && in(faults.ClassAmnesia)
	n.PauseWithin = m.PauseWithin && in(faults.ClassPause)
	n.PausePast = m.PausePast && in(faults.ClassPause)
	if !in(faults.ClassSkew, faults.ClassJump, faults.ClassLocalTime) {
		n.ClockSteps = nil
	}
	n.Moves = m.Moves && in(faults.ClassTopology)
	n.MovesWhileHeld = m.MovesWhileHeld && in(faults.ClassTopology)
	return n
}

// MenuFor is the menu inside an envelope, in world cfg: every deviation
// its safety bounds bd allow (a variant's safety assumptions, and those a
// target breaks on purpose: seedrun.Target.SafetyBounds, as
// seedrun.MenuFor passes them): a schedule searches safety, and a liveness
// assumption never narrows that. Messages may always be lost and delayed:
// no safety assumption bounds that.
func MenuFor(cfg sim.Config, bd faults.Bounds) Menu {
	m := Menu{Loss: true, Delay: true, Crash: true,
		Duplicate: !bd.NoDuplicates || breaks(bd, faults.BreakNoDuplication),
		Wipe:      !bd.NoWipes || breaks(bd, faults.BreakDurableNodes) || breaks(bd, faults.BreakRestartQuarantine),
		CrashFor:  2 * cfg.RPCTimeout,
		WipeFor:   time.Millisecond,
		PastBy:    cfg.TTL / 2,
		Moves:     !bd.NoTopology || breaks(bd, faults.BreakFixedTopology),
		EmptyFor:  cfg.TTL / 2,
	}
	m.MovesWhileHeld = m.Moves
	m.PauseWithin = bd.ValidityEdge > 0
	m.Edge = bd.ValidityEdge
	m.PausePast = bd.ValidityEdge == 0 || breaks(bd, faults.BreakUseWithinValidity) || breaks(bd, faults.BreakTokenChecks)
	ttl := cfg.TTL
	for _, d := range []time.Duration{ttl - ttl/10, ttl + ttl/10} {
		inside := !bd.NoClockJumps && (bd.ClockJumpMax == 0 || d <= bd.ClockJumpMax) && (bd.ClockErrorMax == 0 || d <= bd.ClockErrorMax/2)
		if inside || breaks(bd, faults.BreakClockJumps) || breaks(bd, faults.BreakClockError) {
			m.ClockSteps = append(m.ClockSteps, d)
		}
	}
	return m
}

// Chooser decides a run's choice points by a schedule (sim.Injector).
type Chooser struct {
	menu     Menu
	dev      []Deviation // sorted by Pos
	next     int         // the next deviation to take
	pos      int         // branching points met so far
	from     int         // record the alternatives at points from here on
	alts     []uint8     // alternatives at points from, from+1, ...
	taken    []Deviation // the deviations taken
	describe bool        // describe each one taken, in words (What)
	cfg      sim.Config
	nodes    int
	threads  int
	err      error
}

// NewChooser decides a run by s; it records the alternatives at
// the branching points from from on (-1: none) into scratch's memory.
// Only a chooser made to describe says what each deviation taken was: an
// exploration's runs skip the words, and rerun the one it reports.
func NewChooser(s Schedule, cfg sim.Config, from int, scratch []uint8, describe bool) *Chooser {
	return &Chooser{menu: s.Menu, dev: s.Deviations, from: from, cfg: cfg, alts: scratch[:0],
		nodes: cfg.Nodes, threads: cfg.ThreadsPerHost, describe: describe}
}

// branch is a branching point with n alternatives: the one the schedule
// takes there (0: the default). A caller that is told one was taken says
// what it was with tell, when the chooser describes.
func (s *Chooser) branch(n int) int {
	if n == 0 {
		return 0
	}
	p := s.pos
	s.pos++
	if p >= s.from && s.from >= 0 {
		s.alts = append(s.alts, uint8(min(n, 255)))
	}
	if s.next >= len(s.dev) || s.dev[s.next].Pos != p {
		return 0
	}
	d := s.dev[s.next]
	s.next++
	if d.Alt < 1 || d.Alt > n {
		if s.err == nil {
			s.err = fmt.Errorf("schedule: point %d has %d alternatives, not %d (the schedule is of another version or menu)", p, n, d.Alt)
		}
		return 0
	}
	d.What = ""
	s.taken = append(s.taken, d)
	return d.Alt
}

// Alternatives is how many alternatives each branching point from from on
// offered (at most 255), in the order the run met them.
func (s *Chooser) Alternatives() []uint8 { return s.alts }

// tell describes the deviation just taken.
func (s *Chooser) tell(what string) { s.taken[len(s.taken)-1].What = what }

func (s *Chooser) client(i int) string {
	return fmt.Sprintf("h%d/t%d", i/max(1, s.threads), i%max(1, s.threads))
}

// message names the message of choice point c: "h0/t0's request to n1".
func (s *Chooser) message(c sim.Choice) string {
	switch {
	case c.Node < 0:
		return s.client(c.Client) + "'s resource access"
	case c.Reply:
		return fmt.Sprintf("n%d's reply to %s", c.Node, s.client(c.Client))
	}
	return fmt.Sprintf("%s's request to n%d", s.client(c.Client), c.Node)
}

func (s *Chooser) Between(c sim.Choice, lo, hi int64) int64 {
	if c.Kind == sim.ChoiceLatency && s.menu.Delay && hi > lo && c.Node >= 0 && s.branch(1) == 1 {
		if s.describe {
			s.tell(fmt.Sprintf("%s is delayed (%s) at %s", s.message(c), time.Duration(hi), model.Seconds(c.At)))
		}
		return hi
	}
	return lo
}

func (s *Chooser) Chance(c sim.Choice, ppm uint32) bool {
	what := ""
	switch {
	case c.Kind == sim.ChoiceLoss && s.menu.Loss && c.Node >= 0:
		what = "lost"
	case c.Kind == sim.ChoiceDuplicate && s.menu.Duplicate && c.Node >= 0:
		what = "duplicated"
	case c.Kind == sim.ChoiceStrike:
		return true // a plan's pause waiting inside Acquire strikes at the first call
	default:
		return ppm >= 1_000_000
	}
	if s.branch(1) == 0 {
		return false
	}
	if s.describe {
		s.tell(fmt.Sprintf("%s is %s at %s", s.message(c), what, model.Seconds(c.At)))
	}
	return true
}

// Inject offers the faults of the menu at step st (options): before a
// call, a crash or a wipe of the node called, or a move of the key; at a
// holder's fault point, a pause within or past its validity, a wipe of
// any node, a clock step, or a move. Nothing is built, described or
// allocated unless the schedule takes one.
func (s *Chooser) Inject(st sim.Step) []faults.Event {
	n, _ := s.options(&st, 0)
	if a := s.branch(n); a > 0 {
		return s.taking(&st, a)
	}
	return nil
}

// taking builds (and describes) alternative a at step st: apart from
// Inject, so that the run's every step does not carry its frame.
//
//go:noinline
func (s *Chooser) taking(st *sim.Step, a int) []faults.Event {
	_, e := s.options(st, a)
	if s.describe {
		s.tell(s.describeFault(*st, e))
	}
	return []faults.Event{e}
}

// options counts the faults the menu offers at step st, in their order,
// and builds the pick-th (1-based; 0 builds none).
func (s *Chooser) options(st *sim.Step, pick int) (int, faults.Event) {
	n := 0
	take := func() bool { n++; return n == pick }
	m := &s.menu
	if st.Node >= 0 {
		if m.Crash && take() {
			return n, faults.Event{Kind: faults.Crash, Node: st.Node, For: m.CrashFor}
		}
		if m.Wipe && take() {
			return n, faults.Event{Kind: faults.Crash, Node: st.Node, For: m.WipeFor, Wipe: true}
		}
		if m.Moves && slices.Contains(st.Members, st.Node) && take() {
			return n, faults.Event{Kind: faults.Topology, Nodes: s.leave(st.Members, st.Node)}
		}
		if m.Moves && len(st.Members) > 0 && m.EmptyFor > 0 && take() {
			return n, faults.Event{Kind: faults.Topology, Nodes: []int{}, For: m.EmptyFor}
		}
		return n, faults.Event{}
	}
	if !st.Holding {
		return 0, faults.Event{}
	}
	left := time.Duration(st.ValidityLeft)
	if m.PauseWithin && left > m.Edge && take() {
		return n, faults.Event{Kind: faults.Pause, Client: st.Client, For: left - m.Edge}
	}
	if m.PausePast && take() {
		base := left
		if left == 0 {
			base = s.cfg.TTL
		}
		return n, faults.Event{Kind: faults.Pause, Client: st.Client, For: base + m.PastBy}
	}
	for i := 0; m.Wipe && i < s.nodes; i++ {
		if take() {
			return n, faults.Event{Kind: faults.Crash, Node: i, For: m.WipeFor, Wipe: true}
		}
	}
	if m.MovesWhileHeld {
		for _, k := range st.KeyNodes {
			if take() {
				return n, faults.Event{Kind: faults.Topology, Nodes: s.leave(st.Members, k)}
			}
		}
		if away := s.away(st.Members, st.KeyNodes); away != nil && take() {
			return n, faults.Event{Kind: faults.Topology, Nodes: away}
		}
	}
	for _, d := range m.ClockSteps {
		for i := range s.nodes {
			if take() {
				return n, faults.Event{Kind: faults.ClockJump, Target: faults.NodeProcess, Index: i, Delta: d}
			}
		}
		for h := range s.cfg.Hosts {
			for _, sign := range [2]time.Duration{1, -1} {
				if take() {
					return n, faults.Event{Kind: faults.ClockJump, Target: faults.HostProcess, Index: h, Delta: sign * d}
				}
			}
		}
	}
	return n, faults.Event{}
}

// leave is members without node n: the key's nodes once n leaves them.
// With PlacementFirst the lowest node outside them takes its place, as a
// DHT re-replicates; on a ring the ring places the key anew by itself.
// It allocates: it is called only for alternatives, and a taken move keeps
// its nodes.
func (s *Chooser) leave(members []int, n int) []int {
	out := make([]int, 0, len(members))
	for _, m := range members {
		if m != n {
			out = append(out, m)
		}
	}
	if s.cfg.Placement == sim.PlacementRing {
		return out
	}
	for r := range s.nodes {
		if r != n && !slices.Contains(members, r) {
			return append(out, r)
		}
	}
	return out
}

// away is the membership that moves the key off all of keyNodes: on a
// ring, the members without them; with PlacementFirst, as many nodes from
// outside them, the lowest first. Nil when too few are left to hold it.
func (s *Chooser) away(members, keyNodes []int) []int {
	var out []int
	if s.cfg.Placement == sim.PlacementRing {
		for _, m := range members {
			if !slices.Contains(keyNodes, m) {
				out = append(out, m)
			}
		}
		if len(out) < min(len(keyNodes), s.cfg.Replication) {
			return nil
		}
		return out
	}
	for r := 0; r < s.nodes && len(out) < len(keyNodes); r++ {
		if !slices.Contains(keyNodes, r) {
			out = append(out, r)
		}
	}
	if len(out) < len(keyNodes) || len(out) == 0 {
		return nil
	}
	return out
}

// nodeList is "n0,n2", or "no node".
func nodeList(nodes []int) string {
	if len(nodes) == 0 {
		return "no node"
	}
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("n%d", n)
	}
	return strings.Join(parts, ",")
}

// describeFault is injected fault e at step st, in words.
func (s *Chooser) describeFault(st sim.Step, e faults.Event) string {
	who, at := s.client(st.Client), model.Seconds(st.At)
	switch {
	case e.Kind == faults.Pause && time.Duration(st.ValidityLeft) > e.For:
		return fmt.Sprintf("%s pauses %s at %s (%s), until %s of its validity is left", who, e.For, st.Point, at, s.menu.Edge)
	case e.Kind == faults.Pause && st.ValidityLeft > 0:
		return fmt.Sprintf("%s pauses %s at %s (%s), %s past its validity", who, e.For, st.Point, at, s.menu.PastBy)
	case e.Kind == faults.Pause:
		return fmt.Sprintf("%s pauses %s at %s (%s), %s past the lock's TTL", who, e.For, st.Point, at, s.menu.PastBy)
	case e.Kind == faults.ClockJump && e.Target == faults.HostProcess:
		dir := "forward"
		if e.Delta < 0 {
			dir = "back"
		}
		return fmt.Sprintf("host h%d's clock steps %s %s at %s, while %s holds the lock (%s)", e.Index, e.Delta.Abs(), dir, at, who, st.Point)
	case e.Kind == faults.ClockJump:
		return fmt.Sprintf("n%d's clock steps %s forward at %s, while %s holds the lock (%s)", e.Index, e.Delta, at, who, st.Point)
	case e.Kind == faults.Topology && e.For > 0:
		return fmt.Sprintf("no node holds the key for %s from %s, before %s calls n%d", e.For, at, who, st.Node)
	case e.Kind == faults.Topology && st.Node < 0:
		var left []int
		for _, n := range st.KeyNodes {
			if !slices.Contains(e.Nodes, n) {
				left = append(left, n)
			}
		}
		return fmt.Sprintf("%s leave the key's nodes (the DHT now has %s) at %s, while %s holds the lock (%s)", nodeList(left), nodeList(e.Nodes), at, who, st.Point)
	case e.Kind == faults.Topology && s.cfg.Placement == sim.PlacementRing:
		return fmt.Sprintf("n%d leaves the ring (now %s) at %s, before %s calls it", st.Node, nodeList(e.Nodes), at, who)
	case e.Kind == faults.Topology:
		return fmt.Sprintf("n%d leaves the key's nodes (now %s) at %s, before %s calls it", st.Node, nodeList(e.Nodes), at, who)
	case e.Wipe && st.Node < 0:
		return fmt.Sprintf("n%d restarts without its data (down %s) at %s, while %s holds the lock (%s)", e.Node, e.For, at, who, st.Point)
	case e.Wipe:
		return fmt.Sprintf("n%d restarts without its data (down %s) at %s, before %s calls it", e.Node, e.For, at, who)
	}
	return fmt.Sprintf("n%d crashes for %s at %s, before %s calls it", e.Node, e.For, at, who)
}

// Schedule is the schedule as the run took it, every deviation in words.
func (s *Chooser) Schedule() Schedule {
	return Schedule{Menu: s.menu, Deviations: s.taken}
}

// Check reports a schedule the run could not follow: a deviation at a
// point that offered fewer alternatives, or beyond the run's last point.
func (s *Chooser) Check() error {
	if s.err != nil {
		return s.err
	}
	if s.next < len(s.dev) {
		return fmt.Errorf("schedule: the run met %d branching points, and the schedule deviates at point %d", s.pos, s.dev[s.next].Pos)
	}
	return nil
}

// breaks reports whether bd breaks b on purpose.
func breaks(bd faults.Bounds, b faults.Breakable) bool { return slices.Contains(bd.Break, b) }

// ExploreSeed is the seed of every explored schedule: it seeds only the
// algorithm's own randomness (Env.Rand), which a schedule does not decide.
const ExploreSeed = 1
