package model

import (
	"math/rand/v2"
	"testing"

	"github.com/anishathalye/porcupine"
)

// longHistory simulates clients contending for a correct lock: each calls
// acquire, is granted if the lock is free when the reply comes back (else
// denied, and retries after thinking), then reads and increments the
// counter and releases. Denied attempts overlap holds, as in real runs. It
// stops once the history has at least ops mutex operations.
func longHistory(clients, ops int) History {
	const (
		idle = iota
		returning
		reading
		writing
		ending
	)
	rng := rand.New(rand.NewPCG(1, 2))
	b := newBuilder()
	for c := range clients {
		b.h.Clients = append(b.h.Clients, Client{Name: "h" + string(rune('0'+c)) + "/t0"})
	}
	next := make([]int64, clients) // ms of each client's next action
	state := make([]int, clients)
	holder, register, nops := -1, int64(0), 0
	for nops < ops {
		c := 0
		for i := range next {
			if next[i] < next[c] {
				c = i
			}
		}
		now := next[c]
		switch state[c] {
		case idle:
			b.call(now, c)
			state[c], next[c] = returning, now+1+rng.Int64N(5)
		case returning:
			nops++
			if holder < 0 {
				b.grant(now, c)
				holder, state[c], next[c] = c, reading, now+1
			} else {
				b.deny(now, c)
				state[c], next[c] = idle, now+rng.Int64N(30)
			}
		case reading:
			b.read(now, c, register, true)
			state[c], next[c] = writing, now+rng.Int64N(20)
		case writing:
			register++
			b.write(now, c, register, true)
			state[c], next[c] = ending, now+1
		case ending:
			nops++
			b.release(now, c)
			holder, state[c], next[c] = -1, idle, now+rng.Int64N(30)
		}
	}
	return b.endAt(max(next[0], 1)).h
}

func TestLongHistoryIsClean(t *testing.T) {
	h := longHistory(5, 2000)
	if v := Check(h, CheckOptions{Porcupine: true}); !v.OK() {
		t.Fatalf("violations %+v", v.Violations)
	}
}

func reportOps(b *testing.B, ops int) {
	b.ReportMetric(float64(ops)*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkSweep10k(b *testing.B) {
	h := longHistory(5, 10_000)
	for b.Loop() {
		if _, found := FirstOverlap(h); found {
			b.Fatal("overlap in a clean history")
		}
	}
	reportOps(b, 10_000)
}

func BenchmarkMutexPorcupine10k(b *testing.B) {
	h := longHistory(5, 10_000)
	model, ops := MutexOperations(h)
	for b.Loop() {
		if !porcupine.CheckOperations(model, ops) {
			b.Fatal("clean history judged illegal")
		}
	}
	reportOps(b, len(ops))
}

func BenchmarkCounterPorcupine10k(b *testing.B) {
	h := longHistory(5, 10_000)
	model, ops := CounterOperations(h)
	for b.Loop() {
		if !porcupine.CheckOperations(model, ops) {
			b.Fatal("clean history judged illegal")
		}
	}
	reportOps(b, len(ops))
}

func BenchmarkCheck10k(b *testing.B) {
	h := longHistory(5, 10_000)
	for b.Loop() {
		if v := Check(h, DefaultCheckOptions()); !v.OK() {
			b.Fatal(v.Violations)
		}
	}
	reportOps(b, 10_000)
}
