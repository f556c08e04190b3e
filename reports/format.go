package reports

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// This file writes locksim's values the way every report shows them:
// true times as seconds with milliseconds, durations in the plan's units,
// processes by the names the simulator gives them (n1, h0, h0/t1).

// formatTime writes a true time (ns since the epoch) as "  61.002s".
func formatTime(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%4s.%03ds", sign+strconv.FormatInt(ns/1e9, 10), ns%1e9/1e6)
}

// formatDuration writes a duration as "30s", "1.5s", "250ms" or, below a
// millisecond, in Go's notation.
func formatDuration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	switch {
	case d == 0:
		return "0s"
	case d%time.Second == 0:
		return fmt.Sprintf("%s%ds", sign, d/time.Second)
	case d >= time.Second && d%time.Millisecond == 0:
		frac := strings.TrimRight(fmt.Sprintf("%03d", d%time.Second/time.Millisecond), "0")
		return fmt.Sprintf("%s%d.%ss", sign, d/time.Second, frac)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%s%dms", sign, d/time.Millisecond)
	}
	if d >= time.Second {
		return sign + formatDuration(d.Round(time.Millisecond)) // 7.676625s reads as 7.677s
	}
	if d >= time.Millisecond {
		return sign + (d.Round(10 * time.Microsecond)).String()
	}
	return sign + d.String()
}

// Duration writes a duration the way reports do: "30s", "1.5s", "7.677s",
// "250ms", rounded to a millisecond from a second up.
func Duration(d time.Duration) string { return formatDuration(d) }

// formatSigned writes a duration with its sign always shown: "+90s", "-5s".
func formatSigned(d time.Duration) string {
	if d >= 0 {
		return "+" + formatDuration(d)
	}
	return formatDuration(d)
}

// formatPPM writes a probability in parts per million as a percentage.
func formatPPM(p faults.PPM) string {
	s := strings.TrimRight(fmt.Sprintf("%d.%04d", p/10000, p%10000), "0")
	return strings.TrimSuffix(s, ".") + "%"
}

// clientName names client index i from the history, or "c7" when the
// history does not describe it.
func clientName(h model.History, i int) string {
	if i >= 0 && i < len(h.Clients) && h.Clients[i].Name != "" {
		return h.Clients[i].Name
	}
	return "c" + strconv.Itoa(i)
}

// processName names a node ("n1") or a host ("h0").
func processName(kind faults.ProcessKind, index int) string {
	if kind == faults.HostProcess {
		return "h" + strconv.Itoa(index)
	}
	return "n" + strconv.Itoa(index)
}

// nodeList writes node indexes as "n3,n4,n0", keeping their order.
func nodeList(nodes []int) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = processName(faults.NodeProcess, n)
	}
	return strings.Join(names, ",")
}

// groupName writes a partition's group as "{n0,h1}": nodes first, then hosts.
func groupName(nodes, hosts []int) string {
	names := make([]string, 0, len(nodes)+len(hosts))
	for _, n := range nodes {
		names = append(names, processName(faults.NodeProcess, n))
	}
	for _, x := range hosts {
		names = append(names, processName(faults.HostProcess, x))
	}
	return "{" + strings.Join(names, ",") + "}"
}
