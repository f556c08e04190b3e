package repro_test

import (
	"strings"
	"testing"

	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/repro"
	"github.com/locksim/locksim/variants"
)

// A repro past the limits is refused by DecodeRepro, whoever calls it: a
// run of 2^62 ns, a liveness bound that would overflow, null.
func TestDecodeReproLimits(t *testing.T) {
	r := repro.Repro{Format: repro.ReproFormat, Variant: "original", Config: sim.DefaultConfig()}
	ok, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repro.DecodeRepro(ok, variants.Lookup); err != nil {
		t.Fatalf("a valid repro: %v", err)
	}
	r.Config.Duration = 1 << 62
	long, _ := r.Encode()
	for _, c := range []struct{ data, want string }{
		{string(long), "config: duration"},
		{strings.Replace(string(ok), `"verdict"`, `"check": {"LivenessBoundTTLs": 1001}, "verdict"`, 1), "liveness_bound_ttls (1001)"},
		{"null", "not a JSON object"},
		{"", "empty"},
	} {
		if _, err := repro.DecodeRepro([]byte(c.data), variants.Lookup); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeRepro: %v, want %q", err, c.want)
		}
	}
}
