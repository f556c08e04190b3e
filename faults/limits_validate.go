package faults

import "time"

// validateLimits checks p against the limits of limits.go, before any of
// its lists is walked: its size, its clients (threads_per_host on s's
// hosts, and their time), and the spans no field checks on its own (clock
// offsets, the sum of the jumps, the fault points' pauses).
func (p Plan) validateLimits(s Shape) error {
	switch {
	case len(p.Events) > MaxEvents:
		return bad("events", "(%d of them) are more than the %d a plan may hold", len(p.Events), MaxEvents)
	case p.ThreadsPerHost < 0:
		return bad("threads_per_host", "%d must not be negative", p.ThreadsPerHost)
	case p.ThreadsPerHost > MaxClients/s.Hosts:
		return bad("threads_per_host", "%d on %d hosts is more than %d client threads in all", p.ThreadsPerHost, s.Hosts, MaxClients)
	case p.ThreadsPerHost > 0 && time.Duration(s.ClientsFor(p))*s.Duration > MaxClientTime:
		return bad("threads_per_host", "%d with %d hosts for %v is more than %v of client time (clients × duration)",
			p.ThreadsPerHost, s.Hosts, s.Duration, MaxClientTime)
	}
	for i, c := range p.Clocks {
		if err := notPastSpan(index("clocks", i)+".offset", c.Offset); err != nil {
			return err
		}
	}
	if err := notPastSpan("points.until_validity_left", p.Points.UntilValidityLeft); err != nil {
		return err
	}
	var jumps time.Duration // the sum of |delta|, each at most MaxSpan
	for i, e := range p.Events {
		if e.Kind != ClockJump {
			continue
		}
		if err := notPastSpan(index("events", i)+".delta", e.Delta); err != nil {
			return err
		}
		if jumps += max(e.Delta, -e.Delta); jumps > MaxSpan {
			return bad(index("events", i)+".delta", "brings the plan's clock jumps to more than %v in all", MaxSpan)
		}
	}
	return nil
}
