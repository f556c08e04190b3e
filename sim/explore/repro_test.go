package explore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/variants"
)

// WriteFileAtomic replaces a file whole and leaves no temporary behind.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := WriteFileAtomic(path, []byte(data)); err != nil {
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
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "r.json"), nil); err == nil {
		t.Error("writing into a directory that does not exist succeeded")
	}
}

// Repros of two scenarios that share a variant and seed do not overwrite
// each other; the same scenario written twice is one file.
func TestReproNamesDoNotCollide(t *testing.T) {
	dir := t.TempDir()
	write := func(class faults.Class) string {
		tg := Target{Variant: variant("original"), Config: sim.DefaultConfig(), Classes: []faults.Class{class}}
		tg.Config.Duration = 10 * time.Second
		o, err := RunSeed(tg, 3, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		path, err := WriteRepro(dir, NewRepro(tg, o))
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b, again := write(faults.ClassThreads), write(faults.ClassPause), write(faults.ClassThreads)
	if a == b {
		t.Fatalf("two scenarios wrote one file, %s", a)
	}
	if again != a {
		t.Errorf("the same scenario wrote %s, then %s", a, again)
	}
	for _, p := range []string{a, b} {
		if _, err := ReadRepro(p, variants.Lookup); err != nil {
			t.Error(err)
		}
	}
}
