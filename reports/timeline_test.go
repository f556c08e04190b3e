package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

func timeline(t *testing.T, h model.History, plan faults.Plan, v model.Verdict, opt TimelineOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := Timeline(&b, h, plan, v, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTimelineGolden(t *testing.T) {
	h, plan, v := pausedHolder()
	golden(t, "timeline_paused_holder.golden", []byte(timeline(t, h, plan, v, TimelineOptions{})))
}

func TestTimelineAroundFirstViolation(t *testing.T) {
	h, plan, v := pausedHolder()
	got := timeline(t, h, plan, v, TimelineOptions{Around: time.Second})
	golden(t, "timeline_around.golden", []byte(got))
	for _, want := range []string{"1.012s  h0/t0  acquire → granted", "… 2 lines elided", "… 8 lines elided", "XX mutual-exclusion", "h1/t0  acquire → granted (took 15ms)"} {
		if !strings.Contains(got, want) {
			t.Errorf("window lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "lost-update") {
		t.Errorf("window shows the lost update, 10s after the first violation:\n%s", got)
	}
}

func TestTimelineMaxLines(t *testing.T) {
	h, plan, v := pausedHolder()
	got := timeline(t, h, plan, v, TimelineOptions{MaxLines: 3})
	lines := strings.Split(strings.TrimSpace(got), "\n")
	// steady faults, the first 3 lines, then what explains the violation
	// (the faults before it, the grant), elisions between
	if !strings.Contains(lines[2], "h1/t0  acquire → denied") || !strings.Contains(got, "XX mutual-exclusion") ||
		!strings.Contains(got, "lines elided") || strings.Contains(got, "62.100s") {
		t.Errorf("MaxLines 3 gave:\n%s", got)
	}
}

// Around a violation the window keeps, however far back, what makes it:
// each involved client's last grant before it, its pauses, and the faults
// since; the denied attempts and accesses outside the window stay elided.
func TestTimelineAroundWithMaxLinesKeepsTheViolation(t *testing.T) {
	h, plan, v := pausedHolder()
	got := timeline(t, h, plan, v, TimelineOptions{Around: time.Hour, MaxLines: 3})
	for _, want := range []string{
		"1.012s  h0/t0  acquire → granted", "!! pause h0/t0 for 70s", "!! jump h0 +90s",
		"62.015s  h1/t0  acquire → granted", "XX mutual-exclusion", "… 2 lines elided", "… 9 lines elided",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Around 1h, MaxLines 3 does not show %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "acquire → denied") || strings.Contains(got, "2.000s  h0/t0  read 0") {
		t.Errorf("Around 1h, MaxLines 3 shows what explains nothing:\n%s", got)
	}
}

func TestTimelineOrdersTies(t *testing.T) {
	// A fault at the time of an event comes first; a violation at the same
	// time comes after it.
	h := model.History{
		Clients: []model.Client{{Name: "h0/t0"}},
		Events:  []model.Event{{Seq: 1, Time: sec(5), Client: 0, Kind: model.AcquireReturn, Granted: true}},
		End:     sec(6),
	}
	plan := faults.Plan{Events: []faults.Event{{At: 5 * time.Second, Kind: faults.Crash, Node: 2}}}
	v := model.Verdict{Violations: []model.Violation{{Kind: model.MutualExclusion, Time: sec(5), Story: "s"}}}
	got := timeline(t, h, plan, v, TimelineOptions{})
	want := "   5.000s  !! crash n2 for good\n" +
		"   5.000s  h0/t0  acquire → granted\n" +
		"   5.000s  XX mutual-exclusion: s\n" +
		"   6.000s  -- run ends: counter 0, 0 messages\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTimelineShowsOnlyFaultsBeforeTheEnd(t *testing.T) {
	// A crash at the end itself fired; its restart, and anything later,
	// did not happen in this run.
	h := model.History{End: sec(10)}
	plan := faults.Plan{Events: []faults.Event{
		{At: 4 * time.Second, For: 3 * time.Second, Kind: faults.Crash, Node: 0},
		{At: 8 * time.Second, For: 5 * time.Second, Kind: faults.Crash, Node: 1},
		{At: 10 * time.Second, For: time.Second, Kind: faults.Crash, Node: 2},
		{At: 11 * time.Second, For: time.Second, Kind: faults.Crash, Node: 3},
	}}
	got := timeline(t, h, plan, model.Verdict{}, TimelineOptions{})
	want := "   4.000s  !! crash n0 for 3s\n" +
		"   7.000s  !! n0 restarts\n" +
		"   8.000s  !! crash n1 for 5s\n" +
		"  10.000s  !! crash n2 for 1s\n" +
		"  10.000s  -- run ends: counter 0, 0 messages\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestTimelineUnknownClientIsNamedByIndex(t *testing.T) {
	h := model.History{Events: []model.Event{{Seq: 1, Time: 0, Client: 7, Kind: model.ReleaseReturn}}}
	if got := timeline(t, h, faults.Plan{}, model.Verdict{}, TimelineOptions{}); !strings.Contains(got, "c7  release returned") {
		t.Errorf("got\n%s", got)
	}
}

func TestTimelineFencing(t *testing.T) {
	h := model.History{
		Clients: []model.Client{{Name: "h0/t0"}},
		Events: []model.Event{
			{Seq: 1, Time: sec(1), Kind: model.AcquireReturn, Granted: true, HasToken: true, Token: 3, ValidUntilTrue: sec(61)},
			{Seq: 2, Time: sec(2), Kind: model.ResourceRead, HasToken: true, Token: 3},
			{Seq: 3, Time: sec(3), Kind: model.ResourceWrite, HasToken: true, Token: 3, Value: 6},
			{Seq: 4, Time: sec(61), Kind: model.BeliefEnd, Reason: "expired"},
		},
		End: sec(70),
	}
	got := timeline(t, h, faults.Plan{}, model.Verdict{}, TimelineOptions{})
	for _, want := range []string{
		"   1.000s  h0/t0  acquire → granted (token 3, valid to 61.000s)\n",
		"   2.000s  h0/t0  read (rejected: stale token 3)\n",
		"   3.000s  h0/t0  write 6 (rejected: stale token 3)\n",
		"  61.000s  h0/t0  belief ends (expired)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks %q:\n%s", want, got)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 30 * time.Second: "30s", 1500 * time.Millisecond: "1.5s", 250 * time.Millisecond: "250ms",
		-5 * time.Second: "-5s", 1500 * time.Microsecond: "1.5ms",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// The deliveries that changed the lock's state are lines of their own,
// kept around the violation however far back they are: here a late
// remove (sent before the pause, applied after h1/t0's write) deletes the
// item h1/t0 was just granted on; the application's data is never a lock
// item, and a stay of an uninvolved client stays elided.
func TestTimelineShowsTheDeliveriesThatChangedTheLock(t *testing.T) {
	h, plan, v := pausedHolder()
	h.Clients = append(h.Clients, model.Client{Name: "h2/t0", Host: "h2"})
	h.Items = []model.ItemLife{
		{Node: "n0", Owner: "h0", Client: 0, From: 1005 * int64(time.Millisecond), To: sec(61), How: "expired", By: -1},
		{Node: "n0", Owner: "h1", Client: 1, From: 62010 * int64(time.Millisecond), To: 62300 * int64(time.Millisecond), How: "removed", By: 0, Sent: sec(2.4)},
		{Node: "n2", Owner: "h2", Client: 2, From: sec(20), To: sec(21), How: "removed", By: 2, Sent: sec(20.9)},
		{Node: "n1", Key: "k", App: true, Client: -1, From: 0, To: sec(90), By: -1},
	}
	got := timeline(t, h, plan, v, TimelineOptions{Around: 10 * time.Millisecond})
	for _, want := range []string{
		"1.005s  n0     h0/t0's lock item written",
		"61.000s  n0     h0/t0's lock item expires",
		"62.010s  n0     h1/t0's lock item written",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the timeline around the violation lacks %q:\n%s", want, got)
		}
	}
	full := timeline(t, h, plan, v, TimelineOptions{})
	if want := "62.300s  n0     h1/t0's lock item removed by h0/t0's request sent at 2.400s"; !strings.Contains(full, want) {
		t.Errorf("the timeline lacks the late remove %q:\n%s", want, full)
	}
	if strings.Contains(got, "h2/t0's lock item") {
		t.Errorf("an uninvolved client's item is kept around the violation:\n%s", got)
	}
	if strings.Contains(full, `"k"`) || strings.Contains(full, "n1     ") {
		t.Errorf("the application's data shows as a line of its own:\n%s", full)
	}
}

// A real-code run's requests, with their replies, are lines of the node
// they reached, for the clients the first violation names, and the
// others' that did something, within the window around it; refused
// retries of others, dials and the resource's lines are not.
func TestTimelineShowsTheRequestsOfTheClientsInvolved(t *testing.T) {
	h, plan, v := pausedHolder()
	trace := []model.TraceEvent{
		{Time: sec(62.010), What: "n0 <- h1/t0: set lock h1/t0-2 px 8000 nx => OK"},
		{Time: sec(62.011), What: "n1 <- h9/t9: set lock x px 8000 nx => (nil)"},
		{Time: sec(62.0115), What: "n1 <- h8/t8: del lock => (integer) 1"},
		{Time: sec(62.012), What: "h1/t0 dials n2: connected"},
		{Time: sec(62.013), What: "h1/t0->n2 connection lost: a message was lost"},
		{Time: sec(62.014), What: "resource read by h1/t0 value=0"},
		{Time: sec(20.000), What: "n0 <- h1/t0: set lock h1/t0-1 px 8000 nx => (nil)"},
	}
	got := timeline(t, h, plan, v, TimelineOptions{Around: time.Second, Requests: trace})
	for _, want := range []string{"n0     ← h1/t0: set lock h1/t0-2 px 8000 nx => OK", "n2     h1/t0's connection lost: a message was lost",
		"n1     ← h8/t8: del lock => (integer) 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"h9/t9", "dials", "resource read", "h1/t0-1"} {
		if strings.Contains(got, not) {
			t.Errorf("timeline shows %q, which it should leave out:\n%s", not, got)
		}
	}
}

// Each Extend is a line with what it answered, and a grant that was
// extended shows its own validity, not the last one an Extend reported.
func TestTimelineShowsEachExtendAndTheGrantsOwnValidity(t *testing.T) {
	h := model.History{
		Clients: []model.Client{{Name: "h0/t0", Host: "h0"}},
		Events: []model.Event{
			{Seq: 1, Time: sec(1), Kind: model.AcquireCall},
			{Seq: 2, Time: sec(1.010), Kind: model.AcquireReturn, Granted: true, ValidUntilTrue: sec(20)},
			{Seq: 3, Time: sec(15), Kind: model.BeliefEnd, Reason: "release"},
		},
		Extends: []model.Extend{
			{Client: 0, Called: sec(5), Time: sec(5.010), OK: true, From: sec(9), To: sec(13)},
			{Client: 0, Called: sec(9), Time: sec(9.020), OK: true, From: sec(13), To: sec(20)},
		},
		End: sec(30),
	}
	got := timeline(t, h, faults.Plan{}, model.Verdict{}, TimelineOptions{})
	for _, want := range []string{"acquire → granted (valid to 9.000s, took 10ms)", "extend → extended (valid to 13.000s, took 10ms)", "extend → extended (valid to 20.000s, took 20ms)"} {
		if !strings.Contains(got, want) {
			t.Errorf("timeline lacks %q:\n%s", want, got)
		}
	}
}
