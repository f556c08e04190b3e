package seedrun_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/seedrun"
)

// LimitReader gives max bytes and then fails, saying what was too large;
// it never stops silently, as io.LimitReader does.
func TestLimitReader(t *testing.T) {
	data, err := io.ReadAll(seedrun.LimitReader(strings.NewReader("12345"), "in", "thing", 5))
	if err != nil || string(data) != "12345" {
		t.Errorf("5 bytes of at most 5: %q, %v", data, err)
	}
	_, err = io.ReadAll(seedrun.LimitReader(strings.NewReader("123456"), "in", "thing", 5))
	var tooLarge *seedrun.TooLargeError
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
		if _, err := seedrun.ReadFile(c.path, "repro file", 100); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadFile(%s): %v, want %q", c.path, err, c.want)
		}
	}
	if data, err := seedrun.ReadFile(big, "repro file", 200); err != nil || len(data) != 109 {
		t.Errorf("ReadFile within the limit: %d bytes, %v", len(data), err)
	}
}

// A target whose seeds may draw a world past the limits is refused before
// its first seed: hosts pinned high and threads drawn, or a plan of class
// threads on them.
func TestCheckWorlds(t *testing.T) {
	v := variant("original")
	cfg := sim.DefaultConfig()
	cfg.Hosts = 30
	drawn := seedrun.Target{Variant: v, Config: cfg, World: []envelope.WorldField{envelope.WorldThreads}}
	threads := seedrun.Target{Variant: v, Config: cfg, Classes: []faults.Class{faults.ClassThreads}}
	for name, tg := range map[string]seedrun.Target{"threads drawn": drawn, "class threads": threads} {
		if err := tg.CheckWorlds(); err == nil || !strings.Contains(err.Error(), "30 hosts with 3 threads") {
			t.Errorf("%s on 30 hosts: %v", name, err)
		}
	}
	all := seedrun.Target{Variant: v, Config: sim.DefaultConfig(), Classes: []faults.Class{faults.ClassAll}, World: envelope.EveryWorldField}
	all.Config.Duration = faults.MaxDuration
	if err := all.CheckWorlds(); err != nil {
		t.Errorf("every field drawn for the longest run: %v", err)
	}
}

// WriteFileAtomic replaces a file whole and leaves no temporary behind.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := seedrun.WriteFileAtomic(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want only r.json", len(entries))
	}
	if err := seedrun.WriteFileAtomic(filepath.Join(dir, "missing", "r.json"), nil); err == nil {
		t.Error("writing into a directory that does not exist succeeded")
	}
}
