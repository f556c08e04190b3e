package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim/explore"
)

func mergeCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("merge", "locksim merge [-partial] [-json] FILE... (- reads standard input)",
		"Reads the -json outputs of locksim sweep -shard K/N, one per shard (a file may hold\n"+
			"several; - reads standard input), checks that they are the shards of one sweep (the same\n"+
			"variant, fault classes, config and seed range, the same N, every K once) and prints them\n"+
			"as one sweep: the header, every failure in seed order with its replay command, and the\n"+
			"runs, failures and events summed. Each seed's result does not depend on the machine that\n"+
			"ran it, so when every shard ran with -keep-going the merged result is the unsharded\n"+
			"sweep's, and -json prints exactly what sweep -keep-going -json prints without -shard\n"+
			"(repro paths are each shard's -out, on the machine that ran it). Without -keep-going\n"+
			"each shard stops at its own first violation: the lowest failing seed is then the whole\n"+
			"sweep's first failure, but the others are only the first of their shards, and the seeds\n"+
			"after them were not run; merge says so. A missing shard is an error unless -partial.\n"+
			"Exit 0: no failure; 1: failures; 2: bad usage or input, such as shards of different\n"+
			"sweeps or a missing shard. How to run shards on CI or Kubernetes: docs/SCALING.md.",
		"locksim merge shard-0.json shard-1.json shard-2.json shard-3.json",
		"cat shards/*.json | locksim merge -json - > merged.json",
		"locksim merge -partial shard-*.json   # while some machines are still running")
	partial := f.Bool("partial", false, "merge even if shards are missing, saying which and how many seeds they hold")
	asJSON := f.Bool("json", false, "print the merged result as JSON, in the shape of an unsharded sweep -json")
	pos, code, done := f.parse(args, stdout, stderr)
	if done {
		return code
	}
	if len(pos) == 0 {
		return f.fail(stderr, fmt.Errorf("give the -json outputs of sweep -shard K/N to merge, as files or - for standard input"))
	}
	if err := checkMergeInputs(pos); err != nil {
		return f.fail(stderr, err)
	}
	shards, err := readShards(pos, os.Stdin)
	if err != nil {
		return f.fail(stderr, err)
	}
	m, err := explore.MergeShards(shards, *partial)
	if err != nil {
		return f.fail(stderr, err)
	}

	head := stdout
	if *asJSON {
		head = stderr
	}
	r := m.Result
	describeTarget(head, explore.Target{Variant: algorithm.Variant{Name: r.Target.Variant}, Classes: r.Target.Classes,
		Beyond: r.Target.Beyond, Config: r.Target.Config, World: r.Target.World})
	fmt.Fprintf(head, "seeds:   %s, %s\n", explore.SweepOptions{From: r.Seeds.From, Count: r.Seeds.Count}.DescribeSeeds(), m.DescribeShards())
	if *asJSON {
		if err := writeJSON(stdout, r); err != nil {
			return f.fail(stderr, err)
		}
	} else {
		for _, x := range r.Failures {
			printFailure(stdout, x, r.Target.Variant)
		}
		fmt.Fprintf(stdout, "merge: %d of %d seeds run%s, %d failing, %d events\n",
			r.Runs, m.Total, m.NotRun(), len(r.Failures), r.Events)
		fmt.Fprintf(stdout, "       %d inside the envelope, %s, %d broke only what the variant does not promise\n",
			r.Inside, describeExpected(r.Expected, r.ExpectedBy), r.Unpromised)
	}
	if len(m.Stopped) > 0 {
		fmt.Fprintf(head, "note: without -keep-going each shard stops at its own first failure: seed %d, the lowest failing seed, "+
			"is the sweep's first failure, but the others are only the first of their shards.\n", r.Failures[0].Seed)
	}
	if len(r.Failures) > 0 {
		return exitViolation
	}
	return exitOK
}

// readShards reads every sweep -json output named; "-" is stdin. Each is
// decoded as it is read, up to explore.MaxShardBytes.
func readShards(paths []string, stdin io.Reader) ([]explore.Shard, error) {
	var out []explore.Shard
	for _, p := range paths {
		ss, err := readShard(p, stdin)
		if err != nil {
			return nil, err
		}
		out = append(out, ss...)
	}
	return out, nil
}

// readShard reads one sweep -json output: file p, or stdin for "-".
func readShard(p string, stdin io.Reader) ([]explore.Shard, error) {
	if p == "-" {
		return explore.DecodeShards("stdin", stdin)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("cannot read sweep -json output %s: %v", p, errors.Unwrap(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a sweep -json output", p)
	}
	return explore.DecodeShards(p, f)
}
