package variants

import (
	"strings"
	"testing"
	"time"

	"github.com/locksim/locksim/algorithm/algotest"
)

// On failure Redlock unlocks every master, including one whose SET reply was
// lost, and retries after random delays below 200 ms: 3 attempts in all.
func TestRedlockFailureUnlocksAllAndRetries(t *testing.T) {
	w := algotest.NewWorld(3)
	for _, n := range w.Nodes[1:] {
		n.SetIfAbsentTTL("k_lock", "h9", time.Hour)
	}
	w.Nodes[0].LoseReplies = 1
	w.Log = nil
	env := w.NewEnv("h1", "h1/t0", 1)
	if mustLookup(t, "redlock").New().Acquire(env, "k").Granted {
		t.Fatal("granted while another client holds two of three masters")
	}
	sets := 0
	for _, l := range w.Log {
		if strings.Contains(l, " setnx ") {
			sets++
		}
	}
	if sets != 9 {
		t.Fatalf("%d SETs, want 3 attempts x 3 masters; log %v", sets, w.Log)
	}
	if len(env.Slept) != 2 {
		t.Fatalf("slept %v, want two delays", env.Slept)
	}
	for _, d := range env.Slept {
		if d < 0 || d >= 200*time.Millisecond {
			t.Fatalf("delay %v outside [0, 200ms)", d)
		}
	}
	if it, ok := w.Nodes[0].Item("k_lock"); ok {
		t.Fatalf("n1 still holds %+v (its SET reply was lost)", it)
	}
	for _, n := range w.Nodes[1:] {
		if it, _ := n.Item("k_lock"); it.Owner != "h9" {
			t.Fatalf("%s: the other client's item was touched: %+v", n.Name(), it)
		}
	}
}

// N/2+1 masters: 3 of 5 is enough, 2 of 5 is not.
func TestRedlockMajority(t *testing.T) {
	for up, want := range map[int]bool{2: false, 3: true} {
		w := algotest.NewWorld(5)
		for _, n := range w.Nodes[up:] {
			n.Down = true
		}
		if got := mustLookup(t, "redlock").New().Acquire(w.NewEnv("h1", "h1/t0", 1), "k").Granted; got != want {
			t.Fatalf("%d of 5 up: granted %v, want %v", up, got, want)
		}
	}
}
