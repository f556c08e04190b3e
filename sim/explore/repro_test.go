package explore

import (
	"os"
	"path/filepath"
	"testing"
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
