package envelope

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
)

// Breach is one assumption of a variant's envelope that a run actually
// broke: computed from what happened (the plan's faults as they took
// effect, the history's holds and accesses), not from what the generator
// meant to do.
type Breach struct {
	Assumption algorithm.Assumption `json:"assumption"`
	// Time is the true time, ns, from which the assumption was broken.
	Time int64 `json:"t"`
	// By names the fault that broke it: a plan path and what it did.
	By string `json:"by"`
	// Detail says how far beyond the assumption the run went.
	Detail string `json:"detail"`
	// Safety: the envelope makes the assumption for safety (else for
	// liveness only).
	Safety bool `json:"safety"`
	// Lease: the breach is a holder's lease ended by the server while it
	// held (model.Event.LeaseLapsed): it excuses two holders too.
	Lease bool `json:"lease,omitempty"`
}

// String is one line: "clock-jumps broken at 82.015s by events[1] (n2's
// clock jumps +4m20s): ...".
func (b Breach) String() string {
	return fmt.Sprintf("%s broken at %s by %s: %s", b.Assumption, model.Seconds(b.Time), b.By, b.Detail)
}

// Protects reports whether breaking b can excuse a violation of kind k:
// safety assumptions excuse everything (liveness rests on safety too),
// except the two that guard only the resource; liveness ones excuse only
// liveness. A finding after the breach is expected, not a bug, only then.
func (b Breach) Protects(k model.ViolationKind) bool {
	if !b.Safety {
		return k.IsLiveness()
	}
	switch b.Assumption {
	case algorithm.UseWithinValidity, algorithm.TokenChecks:
		return k == model.LostUpdate || b.Lease && k == model.MutualExclusion
	}
	return true
}

// Breaches lists, in the order of env.Assumed, the first breach of each
// assumption env makes that the run (its world, plan and history) broke.
func Breaches(env algorithm.Envelope, cfg sim.Config, plan faults.Plan, h model.History) []Breach {
	var out []Breach
	for _, n := range env.Assumed() {
		a := env.Safety
		if !a.Makes(n) {
			a = env.Liveness
		}
		if b, ok := breachOf(n, a, cfg, plan, h); ok {
			b.Assumption, b.Safety = n, env.Safety.Makes(n)
			out = append(out, b)
		}
	}
	return out
}

// breachOf finds the first breach of assumption n, as a states it.
func breachOf(n algorithm.Assumption, a algorithm.Assumptions, cfg sim.Config, plan faults.Plan, h model.History) (Breach, bool) {
	switch n {
	case algorithm.ClockError:
		return clockErrorBreach(a.ClockErrorMax.Nanoseconds(), plan, h.End)
	case algorithm.ClockRate:
		return clockRateBreach(a.ClockRateDiffMaxPPM, plan)
	case algorithm.ClockJumps:
		return clockJumpBreach(a, plan, h.End)
	case algorithm.UseWithinValidity:
		late, lateOK := lateUseBreach(plan, h)
		if lapse, ok := leaseLapseBreach(h); ok && (!lateOK || lapse.Time <= late.Time) {
			return lapse, true
		}
		return late, lateOK
	case algorithm.FixedTopology:
		return topologyBreach(h)
	case algorithm.DurableNodes:
		return wipeBreach(plan, h.End)
	case algorithm.RestartQuarantine:
		return quarantineBreach(plan, h)
	case algorithm.ReplicationMin:
		return replicationBreach(a.ReplicationMin, h)
	case algorithm.ReservedLockNames:
		for _, k := range h.AppData {
			if strings.HasSuffix(k, "_lock") {
				return Breach{By: fmt.Sprintf("the world (the application's data under %s)", k),
					Detail: fmt.Sprintf("the application keeps data under %s, the lock's item name", k)}, true
			}
		}
	case algorithm.NoDuplication:
		if d := int64(plan.Network.DuplicatePPM); d > 0 {
			return Breach{By: "network.duplicate_ppm", Detail: fmt.Sprintf("%s of messages delivered twice", ppm(d))}, true
		}
	case algorithm.TokenChecks:
		if plan.Deployment.NoFencing {
			return Breach{By: "deployment.no_fencing", Detail: "the resource ignored fencing tokens"}, true
		}
	case algorithm.MessageLoss:
		return lossBreach(a.MessageLossMaxPPM, cfg, plan, h.End)
	}
	return Breach{}, false
}

// ppm writes parts per million as a percentage.
func ppm(v int64) string { return fmt.Sprintf("%.4g%%", float64(v)/10_000) }

// clockErrorBreach finds the first instant two clocks (true time counting
// as one) read more than maxNS apart. Each clock's deviation from true time
// is linear between jumps, so the spread of deviations is convex there and
// first exceeds the bound at a jump or, within a segment, at a point found
// by bisection.
func clockErrorBreach(maxNS int64, plan faults.Plan, end int64) (Breach, bool) {
	jumps := planJumps(plan, end)
	clocks := clocksOf(plan, jumps)
	spread := func(t int64) (int64, int, int) { return clockSpread(clocks, jumps, t) }
	// Breakpoints: the run's start, each jump, its end.
	points := []int64{0}
	for _, j := range jumps {
		points = append(points, j.At.Nanoseconds())
	}
	points = append(points, end)
	slices.Sort(points)
	for i, t := range points {
		if s, _, _ := spread(t); s > maxNS {
			return clockErrorAt(t, maxNS, clocks, spread), true
		}
		if i+1 < len(points) && points[i+1] > t {
			// Within (t, next) nothing jumps: bisect for the first instant
			// past the bound if the segment's end (just before next) is.
			hi := points[i+1] - 1
			if s, _, _ := spread(hi); s > maxNS {
				lo := t // spread(lo) <= maxNS
				for lo+1 < hi {
					mid := lo + (hi-lo)/2
					if s, _, _ := spread(mid); s > maxNS {
						hi = mid
					} else {
						lo = mid
					}
				}
				return clockErrorAt(hi, maxNS, clocks, spread), true
			}
		}
	}
	return Breach{}, false
}

func clockErrorAt(t, maxNS int64, clocks []faults.Clock, spread func(int64) (int64, int, int)) Breach {
	s, hi, lo := spread(t)
	return Breach{Time: t, By: clockName(clocks, hi) + " and " + clockName(clocks, lo),
		Detail: fmt.Sprintf("their clocks read %s apart, more than %s", model.Seconds(s), model.Seconds(maxNS))}
}

// clockSpread is the largest minus the smallest deviation from true time
// of every clock at t (true time deviates by 0), with the indexes into
// clocks of the two extremes (-1: true time).
func clockSpread(clocks []faults.Clock, jumps []faults.Event, t int64) (spread int64, hi, lo int) {
	maxDev, minDev := int64(0), int64(0)
	hi, lo = -1, -1
	for i, c := range clocks {
		d := clockDeviation(c, jumps, t)
		if d > maxDev {
			maxDev, hi = d, i
		}
		if d < minDev {
			minDev, lo = d, i
		}
	}
	return maxDev - minDev, hi, lo
}

// clockDeviation is local minus true time for clock c at true time t, as
// the simulator's clocks compute it (sim/clock.go).
func clockDeviation(c faults.Clock, jumps []faults.Event, t int64) int64 {
	d := c.Offset.Nanoseconds() + faults.DriftAt(c.DriftPPM, t)
	for _, j := range jumps {
		if j.At.Nanoseconds() <= t && j.Target == c.Kind && j.Index == c.Index {
			d += j.Delta.Nanoseconds()
		}
	}
	return d
}

// planJumps are the plan's clock jumps that happen before the run ends.
func planJumps(plan faults.Plan, end int64) []faults.Event {
	var out []faults.Event
	for _, e := range plan.Events {
		if e.Kind == faults.ClockJump && e.At.Nanoseconds() < end {
			out = append(out, e)
		}
	}
	return out
}

// clocksOf is the plan's clocks plus a perfect one for every process that
// jumps without a clocks entry, so that its jumps count.
func clocksOf(plan faults.Plan, jumps []faults.Event) []faults.Clock {
	clocks := plan.Clocks
	for _, j := range jumps {
		if !slices.ContainsFunc(clocks, func(c faults.Clock) bool { return c.Kind == j.Target && c.Index == j.Index }) {
			clocks = append(slices.Clip(clocks), faults.Clock{Kind: j.Target, Index: j.Index})
		}
	}
	return clocks
}

// clockName names the clock at index i of clocks (-1: true time).
func clockName(clocks []faults.Clock, i int) string {
	if i < 0 {
		return "true time"
	}
	return processName(clocks[i].Kind, clocks[i].Index)
}

func processName(k faults.ProcessKind, i int) string {
	if k == faults.NodeProcess {
		return fmt.Sprintf("n%d", i)
	}
	return fmt.Sprintf("h%d", i)
}

// clockRateBreach: two clocks (true time counting as one) whose drifts
// differ by more than maxPPM.
func clockRateBreach(maxPPM int64, plan faults.Plan) (Breach, bool) {
	hi, lo := -1, -1
	var fast, slow int64
	for i, c := range plan.Clocks {
		if c.DriftPPM > fast {
			fast, hi = c.DriftPPM, i
		}
		if c.DriftPPM < slow {
			slow, lo = c.DriftPPM, i
		}
	}
	if fast-slow <= maxPPM {
		return Breach{}, false
	}
	return Breach{By: clockPath(hi) + " and " + clockPath(lo),
		Detail: fmt.Sprintf("%s's clock runs %d ppm faster than %s's, more than %d",
			clockName(plan.Clocks, hi), fast-slow, clockName(plan.Clocks, lo), maxPPM)}, true
}

func clockPath(i int) string {
	if i < 0 {
		return "true time"
	}
	return fmt.Sprintf("clocks[%d]", i)
}

// clockJumpBreach: the first clock step larger than a tolerates.
func clockJumpBreach(a algorithm.Assumptions, plan faults.Plan, end int64) (Breach, bool) {
	for i, e := range plan.Events {
		if e.Kind != faults.ClockJump || e.At.Nanoseconds() >= end {
			continue
		}
		size := e.Delta
		if size < 0 {
			size = -size
		}
		if a.NoClockJumps || size > a.ClockJumpMax {
			detail := "no clock jump is tolerated"
			if !a.NoClockJumps {
				detail = fmt.Sprintf("more than the %s tolerated", a.ClockJumpMax)
			}
			return Breach{Time: e.At.Nanoseconds(),
				By:     fmt.Sprintf("events[%d] (%s's clock jumps %s)", i, processName(e.Target, e.Index), signed(e.Delta.Nanoseconds())),
				Detail: detail}, true
		}
	}
	return Breach{}, false
}

func signed(ns int64) string {
	if ns < 0 {
		return "-" + model.Seconds(-ns)
	}
	return "+" + model.Seconds(ns)
}

// lateUseBreach: the first resource access that reached the resource after
// its client's validity had ended, in the same hold.
func lateUseBreach(plan faults.Plan, h model.History) (Breach, bool) {
	type hold struct {
		validEnd  int64 // true time; 0: no validity
		start     int64
		expired   bool // its BeliefEnd was the validity passing, or the server ended it (LeaseLapsed)
		releasing bool
		lapsed    bool // validEnd is when the server ended it (LeaseLapsed)
	}
	holds := map[int]*hold{}
	for i := range h.Events {
		e := &h.Events[i]
		switch e.Kind {
		case model.AcquireReturn:
			if e.Granted {
				holds[e.Client] = &hold{validEnd: e.ValidUntilTrue, start: e.Time, expired: e.LeaseLapsed, lapsed: e.LeaseLapsed}
			}
		case model.BeliefEnd:
			if hd := holds[e.Client]; hd != nil && e.Reason == "expired" {
				hd.expired = true
			}
		case model.ReleaseCall, model.ClientStop:
			delete(holds, e.Client)
		case model.ResourceRead, model.ResourceWrite:
			hd := holds[e.Client]
			if hd == nil || !hd.expired || hd.validEnd == 0 || e.Time <= hd.validEnd {
				continue
			}
			what := "read"
			if e.Kind == model.ResourceWrite {
				what = "write"
			}
			if hd.lapsed {
				return Breach{Time: e.Time, By: lateUseCause(plan, h, e.Client, hd.start, hd.validEnd, e),
					Detail: fmt.Sprintf("%s's %s reached the resource at %s, %s after its lease ended at %s (the server ended it while %s held the lock, and did not tell it)",
						clientName(h, e.Client), what, model.Seconds(e.Time), model.Seconds(e.Time-hd.validEnd), model.Seconds(hd.validEnd), clientName(h, e.Client))}, true
			}
			return Breach{Time: e.Time, By: lateUseCause(plan, h, e.Client, hd.start, hd.validEnd, e),
				Detail: fmt.Sprintf("%s's %s reached the resource at %s, %s after its validity ended at %s",
					clientName(h, e.Client), what, model.Seconds(e.Time), model.Seconds(e.Time-hd.validEnd), model.Seconds(hd.validEnd))}, true
		}
	}
	return Breach{}, false
}

// leaseLapseBreach finds the first hold whose lease the server ended while
// the holder still held (model.Event.LeaseLapsed, until its release, stop
// or end of belief): from then on it holds a lock that is no longer its.
func leaseLapseBreach(h model.History) (Breach, bool) {
	held := map[int]*model.Event{}
	var first *model.Event
	ended := func(c int, at int64) {
		g := held[c]
		if g != nil && at > g.ValidUntilTrue && (first == nil || g.ValidUntilTrue < first.ValidUntilTrue ||
			g.ValidUntilTrue == first.ValidUntilTrue && g.Client < first.Client) {
			first = g
		}
		delete(held, c)
	}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == model.AcquireReturn && e.Granted && e.LeaseLapsed:
			held[e.Client] = e
		case e.Kind == model.BeliefEnd || e.Kind == model.ReleaseCall || e.Kind == model.ClientStop:
			ended(e.Client, e.Time)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(held)) {
		ended(c, h.End+1)
	}
	if first == nil {
		return Breach{}, false
	}
	return Breach{Time: first.ValidUntilTrue, Lease: true, By: fmt.Sprintf("the world (%s's lease ended while it held)", clientName(h, first.Client)),
		Detail: fmt.Sprintf("%s's lease ended at %s while it held the lock (granted at %s), and it was not told", clientName(h, first.Client),
			model.Seconds(first.ValidUntilTrue), model.Seconds(first.Time))}, true
}

// lateUseCause names what carried an access past its client's validity.
// Sent in time, the network did; sent late, the client was stopped over
// its validity's end by a fault-point pause or a timed pause (a timed pause
// that ends a point pause late is named first: it made the difference).
func lateUseCause(plan faults.Plan, h model.History, client int, holdStart, validEnd int64, e *model.Event) string {
	if e.Sent <= validEnd {
		return fmt.Sprintf("the network (sent at %s, %s before the validity ended, %s in flight)",
			model.Seconds(e.Sent), model.Seconds(validEnd-e.Sent), model.Seconds(e.Time-e.Sent))
	}
	for i, ev := range plan.Events {
		at := ev.At.Nanoseconds()
		if ev.Kind == faults.Pause && ev.Point == "" && ev.Client == client && at <= e.Sent && at+ev.For.Nanoseconds() > validEnd {
			return fmt.Sprintf("events[%d] (%s paused for %s from %s)", i, clientName(h, client),
				model.Seconds(ev.For.Nanoseconds()), model.Seconds(at))
		}
	}
	for _, p := range h.Pauses {
		if p.Client == client && p.Time >= holdStart && p.Time <= e.Sent && p.Time+p.For > validEnd {
			return fmt.Sprintf("points (a pause of %s at %s from %s)", model.Seconds(p.For), p.Point, model.Seconds(p.Time))
		}
	}
	return fmt.Sprintf("%s, which sent it at %s", clientName(h, client), model.Seconds(e.Sent))
}

func clientName(h model.History, c int) string {
	if c >= 0 && c < len(h.Clients) {
		return h.Clients[c].Name
	}
	return fmt.Sprintf("client %d", c)
}

// topologyBreach: the first topology change (as it happened: a change
// may wait for a grant) while an acquire that was granted was in flight or
// its hold lasted: from the change until every client knew of it (a
// client with a stale view acquires on the old nodes), between the call of
// the acquire and the end of its hold.
func topologyBreach(h model.History) (Breach, bool) {
	if len(h.Moves) == 0 {
		return Breach{}, false
	}
	holds := model.Holds(h)
	endOf := make(map[uint64]model.Hold, len(holds)) // by StartSeq: the granting AcquireReturn
	for _, hd := range holds {
		endOf[hd.StartSeq] = hd
	}
	attempts := model.Attempts(h)
	for _, mv := range h.Moves {
		for _, a := range attempts {
			hd, granted := endOf[a.ReturnSeq]
			if a.Outcome != model.Granted || !granted || max(mv.Until, mv.Time) < a.CallTime || mv.Time >= hd.EndTime {
				continue
			}
			return Breach{Time: max(mv.Time, a.CallTime), By: fmt.Sprintf("a topology change (the key moves to nodes %v at %s)", mv.Nodes, model.Seconds(mv.Time)),
				Detail: fmt.Sprintf("%s's lock, asked for at %s, was held until %s", clientName(h, a.Client),
					model.Seconds(a.CallTime), model.Seconds(hd.EndTime))}, true
		}
	}
	return Breach{}, false
}

// replicationBreach: the key on fewer than least nodes, as deployed or
// after a topology change.
func replicationBreach(least int, h model.History) (Breach, bool) {
	if h.Replicas < least {
		return Breach{Time: 0, By: fmt.Sprintf("the world (the key on %d nodes)", h.Replicas),
			Detail: fmt.Sprintf("the key was on %d nodes, fewer than %d", h.Replicas, least)}, true
	}
	for _, mv := range h.Moves {
		if len(mv.Nodes) < least {
			return Breach{Time: mv.Time, By: fmt.Sprintf("a topology change (the key moves to nodes %v at %s)", mv.Nodes, model.Seconds(mv.Time)),
				Detail: fmt.Sprintf("the key was on %d nodes, fewer than %d", len(mv.Nodes), least)}, true
		}
	}
	return Breach{}, false
}

// wipeBreach: the first crash that lost a node's data.
func wipeBreach(plan faults.Plan, end int64) (Breach, bool) {
	for i, e := range plan.Events {
		if e.Kind == faults.Crash && e.Wipe && e.At.Nanoseconds() < end {
			return Breach{Time: e.At.Nanoseconds(), By: fmt.Sprintf("events[%d] (n%d crashes and loses its data)", i, e.Node),
				Detail: "a node lost its data"}, true
		}
	}
	return Breach{}, false
}

// quarantineBreach: a node that lost its data came back, and the deployment
// let it take lock writes at once.
func quarantineBreach(plan faults.Plan, h model.History) (Breach, bool) {
	if !plan.Deployment.NoQuarantine {
		return Breach{}, false
	}
	for _, r := range h.Restarts {
		if r.Empty {
			return Breach{Time: r.Time, By: fmt.Sprintf("deployment.no_quarantine (n%d restarts empty at %s)", r.Node, model.Seconds(r.Time)),
				Detail: "a node that lost its data took lock writes as soon as it restarted"}, true
		}
	}
	return Breach{}, false
}

// lossBreach finds the first breach of the message-loss bound maxPPM:
// steady loss of requests or replies, or a world or fault that loses the
// replies to requests it delivered. A reply after the RPC timeout is lost
// to the client (the write it answers happened unknown to it), so a link
// that outlasts the timeout too often breaks the bound from the start, and
// a one-way partition, which drops every reply across it, from its start.
func lossBreach(maxPPM int64, c sim.Config, plan faults.Plan, end int64) (Breach, bool) {
	late, lateBy, why := lateOf(c), "the world (late replies)", describeLate(c)
	if e := plan.Network.ExtraLatencyMax; e > 0 {
		// The plan's extra latency delays every link, the slow one too:
		// a round trip on it adds both delays, each leg (slowLinkLate).
		// Counted apart and added, they once judged worlds where a third
		// to two thirds of a slow host's round trips were late as under
		// fenced's 10% (22 of 100,000 seeds starved "inside").
		if x := max(lateShareOf(c.RPCTimeout-2*c.LatencyMax, e), slowLinkLate(c, e)); x > lateShare(c) {
			if late <= maxPPM {
				lateBy = "network.extra_latency_max"
				why = fmt.Sprintf("up to %s more latency per message", e)
				if c.SlowExtra > 0 {
					why += ", on top of " + DescribeSlowLink(c)
				}
			}
			late = min(late-lateShare(c)+x, 1_000_000)
		}
	}
	if late > maxPPM {
		return Breach{By: lateBy,
			Detail: fmt.Sprintf("%s: %s of round trips outlast the %s RPC timeout, more than %s",
				why, ppm(late), c.RPCTimeout, ppm(maxPPM))}, true
	}
	plus := ""
	if late > 0 {
		plus = fmt.Sprintf(" and %s of round trips late (%s)", ppm(late), why)
	}
	if loss := int64(plan.Network.LossPPM); loss+late > maxPPM {
		return Breach{By: "network.loss_ppm", Detail: fmt.Sprintf("%s of messages lost%s, more than %s",
			ppm(loss), plus, ppm(maxPPM))}, true
	}
	if lost := int64(faults.ReplyLost(plan.Network)); lost+late > maxPPM {
		return Breach{By: "network.loss_ppm and network.reply_loss_ppm", Detail: fmt.Sprintf(
			"%s of replies lost (on the way or after the request was applied)%s, more than %s",
			ppm(lost), plus, ppm(maxPPM))}, true
	}
	for i, e := range plan.Events {
		if e.Kind == faults.Partition && e.OneWay && e.At.Nanoseconds() < end {
			return Breach{Time: e.At.Nanoseconds(), By: fmt.Sprintf("events[%d] (a one-way partition for %s)", i, e.For),
				Detail: "every reply across it is lost after its request was applied, more than " + ppm(maxPPM)}, true
		}
	}
	return Breach{}, false
}

// lateOf is, in ppm, the share of the worst link's round trips that
// outlast the RPC timeout: the slow link's (lateShare), plus those of the
// 1% of messages in the latency tail whose extra delay passes the slack.
func lateOf(c sim.Config) int64 {
	late := lateShare(c)
	if tail := c.LatencyTail.Microseconds(); tail > 0 {
		slack := (c.RPCTimeout - 2*c.LatencyMax - c.SlowExtra).Microseconds()
		switch {
		case slack <= 0:
			late += 2 * tailPPM
		case slack < tail:
			late += 2 * tailPPM * (tail - slack) / tail
		}
	}
	return min(late, 1_000_000)
}

// tailPPM is the share of messages in the latency tail (sim.Config.LatencyTail).
const tailPPM = 10_000

// describeLate says which round trips come late: the slow link's, the tail's.
func describeLate(c sim.Config) string {
	if lateShare(c) > 0 {
		return "round trips " + DescribeSlowLink(c)
	}
	return fmt.Sprintf("the 1%% of messages up to %s late", c.LatencyTail)
}

// lateShare is, in ppm, the share of the slow link's round trips that
// outlast the RPC timeout, at the worst base latency: each leg adds a
// uniform delay below SlowExtra, so the two add up to more than the slack
// with the probability of a sum of two uniforms. Integers (microseconds),
// so a world drawn by it is the same on every machine.
func lateShare(c sim.Config) int64 {
	return lateShareOf(c.RPCTimeout-2*c.LatencyMax, c.SlowExtra)
}

// slowLinkLate is, in ppm, the share of the slow link's round trips that
// outlast the RPC timeout when every leg adds a uniform draw below the
// link's SlowExtra and another below the plan's extra latency e: the sum of
// four uniform draws past the slack, computed on a grid of lateGrid steps
// per draw (integers, so a judgement is the same on every machine).
func slowLinkLate(c sim.Config, e time.Duration) int64 {
	s := c.SlowExtra.Microseconds()
	if s <= 0 || e <= 0 {
		return 0
	}
	slack := (c.RPCTimeout - 2*c.LatencyMax).Microseconds()
	if slack <= 0 {
		return 1_000_000
	}
	x := e.Microseconds()
	step := max((s+x)/lateGrid, 1) // µs per cell
	// dist[i] counts the ways the legs so far sum to i cells.
	dist := []int64{1}
	for _, width := range []int64{s, s, x, x} {
		n := max(width/step, 1) // cells the draw spreads over
		next := make([]int64, len(dist)+int(n))
		for i, w := range dist {
			for k := range n {
				next[i+int(k)] += w
			}
		}
		dist = next
	}
	var total, late int64
	for i, w := range dist {
		total += w
		if int64(i)*step+step/2 > slack {
			late += w
		}
	}
	return late * 1_000_000 / total
}

// lateGrid is the cells per uniform draw in slowLinkLate.
const lateGrid = 40

// lateShareOf is, in ppm, the chance that two legs each delayed by a
// uniform draw below extra add up to more than slack.
func lateShareOf(slackD, extra time.Duration) int64 {
	s := extra.Microseconds()
	if s <= 0 {
		return 0
	}
	slack := slackD.Microseconds()
	switch {
	case slack <= 0:
		return 1_000_000
	case slack >= 2*s:
		return 0
	case slack >= s:
		d := 2*s - slack // P = d² / 2s²
		return d * d * 1_000_000 / (2 * s * s)
	default:
		return 1_000_000 - slack*slack*1_000_000/(2*s*s)
	}
}
