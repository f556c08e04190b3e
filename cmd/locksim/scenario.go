package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"locksim/algorithm"
	"locksim/faults"
	"locksim/sim"
	"locksim/sim/explore"
	"locksim/variants"
)

// scenarioFlags choose what to explore: the variant, the fault classes a
// seed may draw, whether it draws inside the variant's envelope or beyond
// it, and the world (a -config file, then the scenario flags). run, sweep
// and replay share them.
type scenarioFlags struct {
	variant    string
	classes    string
	beyond     string
	strict     bool
	configFile string
	config     sim.Config // written by the scenario flags
}

func (s *scenarioFlags) register(f *cmdFlags) {
	s.config = sim.DefaultConfig()
	f.StringVar(&s.variant, "variant", "original", "lock algorithm to run (see locksim variants)")
	f.StringVar(&s.classes, "faults", "all", "fault classes a seed may draw, comma-separated, from: "+classList()+" (none: a fault-free world)")
	f.StringVar(&s.beyond, "beyond", "", "assumptions of the variant's envelope a seed breaks on purpose, comma-separated, or all (default: draw only worlds inside the envelope; see locksim variants -v)")
	f.BoolVar(&s.strict, "strict", false, "fail on every violation, also those outside the envelope and of properties the variant does not promise")
	f.StringVar(&s.configFile, "config", "", "JSON scenario file (sim.Config, durations in ns); flags given explicitly override it")
	explore.RegisterConfigFlags(f.FlagSet, &s.config)
}

// runOptions are the run options the flags ask for: the default checks,
// and -strict.
func (s *scenarioFlags) runOptions() explore.Options {
	o := explore.DefaultOptions()
	o.Strict = s.strict
	return o
}

// target builds and validates the target the flags describe.
func (s *scenarioFlags) target(f *cmdFlags) (explore.Target, error) {
	classes, err := faults.ParseClasses(s.classes)
	if err != nil {
		return explore.Target{}, err
	}
	cfg, err := s.effectiveConfig(f)
	if err != nil {
		return explore.Target{}, err
	}
	v, err := variants.Lookup(s.variant)
	if err != nil {
		return explore.Target{}, err
	}
	t := explore.Target{Variant: v, Config: cfg, Classes: classes}
	if t.Beyond, err = parseBeyond(s.beyond, t); err != nil {
		return explore.Target{}, err
	}
	if err := t.Validate(); err != nil {
		return explore.Target{}, err
	}
	return t, nil
}

// parseBeyond reads -beyond: assumption names, or all of those t's variant
// makes that its classes can break.
func parseBeyond(s string, t explore.Target) ([]algorithm.Assumption, error) {
	switch strings.TrimSpace(s) {
	case "":
		return nil, nil
	case "all":
		all := t.BeyondAll()
		if len(all) == 0 {
			return nil, fmt.Errorf("-beyond all: %s assumes nothing that faults %s can break (it %s)",
				t.Variant.Name, classesText(t.Classes), t.Variant.Envelope)
		}
		return all, nil
	}
	var out []algorithm.Assumption
	for _, name := range strings.Split(s, ",") {
		n, err := algorithm.ParseAssumption(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("-beyond: %v", err)
		}
		out = append(out, n)
	}
	return out, nil
}

// effectiveConfig is the -config file (if any) with the scenario flags that
// were given explicitly applied on top.
func (s *scenarioFlags) effectiveConfig(f *cmdFlags) (sim.Config, error) {
	if s.configFile == "" {
		return s.config, nil
	}
	cfg, err := readConfig(s.configFile)
	if err != nil {
		return sim.Config{}, err
	}
	// Replay the explicit flags onto the file's config through a second
	// flag set, so no field mapping is repeated here.
	over := flag.NewFlagSet("", flag.ContinueOnError)
	explore.RegisterConfigFlags(over, &cfg)
	var setErr error
	f.Visit(func(fl *flag.Flag) {
		if over.Lookup(fl.Name) != nil && setErr == nil {
			setErr = over.Set(fl.Name, fl.Value.String())
		}
	})
	return cfg, setErr
}

// readConfig reads a JSON sim.Config strictly: fields it leaves out keep
// their defaults; unknown fields and trailing data are errors.
func readConfig(path string) (sim.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return sim.Config{}, fmt.Errorf("cannot read config file: %v", err)
	}
	cfg := sim.DefaultConfig()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return sim.Config{}, fmt.Errorf("config file %s is not a valid scenario: %v", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return sim.Config{}, fmt.Errorf("config file %s has trailing data after the JSON object", path)
	}
	return cfg, nil
}

// expressibleByFlags reports whether the scenario flags alone (what
// explore.ReplayCommand prints) rebuild cfg; a -config file may set fields
// that have no flag.
func expressibleByFlags(cfg sim.Config) bool {
	rebuilt := sim.DefaultConfig()
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	explore.RegisterConfigFlags(fs, &rebuilt)
	return fs.Parse(explore.ConfigArgs(cfg)) == nil && rebuilt == cfg
}

func classList() string {
	names := make([]string, len(faults.Classes))
	for i, c := range faults.Classes {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}

// classesText is the classes as -faults reads them, "none" for none.
func classesText(cs []faults.Class) string {
	a := faults.Allow(cs...)
	switch {
	case len(cs) == 0:
		return "none"
	case a.Has(faults.ClassAll):
		return "all"
	}
	return a.String()
}

// describeTarget is the header every command prints first, like the seed.
func describeTarget(w io.Writer, t explore.Target) {
	fmt.Fprintf(w, "variant: %s   faults: %s\n", t.Variant.Name, classesText(t.Classes))
	fmt.Fprintf(w, "config:  %s\n", describeConfig(t.Config))
	if t.Variant.New != nil { // a variant, not just a name read back from JSON
		fmt.Fprintf(w, "envelope: %s\n", t.Variant.Envelope)
	}
	fmt.Fprintf(w, "draws:   %s\n", describeDraws(t.Beyond))
}

// describeDraws says where seeds draw their worlds.
func describeDraws(beyond []algorithm.Assumption) string {
	if len(beyond) == 0 {
		return "inside the envelope, up to its edges (-beyond breaks assumptions on purpose)"
	}
	names := make([]string, len(beyond))
	for i, n := range beyond {
		names[i] = string(n)
	}
	return "beyond the envelope: each seed breaks one or more of " + strings.Join(names, ", ")
}

// describeConfig is the effective config on one line, flag names first.
func describeConfig(c sim.Config) string {
	parts := []string{
		fmt.Sprintf("nodes %d", c.Nodes),
		fmt.Sprintf("replication %d", c.Replication),
		fmt.Sprintf("hosts %d", c.Hosts),
		fmt.Sprintf("threads %d", c.ThreadsPerHost),
		"ttl " + short(c.TTL),
		"duration " + short(c.Duration),
		fmt.Sprintf("latency %s..%s +%s tail", short(c.LatencyMin), short(c.LatencyMax), short(c.LatencyTail)),
		"rpc-timeout " + short(c.RPCTimeout),
		fmt.Sprintf("hold %s..%s", short(c.HoldMin), short(c.HoldMax)),
		fmt.Sprintf("think %s..%s", short(c.ThinkMin), short(c.ThinkMax)),
	}
	d := sim.DefaultConfig()
	if c.MaxEvents != d.MaxEvents {
		parts = append(parts, fmt.Sprintf("max_events %d", c.MaxEvents))
	}
	if c.MaxStepsNoYield != d.MaxStepsNoYield {
		parts = append(parts, fmt.Sprintf("max_steps_no_yield %d", c.MaxStepsNoYield))
	}
	if c.RestartingVersions {
		parts = append(parts, "restarting_versions")
	}
	return strings.Join(parts, ", ")
}

// short prints a duration without trailing zero units ("1m", not "1m0s").
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
