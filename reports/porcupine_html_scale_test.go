package reports

import (
	"io"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
)

// A violating history with many concurrent denied attempts must still render:
// porcupine explores every order of the denials in flight, which is
// exponential in clients, so the page leaves them out.
func TestPorcupineHTMLManyConcurrentDenials(t *testing.T) {
	const clients = 30
	var h model.History
	var seq uint64
	add := func(c int, k model.Kind, granted bool) {
		seq++
		h.Events = append(h.Events, model.Event{Seq: seq, Time: int64(seq) * 1e6, Client: c, Kind: k, Granted: granted})
	}
	for c := 0; c < clients; c++ {
		h.Clients = append(h.Clients, model.Client{Name: "h" + string(rune('a'+c%26)) + "/t0", Host: "h"})
	}
	add(0, model.AcquireCall, false)
	add(0, model.AcquireReturn, true) // client 0 holds and never lets go
	for c := 1; c < clients; c++ {
		add(c, model.AcquireCall, false)
	}
	for c := 1; c < clients; c++ {
		add(c, model.AcquireReturn, false)
	}
	add(1, model.AcquireCall, false)
	add(1, model.AcquireReturn, true) // a second holder: the violation
	h.End = int64(seq+1) * 1e6

	done := make(chan error, 1)
	go func() { done <- PorcupineHTML(io.Discard, h, faults.Plan{}, "mutex") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("porcupine HTML did not finish in a minute on 30 clients (denials fed to porcupine?)")
	}
}
