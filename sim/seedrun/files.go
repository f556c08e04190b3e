package seedrun

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/locksim/locksim/faults"
)

// Reading and writing the files locksim's commands take and leave (repro
// files, configs, plans, sweep journals and -json output): reads that
// stop at a limit, writes that a crash never leaves half done.

// ReadFile reads the JSON file at path, what it is called in errors
// ("repro file"), refusing a directory, more than max bytes, and a file
// that does not start as a JSON object: it never reads more than max+1
// bytes, and /dev/zero is an error at once.
func ReadFile(path, what string, max int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	switch fi, err := f.Stat(); {
	case err != nil:
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a %s", path, what)
	case fi.Mode().IsRegular() && fi.Size() > int64(max):
		return nil, &TooLargeError{path, what, int64(max)}
	}
	r := bufio.NewReader(LimitReader(f, path, what, max))
	head, _ := r.Peek(512)
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && t[0] != '{' {
		return nil, fmt.Errorf("%s is not a %s: %v", path, what, faults.CheckJSONObject(t, len(t)))
	}
	return io.ReadAll(r)
}

// LimitReader reads r, named name, and fails once it has given max bytes
// (unlike io.LimitReader, which would stop silently and let a decoder
// report truncated JSON).
func LimitReader(r io.Reader, name, what string, max int) io.Reader {
	return &limitReader{r: r, name: name, what: what, max: int64(max), left: int64(max)}
}

type limitReader struct {
	r          io.Reader
	name, what string
	max, left  int64
}

// TooLargeError is what a LimitReader reports past its limit.
type TooLargeError struct {
	Name, What string
	Max        int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most a %s may be", e.Name, faults.Bytes(e.Max), e.What)
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.tooLarge()
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1] // one byte past the limit tells it was passed
	}
	n, err := l.r.Read(p)
	if l.left -= int64(n); l.left < 0 {
		return n, l.tooLarge()
	}
	return n, err
}

func (l *limitReader) tooLarge() error { return &TooLargeError{l.name, l.what, l.max} }

// WriteFileAtomic writes data to path through a temporary file in the same
// directory, synced and then renamed over path: a crash or an interrupt
// leaves the old file or the new one, never half of either.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, 0o644)
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}
