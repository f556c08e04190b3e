package explore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// A sweep's journal (SweepOptions.Journal) is JSON lines: a header naming
// the sweep, then the failing outcomes as they are delivered and, every
// second or so, a checkpoint of the counts of every outcome delivered so
// far. A sweep killed at any instant (kill -9, power loss) leaves a valid
// prefix, a torn last line at worst; resumed, it restores the last
// checkpoint and the failures before it, and runs the seeds after it
// again: each seed is deterministic, so the result is the uninterrupted
// sweep's.

// journalFormat changes with the journal's layout.
const journalFormat = 1

// checkpointEvery is how often a sweep writes and syncs a checkpoint.
const checkpointEvery = time.Second

type journalHeader struct {
	Format  int    `json:"journal_format"`
	Version string `json:"locksim_version"`
	Sweep   string `json:"sweep"` // fingerprint of the target and the seed options
	Variant string `json:"variant"`
}

// journalLine is one line after the header: a failing outcome, a
// checkpoint, or the end.
type journalLine struct {
	Failure    *journalFailure  `json:"failure,omitempty"`
	Checkpoint *journalProgress `json:"checkpoint,omitempty"`
}

type journalFailure struct {
	Index int `json:"i"`
	outcomeRecord
}

// journalProgress is the sweep's result after outcomes 0..Next-1; Done:
// the sweep ended there.
type journalProgress struct {
	Next   int         `json:"next"`
	Done   bool        `json:"done,omitempty"`
	Result SweepResult `json:"result"`
}

// sweepFingerprint names a sweep: what it runs and which seeds, not how
// (parallelism, isolation, callbacks).
func sweepFingerprint(t Target, o SweepOptions) string {
	seeds := fmt.Sprintf("from %d count %d shard %d/%d keep-going %v stop-on %v keep %d",
		o.From, o.Count, o.ShardIndex, o.ShardCount, o.KeepGoing, o.StopOn, o.KeepFailures)
	return fingerprint("journal", t, o.Run, seeds)
}

// JournalPath is where a sweep of t with o keeps its journal in dir: a
// name of its own for every different sweep.
func JournalPath(dir string, t Target, o SweepOptions) string {
	return filepath.Join(dir, "sweep-"+t.Variant.Name+"-"+sweepFingerprint(t, o)[len("journal-"):]+".journal")
}

// journal is an open journal being appended to.
type journal struct {
	f    *os.File
	w    *bufio.Writer
	last time.Time
	err  error // the first write error: the sweep goes on, and reports it
}

// resumed is what a journal held of an earlier run of the same sweep.
type resumed struct {
	next     int
	done     bool
	result   SweepResult
	failures []journalFailure // delivered before next, in order
}

// openJournal starts path afresh, or, with resume, reads what it holds of
// the same sweep and appends to it.
func openJournal(path string, t Target, o SweepOptions, resume bool) (*journal, resumed, error) {
	key := sweepFingerprint(t, o)
	var from resumed
	if resume {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, from, fmt.Errorf("sweep: no journal of this sweep to resume at %s (a sweep with other flags keeps another)", path)
		}
		if err != nil {
			return nil, from, err
		}
		if from, err = readJournal(data, key); err != nil {
			return nil, from, fmt.Errorf("sweep: %s: %v", path, err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, from, err
		}
		// A torn last line is cut off first, so what is appended parses.
		if err := f.Truncate(int64(validPrefix(data))); err != nil {
			f.Close()
			return nil, from, err
		}
		return &journal{f: f, w: bufio.NewWriter(f), last: time.Now()}, from, nil
	}
	hdr, err := json.Marshal(journalHeader{Format: journalFormat, Version: Version, Sweep: key, Variant: t.Variant.Name})
	if err != nil {
		return nil, from, err
	}
	if err := WriteFileAtomic(path, append(hdr, '\n')); err != nil {
		return nil, from, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, from, err
	}
	return &journal{f: f, w: bufio.NewWriter(f), last: time.Now()}, from, nil
}

// validPrefix is the length of data up to its last complete line.
func validPrefix(data []byte) int {
	return bytes.LastIndexByte(data, '\n') + 1
}

func readJournal(data []byte, key string) (resumed, error) {
	var from resumed
	lines := bytes.Split(data[:validPrefix(data)], []byte("\n"))
	if len(lines) == 0 || len(lines[0]) == 0 {
		return from, errors.New("the journal is empty")
	}
	var h journalHeader
	if err := json.Unmarshal(lines[0], &h); err != nil || h.Format != journalFormat {
		return from, errors.New("not a sweep journal of this locksim")
	}
	if h.Version != Version {
		return from, fmt.Errorf("the journal was written by %s, this is %s: its seeds may run another way; start the sweep afresh", h.Version, Version)
	}
	if h.Sweep != key {
		return from, errors.New("the journal is of another sweep (other seeds, variant or flags)")
	}
	var pending []journalFailure
	for _, line := range lines[1:] {
		if len(line) == 0 {
			continue
		}
		var l journalLine
		if err := json.Unmarshal(line, &l); err != nil {
			return from, fmt.Errorf("a line of the journal does not parse: %v", err)
		}
		switch {
		case l.Failure != nil:
			pending = append(pending, *l.Failure)
		case l.Checkpoint != nil:
			from.next, from.done, from.result = l.Checkpoint.Next, l.Checkpoint.Done, l.Checkpoint.Result
			from.failures = append(from.failures, pending...)
			pending = nil
		}
	}
	return from, nil
}

func (j *journal) write(l journalLine) {
	if j.err != nil {
		return
	}
	b, err := json.Marshal(l)
	if err == nil {
		_, err = j.w.Write(append(b, '\n'))
	}
	j.err = err
}

// failure records a failing outcome as it is delivered.
func (j *journal) failure(i int, o Outcome) {
	j.write(journalLine{Failure: &journalFailure{Index: i, outcomeRecord: recordOf(o, true)}})
	j.sync() // a finding is never lost
}

// progress records the result after outcomes 0..next-1, at most every
// checkpointEvery unless forced.
func (j *journal) progress(next int, done bool, res SweepResult, force bool) {
	if !force && time.Since(j.last) < checkpointEvery {
		return
	}
	res.Failures = nil // they are in the journal already, one line each
	j.write(journalLine{Checkpoint: &journalProgress{Next: next, Done: done, Result: res}})
	j.sync()
	j.last = time.Now()
}

func (j *journal) sync() {
	if j.err == nil {
		j.err = j.w.Flush()
	}
	if j.err == nil {
		j.err = j.f.Sync()
	}
}

func (j *journal) close() error {
	j.sync()
	if err := j.f.Close(); j.err == nil {
		j.err = err
	}
	return j.err
}
