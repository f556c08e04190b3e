package cli

import (
	"testing"

	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/sim/seedrun"
)

// The command printed when a sweep is interrupted runs exactly the seeds
// it did not: the rest of the range, the same shard's seeds.
func TestResumeCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		o    explore.SweepOptions
		next uint64
		want string
	}{
		{[]string{"-variant", "corrected", "-n", "1000", "-keep-going"}, explore.SweepOptions{From: 1, Count: 1000}, 401,
			seedrun.CommandPrefix + " sweep -variant corrected -keep-going -seeds 401..1000"},
		{[]string{"-seeds=10..49", "-shard", "1/4", "-faults", "pause"}, explore.SweepOptions{From: 10, Count: 40, ShardIndex: 1, ShardCount: 4}, 23,
			seedrun.CommandPrefix + " sweep -faults pause -seeds 23..49 -shard 0/4"},
	} {
		if got := resumeCommand(c.args, c.o, c.next); got != c.want {
			t.Errorf("resumeCommand(%q) =\n  %s\nwant\n  %s", c.args, got, c.want)
		}
		// The resumed shard selects the seeds the first left.
		o := c.o
		var left []uint64
		for i := range o.Len() {
			if s := o.SeedAt(i); s >= c.next {
				left = append(left, s)
			}
		}
		r := explore.SweepOptions{From: c.next, Count: int(o.From + uint64(o.Count) - c.next)}
		if o.ShardCount > 0 {
			r.ShardCount = o.ShardCount
		}
		if r.Len() != len(left) || (len(left) > 0 && r.SeedAt(0) != left[0]) {
			t.Errorf("%+v resumed at %d selects %d seeds from %d, want %v", o, c.next, r.Len(), r.SeedAt(0), left)
		}
	}
}
