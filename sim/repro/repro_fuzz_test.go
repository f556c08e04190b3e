package repro_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/locksim/locksim/variants"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/repro"
	"github.com/locksim/locksim/sim/seedrun"
)

// FuzzDecodeRepro: DecodeRepro never panics, whatever the bytes, and every
// repro it accepts encodes to a document it accepts again, byte for byte
// the same. The seed corpus starts from real repros of failing runs.
// Run: go test -fuzz=FuzzDecodeRepro ./sim/repro
func FuzzDecodeRepro(f *testing.F) {
	cfg := sim.DefaultConfig()
	cfg.Duration = time.Minute
	for _, c := range []faults.Class{faults.ClassThreads, faults.ClassSkew, faults.ClassAll} {
		t := seedrun.Target{Variant: variant("original"), Config: cfg, Classes: []faults.Class{c}}
		o, err := seedrun.RunSeed(t, 2, seedrun.DefaultOptions())
		if err != nil {
			f.Fatal(err)
		}
		data, err := repro.NewRepro(t, o).Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{``, `{}`, `null`, `{"format":1}`, `{"format":1,"variant":"original"} {}`,
		`{"format":99}`, `{"format":1,"bogus":1}`, `[1]`, `{"format":1,"config":{"nodes":-1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := repro.DecodeRepro(data, variants.Lookup)
		if err != nil {
			return
		}
		again, err := r.Encode()
		if err != nil {
			t.Fatalf("Encode of a decoded repro: %v", err)
		}
		r2, err := repro.DecodeRepro(again, variants.Lookup)
		if err != nil {
			t.Fatalf("re-decode of an accepted repro: %v\n%s", err, again)
		}
		third, err := r2.Encode()
		if err != nil || !bytes.Equal(again, third) {
			t.Fatalf("round trip changed the repro (err %v):\n%s\n%s", err, again, third)
		}
	})
}
