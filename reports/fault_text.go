package reports

import (
	"fmt"
	"strings"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// faultStart describes a timed fault as it begins: "crash n1 for 30s (wipe)".
func faultStart(h model.History, e faults.Event) string {
	switch e.Kind {
	case faults.Crash:
		s := "crash " + processName(faults.NodeProcess, e.Node)
		if e.For > 0 {
			s += " for " + formatDuration(e.For)
		} else {
			s += " for good"
		}
		if e.Wipe {
			s += " (wipe)"
		}
		return s
	case faults.Partition:
		way := ""
		if e.OneWay {
			way = " one-way"
		}
		return fmt.Sprintf("partition %s%s for %s", groupName(e.Nodes, e.Hosts), way, formatDuration(e.For))
	case faults.Clog:
		return fmt.Sprintf("clog %s for %s", processName(faults.NodeProcess, e.Node), formatDuration(e.For))
	case faults.ClockJump:
		return fmt.Sprintf("jump %s %s", processName(e.Target, e.Index), formatSigned(e.Delta))
	case faults.Pause:
		if e.Point == faults.InAcquire {
			return fmt.Sprintf("pause %s for %s at one of its next calls inside acquire", clientName(h, e.Client), formatDuration(e.For))
		}
		return fmt.Sprintf("pause %s for %s", clientName(h, e.Client), formatDuration(e.For))
	case faults.Topology:
		if e.Point == faults.WhileHeld {
			return "topology → " + nodeList(e.Nodes) + " once a lock is held"
		}
		return "topology → " + nodeList(e.Nodes)
	}
	return fmt.Sprintf("%s (unknown fault kind)", e.Kind)
}

// faultEnd describes the moment a timed fault stops acting, if it has one:
// a node restarting, a partition healing, a paused client resuming.
func faultEnd(h model.History, e faults.Event) (string, bool) {
	if e.For <= 0 {
		return "", false
	}
	switch e.Kind {
	case faults.Crash:
		s := processName(faults.NodeProcess, e.Node) + " restarts"
		if e.Wipe {
			s += " empty"
		}
		return s, true
	case faults.Partition:
		return "partition " + groupName(e.Nodes, e.Hosts) + " heals", true
	case faults.Clog:
		return "clog " + processName(faults.NodeProcess, e.Node) + " ends", true
	case faults.Pause:
		if e.Point != "" {
			return "", false // it ends when it struck plus For: the history's pause says when
		}
		return clientName(h, e.Client) + " resumes", true
	}
	return "", false
}

// steadyFaults describes the plan's settings that hold for the whole run,
// one phrase each, in a fixed order; nil for a plan without any.
func steadyFaults(p faults.Plan) []string {
	var out []string
	n := p.Network
	if n.LossPPM > 0 {
		out = append(out, "loss "+formatPPM(n.LossPPM))
	}
	if n.DuplicatePPM > 0 {
		out = append(out, "duplication "+formatPPM(n.DuplicatePPM))
	}
	if n.ReplyLossPPM > 0 {
		out = append(out, "reply loss "+formatPPM(n.ReplyLossPPM))
	}
	if n.ExtraLatencyMax > 0 {
		out = append(out, "extra latency ≤ "+formatDuration(n.ExtraLatencyMax))
	}
	for _, c := range p.Clocks {
		var parts []string
		if c.Offset != 0 {
			parts = append(parts, "offset "+formatSigned(c.Offset))
		}
		if c.DriftPPM != 0 {
			parts = append(parts, fmt.Sprintf("drift %+dppm", c.DriftPPM))
		}
		if len(parts) > 0 {
			out = append(out, "clock "+processName(c.Kind, c.Index)+" "+strings.Join(parts, " "))
		}
	}
	if p.ThreadsPerHost > 0 {
		out = append(out, fmt.Sprintf("%d threads per host", p.ThreadsPerHost))
	}
	if pts := p.Points; pts.PausePPM > 0 {
		switch {
		case pts.UntilValidityLeft > 0:
			out = append(out, fmt.Sprintf("pauses at fault points %s, until %s of the validity is left", formatPPM(pts.PausePPM), formatDuration(pts.UntilValidityLeft)))
		case pts.UntilValidityLeft < 0:
			out = append(out, fmt.Sprintf("pauses at fault points %s, until %s past the validity", formatPPM(pts.PausePPM), formatDuration(-pts.UntilValidityLeft)))
		default:
			out = append(out, fmt.Sprintf("pause %s at fault points %s", formatDuration(pts.PauseFor), formatPPM(pts.PausePPM)))
		}
	}
	if p.Deployment.NoQuarantine {
		out = append(out, "no restart quarantine")
	}
	if p.Deployment.NoFencing {
		out = append(out, "the resource ignores tokens")
	}
	return out
}
