package sweep

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

	"github.com/locksim/locksim/sim/isolate"
	"github.com/locksim/locksim/sim/seedrun"
)

// A sweep's journal (SweepOptions.Journal) is JSON lines: a header naming
// the sweep, then the failing outcomes as they are delivered (each with
// its seed index) and, every second or so, a checkpoint of the counts of
// every outcome delivered so far. A sweep killed at any instant (kill -9,
// power loss) leaves a valid prefix, a torn last line at worst. Resumed,
// it restores the last checkpoint and the failures before it, cuts the
// file after that checkpoint (the failures written after it are of seeds
// it runs again), and runs the seeds after it again: each seed is
// deterministic, so the result is the uninterrupted sweep's, however many
// times it was killed and resumed.

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
	seedrun.OutcomeRecord
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
func sweepFingerprint(t seedrun.Target, o SweepOptions) string {
	seeds := fmt.Sprintf("from %d count %d shard %d/%d keep-going %v stop-on %v keep %d",
		o.From, o.Count, o.ShardIndex, o.ShardCount, o.KeepGoing, o.StopOn, o.KeepFailures)
	return isolate.Fingerprint("journal", t, o.Run, seeds)
}

// JournalPath is where a sweep of t with o keeps its journal in dir: a
// name of its own for every different sweep.
func JournalPath(dir string, t seedrun.Target, o SweepOptions) string {
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
	// cut is the length of the journal up to its last checkpoint: what a
	// resumed sweep keeps of the file.
	cut int
}

// openJournal starts path afresh, or, with resume, reads what it holds of
// the same sweep and appends to it.
func openJournal(path string, t seedrun.Target, o SweepOptions, resume bool) (*journal, resumed, error) {
	key := sweepFingerprint(t, o)
	var from resumed
	if resume {
		data, err := readJournalFile(path)
		if err != nil {
			return nil, from, err
		}
		if from, err = readJournal(data, key, o.Len()); err != nil {
			return nil, from, fmt.Errorf("sweep: %s: %v", path, err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return nil, from, err
		}
		// What follows the last checkpoint is cut off: a torn line, and
		// failures of seeds the sweep runs again (kept, a second resume
		// would count them twice).
		if err := f.Truncate(int64(from.cut)); err != nil {
			f.Close()
			return nil, from, err
		}
		return &journal{f: f, w: bufio.NewWriter(f), last: time.Now()}, from, nil
	}
	hdr, err := json.Marshal(journalHeader{Format: journalFormat, Version: seedrun.Version, Sweep: key, Variant: t.Variant.Name})
	if err != nil {
		return nil, from, err
	}
	if err := seedrun.WriteFileAtomic(path, append(hdr, '\n')); err != nil {
		return nil, from, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, from, err
	}
	return &journal{f: f, w: bufio.NewWriter(f), last: time.Now()}, from, nil
}

// maxJournalSize bounds the journal a resume reads: a line per failing
// seed of a sweep that keeps going is about a kilobyte, so a journal of
// a sweep of a hundred million seeds where every one fails.
const maxJournalSize = 1 << 37

// readJournalFile reads the journal at path, or says why it cannot.
func readJournalFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("sweep: no journal of this sweep to resume at %s (a sweep with other flags keeps another)", path)
	case err != nil:
		return nil, err
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("sweep: %s is not a journal file", path)
	case st.Size() > maxJournalSize:
		return nil, fmt.Errorf("sweep: %s is %d bytes, more than a journal of this sweep can hold", path, st.Size())
	}
	return os.ReadFile(path)
}

// validPrefix is the length of data up to its last complete line.
func validPrefix(data []byte) int {
	return bytes.LastIndexByte(data, '\n') + 1
}

// readJournal reads a journal of the sweep key, of n seeds: what its last
// checkpoint says and the failures before it. A checkpoint that cannot be
// the sweep's (past its end, going back, counts that disagree with the
// failures before it) is an error, not a result.
func readJournal(data []byte, key string, n int) (resumed, error) {
	var from resumed
	data = data[:validPrefix(data)]
	header, rest, _ := bytes.Cut(data, []byte("\n"))
	if len(header) == 0 {
		return from, errors.New("the journal is empty")
	}
	if err := checkJournalHeader(header, key); err != nil {
		return from, err
	}
	from.cut = len(header) + 1
	var pending []journalFailure
	for at := from.cut; len(rest) > 0; {
		line, tail, _ := bytes.Cut(rest, []byte("\n"))
		at, rest = at+len(line)+1, tail
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
			if err := from.take(*l.Checkpoint, pending, n); err != nil {
				return from, err
			}
			from.cut, pending = at, nil
		}
	}
	return from, nil
}

// checkJournalHeader says why header is not that of the sweep key.
func checkJournalHeader(header []byte, key string) error {
	var h journalHeader
	if err := json.Unmarshal(header, &h); err != nil || h.Format != journalFormat {
		return errors.New("not a sweep journal of this locksim")
	}
	if h.Version != seedrun.Version {
		return fmt.Errorf("the journal was written by %s, this is %s: its seeds may run another way; start the sweep afresh", h.Version, seedrun.Version)
	}
	if h.Sweep != key {
		return errors.New("the journal is of another sweep (other seeds, variant or flags)")
	}
	return nil
}

// take moves from on to checkpoint c, with the failures written since the
// one before. A failure of a seed at or past c.Next, or before the last
// failure taken, is one a killed run wrote and a resumed one wrote again
// (a journal of a locksim before the cut): it is left out.
func (from *resumed) take(c journalProgress, failures []journalFailure, n int) error {
	switch {
	case c.Next < from.next || c.Next > n:
		return fmt.Errorf("a checkpoint says %d seeds were done, but the sweep has %d and an earlier checkpoint said %d: the journal is damaged; start the sweep afresh", c.Next, n, from.next)
	case c.Result.Runs != c.Next || c.Result.Failed > c.Result.Runs || c.Result.LivenessFailed > c.Result.Failed || c.Result.Failed < 0 || c.Result.LivenessFailed < 0:
		return fmt.Errorf("a checkpoint's counts (%d runs, %d failed) cannot be those of %d seeds: the journal is damaged; start the sweep afresh", c.Result.Runs, c.Result.Failed, c.Next)
	}
	last := -1
	if k := len(from.failures); k > 0 {
		last = from.failures[k-1].Index
	}
	for _, f := range failures {
		if f.Index > last && f.Index < c.Next {
			from.failures, last = append(from.failures, f), f.Index
		}
	}
	if len(from.failures) != c.Result.Failed {
		return fmt.Errorf("a checkpoint counts %d failing seeds, but the journal holds %d before it: the journal is damaged; start the sweep afresh", c.Result.Failed, len(from.failures))
	}
	from.next, from.done, from.result = c.Next, c.Done, c.Result
	return nil
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
func (j *journal) failure(i int, o seedrun.Outcome) {
	j.write(journalLine{Failure: &journalFailure{Index: i, OutcomeRecord: seedrun.RecordOf(o, true)}})
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
