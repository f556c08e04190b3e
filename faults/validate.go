package faults

import (
	"fmt"
	"strconv"
	"time"
)

// PlanError names the field of a plan that is wrong, by its JSON path
// ("events[3].node"), and why.
type PlanError struct {
	Field  string
	Reason string
}

func (e *PlanError) Error() string { return "plan: " + e.Field + " " + e.Reason }

// maxDriftPPM bounds clock drift: beyond it a local clock runs more than
// twice as fast as true time, which no real oscillator does.
const maxDriftPPM = 1_000_000

// Validate reports the first field of p that makes no sense in a world of
// shape s: indexes out of range, probabilities above one, negative or
// missing durations, unknown names, events out of order. Generated plans
// always validate; a hand-written one should be validated before a run.
// An invalid shape is reported first, as a shape error.
func (p Plan) Validate(s Shape) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if err := p.validateLimits(s); err != nil {
		return err
	}
	if err := p.validateNetwork(); err != nil {
		return err
	}
	if err := p.validateClocks(s); err != nil {
		return err
	}
	if err := p.validateUse(); err != nil {
		return err
	}
	if err := p.validatePoints(); err != nil {
		return err
	}
	if err := p.validateZones(s); err != nil {
		return err
	}
	for i, e := range p.Events {
		if i > 0 && e.At < p.Events[i-1].At {
			return bad(index("events", i)+".at", "%v is before events[%d].at %v: events must be sorted by at",
				e.At, i-1, p.Events[i-1].At)
		}
		if err := e.validate(index("events", i), s, s.ClientsFor(p)); err != nil {
			return err
		}
	}
	return nil
}

// Bounds of a time zone: UTC-14h..+14h, daylight-saving shifts of at most
// two hours either way.
const (
	maxZoneOffset = 14 * time.Hour
	maxZoneShift  = 2 * time.Hour
)

func (p Plan) validateZones(s Shape) error {
	for i, z := range p.Zones {
		f := index("zones", i)
		if err := inRange(f+".host", z.Host, s.Hosts, "hosts"); err != nil {
			return err
		}
		for j := range i {
			if p.Zones[j].Host == z.Host {
				return bad(f+".host", "%d repeats zones[%d].host: one zone per host", z.Host, j)
			}
		}
		switch {
		case z.Offset < -maxZoneOffset || z.Offset > maxZoneOffset:
			return bad(f+".offset", "%v is not within %v of UTC", z.Offset, maxZoneOffset)
		case z.Shift < -maxZoneShift || z.Shift > maxZoneShift:
			return bad(f+".shift", "%v is not a daylight-saving change (at most %v either way)", z.Shift, maxZoneShift)
		case z.ShiftAt < 0 || z.ShiftAt >= s.Duration:
			return bad(f+".shift_at", "%v is not within the run [0, %v)", z.ShiftAt, s.Duration)
		case z.Shift == 0 && z.ShiftAt != 0:
			return bad(f+".shift_at", "is set but shift is zero")
		}
	}
	return nil
}

func (p Plan) validateNetwork() error {
	n := p.Network
	if err := checkPPM("network.loss_ppm", n.LossPPM); err != nil {
		return err
	}
	if err := checkPPM("network.duplicate_ppm", n.DuplicatePPM); err != nil {
		return err
	}
	if err := checkPPM("network.reply_loss_ppm", n.ReplyLossPPM); err != nil {
		return err
	}
	return notNegative("network.extra_latency_max", n.ExtraLatencyMax)
}

func (p Plan) validateClocks(s Shape) error {
	for i, c := range p.Clocks {
		field := index("clocks", i)
		if err := checkProcess(field+".kind", field+".index", c.Kind, c.Index, s); err != nil {
			return err
		}
		for j := range i {
			if p.Clocks[j].Kind == c.Kind && p.Clocks[j].Index == c.Index {
				return bad(field, "sets %s %d's clock again (clocks[%d] did)", c.Kind, c.Index, j)
			}
		}
		if c.DriftPPM <= -maxDriftPPM || c.DriftPPM > maxDriftPPM {
			return bad(field+".drift_ppm", "%d must be in (-%d, %d]: at -%[2]d the clock stops",
				c.DriftPPM, maxDriftPPM, maxDriftPPM)
		}
	}
	return nil
}

func (p Plan) validateUse() error {
	u := p.Use
	if err := checkPPM("use.refresh_ppm", u.RefreshPPM); err != nil {
		return err
	}
	for _, c := range []struct {
		field string
		ppm   PPM
		d     time.Duration
		dname string
	}{{"use.late_ppm", u.LatePPM, u.LateBy, "use.late_by"}, {"use.short_deadline_ppm", u.ShortDeadlinePPM, u.Deadline, "use.deadline"}} {
		if err := checkPPM(c.field, c.ppm); err != nil {
			return err
		}
		if err := notNegative(c.dname, c.d); err != nil {
			return err
		}
		if c.ppm > 0 && c.d == 0 {
			return bad(c.dname, "must be positive when %s is set", c.field)
		}
	}
	return nil
}

func (p Plan) validatePoints() error {
	if err := checkPPM("points.pause_ppm", p.Points.PausePPM); err != nil {
		return err
	}
	if err := notNegative("points.pause_for", p.Points.PauseFor); err != nil {
		return err
	}
	if p.Points.PausePPM > 0 && p.Points.PauseFor == 0 && p.Points.UntilValidityLeft == 0 {
		return bad("points.pause_for", "must be positive when pause_ppm is set (or until_validity_left given)")
	}
	return nil
}

// bad builds a PlanError with a formatted reason.
func bad(field, format string, args ...any) error {
	return &PlanError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// index is the JSON path of element i of a list: "events[3]".
func index(list string, i int) string { return list + "[" + strconv.Itoa(i) + "]" }

func checkPPM(field string, v PPM) error {
	if v > Million {
		return bad(field, "%d exceeds %d", v, Million)
	}
	return nil
}

func notNegative(field string, d time.Duration) error {
	if d < 0 {
		return bad(field, "%v must not be negative", d)
	}
	return notPastSpan(field, d)
}

// notPastSpan checks a duration against MaxSpan, either way.
func notPastSpan(field string, d time.Duration) error {
	if d > MaxSpan || d < -MaxSpan {
		return bad(field, "%v is longer than %v, the longest span a plan may have", d, MaxSpan)
	}
	return nil
}

func positive(field string, d time.Duration) error {
	if d <= 0 {
		return bad(field, "%v must be positive", d)
	}
	return notPastSpan(field, d)
}

// inRange checks an index into a list of n things called what.
func inRange(field string, i, n int, what string) error {
	if i < 0 || i >= n {
		return bad(field, "%d out of range (%d %s)", i, n, what)
	}
	return nil
}

// checkProcess checks a (kind, index) pair naming a node or a host.
func checkProcess(kindField, indexField string, k ProcessKind, i int, s Shape) error {
	switch k {
	case NodeProcess:
		return inRange(indexField, i, s.Nodes, "nodes")
	case HostProcess:
		return inRange(indexField, i, s.Hosts, "hosts")
	}
	return bad(kindField, "%q unknown (valid: %s, %s)", k, NodeProcess, HostProcess)
}

// checkSet checks a list of distinct indexes into n things called what.
func checkSet(field string, set []int, n int, what string) error {
	for i, v := range set {
		if err := inRange(index(field, i), v, n, what); err != nil {
			return err
		}
		for j := range i {
			if set[j] == v {
				return bad(index(field, i), "%d repeats %s[%d]", v, field, j)
			}
		}
	}
	return nil
}
