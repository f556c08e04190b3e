package explore_test

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

// LimitReader gives max bytes and then fails, saying what was too large;
// it never stops silently, as io.LimitReader does.
func TestLimitReader(t *testing.T) {
	data, err := io.ReadAll(explore.LimitReader(strings.NewReader("12345"), "in", "thing", 5))
	if err != nil || string(data) != "12345" {
		t.Errorf("5 bytes of at most 5: %q, %v", data, err)
	}
	_, err = io.ReadAll(explore.LimitReader(strings.NewReader("123456"), "in", "thing", 5))
	var tooLarge *explore.TooLargeError
	if !errors.As(err, &tooLarge) || err.Error() != "in is larger than 5 B, the most a thing may be" {
		t.Errorf("6 bytes of at most 5: %v", err)
	}
}

// ReadFile refuses a directory, a regular file past the limit (without
// reading it), a device that never ends, and what does not start as a
// JSON object.
func TestReadFileLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"a": "`+strings.Repeat("x", 100)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	list := filepath.Join(dir, "list.json")
	if err := os.WriteFile(list, []byte(" [1]"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{dir, "is a directory, not a repro file"},
		{big, "is larger than 100 B, the most a repro file may be"},
		{list, "is not a repro file: not a JSON object"},
		{"/dev/zero", "is not a repro file: not a JSON object"},
	} {
		if _, err := explore.ReadFile(c.path, "repro file", 100); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadFile(%s): %v, want %q", c.path, err, c.want)
		}
	}
	if data, err := explore.ReadFile(big, "repro file", 200); err != nil || len(data) != 109 {
		t.Errorf("ReadFile within the limit: %d bytes, %v", len(data), err)
	}
}

// A selection of seeds has one at least, and its last seed is a seed.
func TestCheckSeeds(t *testing.T) {
	for _, c := range []struct {
		from  uint64
		count int
		ok    bool
	}{
		{1, 1, true}, {1, 0, false}, {1, -1, false}, {math.MaxUint64, 1, true}, {math.MaxUint64, 2, false},
		{math.MaxUint64 - 9, 10, true}, {math.MaxUint64 - 9, 11, false}, {0, explore.Forever, true},
		{math.MaxUint64, explore.Forever, false},
	} {
		if err := explore.CheckSeeds(c.from, c.count); (err == nil) != c.ok {
			t.Errorf("CheckSeeds(%d, %d): %v", c.from, c.count, err)
		}
	}
}

// A target whose seeds may draw a world past the limits is refused before
// its first seed: hosts pinned high and threads drawn, or a plan of class
// threads on them.
func TestCheckWorlds(t *testing.T) {
	v := mustLookup("original")
	cfg := sim.DefaultConfig()
	cfg.Hosts = 30
	drawn := explore.Target{Variant: v, Config: cfg, World: []envelope.WorldField{envelope.WorldThreads}}
	threads := explore.Target{Variant: v, Config: cfg, Classes: []faults.Class{faults.ClassThreads}}
	for name, tg := range map[string]explore.Target{"threads drawn": drawn, "class threads": threads} {
		if err := tg.CheckWorlds(); err == nil || !strings.Contains(err.Error(), "30 hosts with 3 threads") {
			t.Errorf("%s on 30 hosts: %v", name, err)
		}
	}
	all := explore.Target{Variant: v, Config: sim.DefaultConfig(), Classes: []faults.Class{faults.ClassAll}, World: envelope.EveryWorldField}
	all.Config.Duration = faults.MaxDuration
	if err := all.CheckWorlds(); err != nil {
		t.Errorf("every field drawn for the longest run: %v", err)
	}
}

// A repro past the limits is refused by DecodeRepro, whoever calls it: a
// run of 2^62 ns, a liveness bound that would overflow, null.
func TestDecodeReproLimits(t *testing.T) {
	r := explore.Repro{Format: explore.ReproFormat, Variant: "original", Config: sim.DefaultConfig()}
	ok, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := explore.DecodeRepro(ok, variants.Lookup); err != nil {
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
		if _, err := explore.DecodeRepro([]byte(c.data), variants.Lookup); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeRepro: %v, want %q", err, c.want)
		}
	}
}

// DecodeShards refuses what is not a sweep report, null and lists
// included.
func TestDecodeShardsRefusesWhatIsNotAReport(t *testing.T) {
	for _, in := range []string{"null", "[]", "3", `{"runs": 1} null`} {
		if _, err := explore.DecodeShards("in", strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
			t.Errorf("DecodeShards(%q): %v", in, err)
		}
	}
}
