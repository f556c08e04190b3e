package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/cause"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
	"github.com/locksim/locksim/variants"
)

// scenarioFlags choose what to explore: the variant, the fault classes a
// seed may draw, whether it draws inside the variant's envelope or beyond
// it, and the world (a -config file, then the scenario flags). run, sweep
// and replay share them.
type scenarioFlags struct {
	variant  string
	classes  string
	beyond   string
	strict   bool
	world    string
	bound    string
	cfg      configFlags
	plan     string // -plan FILE: a hand-written fault plan
	pct      int    // -pct DEPTH: the PCT scheduler (0: the seed's latency draws)
	pctSteps int
	only     string // -only FIX: every fix of the variant's family but this one
	changes  string // -changes: world changes every seed gets
}

func (s *scenarioFlags) register(f *cmdFlags) {
	f.StringVar(&s.variant, "variant", "original", "lock algorithm to run (see locksim variants)")
	f.StringVar(&s.classes, "faults", "all", "fault classes a seed may draw, comma-separated, from: "+classList()+" (none: a fault-free world)")
	f.StringVar(&s.beyond, "beyond", "", "assumptions of the variant's envelope a seed breaks on purpose, comma-separated, or all (default: draw only worlds inside the envelope; see locksim variants -v)")
	f.BoolVar(&s.strict, "strict", false, "fail on every violation, also those outside the envelope and of properties the variant does not promise")
	f.StringVar(&s.world, "world", "", "fields of the world each seed draws, comma-separated, from: "+worldFieldList()+"; or all, or none (default: those the fault classes' bugs live in, all of them with -faults all, less any a scenario flag or the -config file pins)")
	f.StringVar(&s.bound, "liveness-bound", defaultLivenessBound, "how long waiters may go ungranted while a majority of the key's nodes is up and reachable from them, and a lock item may stay behind unused: Nttl (N TTLs, plus the clients' longest think time) or a duration such as 90s")
	f.StringVar(&s.plan, "plan", "", "JSON fault plan file (faults.Plan) that every seed runs instead of one it draws; the world is then fixed unless -world says otherwise")
	f.IntVar(&s.pct, "pct", 0, "schedule message deliveries with PCT of this depth (1..16: random client priorities, depth-1 change points) instead of the seed's latency draws (0: off)")
	f.IntVar(&s.pctSteps, "pct-steps", explore.DefaultPCTSteps, "with -pct: the latency choices among which the priority change points fall")
	f.StringVar(&s.only, "only", "", "show one bug alone: apply every fix the variant's family knows but this one (locksim variants -v lists them; replay -why names them)")
	f.StringVar(&s.changes, "changes", "", "world changes every seed gets after it is drawn, comma-separated, from: "+changeList())
	s.cfg.register(f, sim.DefaultConfig())
}

// runOptions are the run options the flags ask for: the default checks
// with -liveness-bound, and -strict.
func (s *scenarioFlags) runOptions() (explore.Options, error) {
	o := explore.DefaultOptions()
	o.Strict = s.strict
	ttls, ns, err := parseLivenessBound(s.bound)
	if err != nil {
		return o, err
	}
	o.Check.LivenessBoundTTLs, o.Check.LivenessBoundNS = ttls, ns
	return o, nil
}

// defaultLivenessBound is -liveness-bound's default: model.DefaultLivenessBoundTTLs.
var defaultLivenessBound = fmt.Sprintf("%dttl", model.DefaultLivenessBoundTTLs)

// parseLivenessBound reads -liveness-bound: "Nttl" (N >= 1) or a positive
// duration.
func parseLivenessBound(s string) (ttls, ns int64, err error) {
	bad := fmt.Errorf("-liveness-bound %q is not a number of TTLs (3ttl) or a positive duration (90s)", s)
	if n, ok := strings.CutSuffix(strings.TrimSpace(s), "ttl"); ok {
		v, err := strconv.ParseInt(n, 10, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange) || v < 1:
			return 0, 0, bad
		case err != nil || v > explore.MaxLivenessBoundTTLs:
			return 0, 0, fmt.Errorf("-liveness-bound %s is more than %d TTLs", s, explore.MaxLivenessBoundTTLs)
		}
		return v, 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, 0, bad
	}
	if d > faults.MaxSpan {
		return 0, 0, fmt.Errorf("-liveness-bound %s is longer than %v, the longest span locksim takes", s, faults.MaxSpan)
	}
	return 0, int64(d), nil
}

// checked is the target and run options the flags describe, every flag
// given checked first.
func (s *scenarioFlags) checked(f *cmdFlags) (explore.Target, explore.Options, error) {
	if err := checkGivenValues(f); err != nil {
		return explore.Target{}, explore.Options{}, err
	}
	opt, err := s.runOptions()
	if err != nil {
		return explore.Target{}, opt, err
	}
	t, err := s.target(f)
	return t, opt, err
}

// target builds and validates the target the flags describe.
func (s *scenarioFlags) target(f *cmdFlags) (explore.Target, error) {
	classes, err := faults.ParseClasses(s.classes)
	if err != nil {
		return explore.Target{}, err
	}
	cfg, fromFile, err := s.cfg.effective(f)
	if err != nil {
		return explore.Target{}, err
	}
	world, err := s.worldFields(f, classes, fromFile)
	if err != nil {
		return explore.Target{}, err
	}
	v, err := variants.Lookup(s.variant)
	if err != nil {
		return explore.Target{}, err
	}
	t := explore.Target{Variant: v, Config: cfg, Classes: classes, World: world}
	if t.Changes, err = parseChanges(s.changes); err != nil {
		return explore.Target{}, err
	}
	if s.only != "" {
		if t, err = cause.Only(t, s.only); err != nil {
			return explore.Target{}, fmt.Errorf("-only: %v", err)
		}
	}
	if s.plan != "" {
		if t, err = s.withPlan(f, t); err != nil {
			return explore.Target{}, err
		}
	}
	if t.Beyond, err = parseBeyond(s.beyond, t); err != nil {
		return explore.Target{}, err
	}
	switch {
	case s.pct < 0:
		return explore.Target{}, fmt.Errorf("-pct %d is not a depth: give 1..16, or 0 for the seed's own latency draws", s.pct)
	case s.pct > 0:
		t.PCT = &explore.PCT{Depth: s.pct, Steps: s.pctSteps}
	case f.set("pct-steps"):
		return explore.Target{}, fmt.Errorf("-pct-steps needs -pct DEPTH")
	}
	if err := t.Validate(); err != nil {
		return explore.Target{}, err
	}
	return t, t.CheckWorlds()
}

// withPlan is t running the -plan file's plan: no classes to draw from,
// and the world fixed unless -world asks for one.
func (s *scenarioFlags) withPlan(f *cmdFlags, t explore.Target) (explore.Target, error) {
	if f.set("faults") || f.set("beyond") {
		return t, fmt.Errorf("give -plan or -faults and -beyond, not both: a plan given is run as it is")
	}
	data, err := readInput(s.plan, "plan file", faults.MaxPlanBytes)
	if err != nil {
		return t, fmt.Errorf("-plan: %v", err)
	}
	plan, err := faults.Decode(data)
	if err != nil {
		return t, fmt.Errorf("-plan %s: %v", s.plan, err)
	}
	t.Plan, t.Classes = &plan, nil
	if !f.set("world") {
		t.World = nil
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

// worldFields is what each seed draws of its world: -world if given (none
// of it pinned by a flag), else the classes' default less the fields a
// scenario flag or the -config file (fields named) pins.
func (s *scenarioFlags) worldFields(f *cmdFlags, classes []faults.Class, fromFile []envelope.WorldField) ([]envelope.WorldField, error) {
	if f.set("world") {
		return parseWorldFlag(f, s.world)
	}
	var out []envelope.WorldField
	for _, w := range envelope.DefaultWorld(classes) {
		if pinningFlag(f, w) == "" && !slices.Contains(fromFile, w) {
			out = append(out, w)
		}
	}
	return out, nil
}

// parseWorldFlag reads -world: fields none of which a scenario flag pins.
func parseWorldFlag(f *cmdFlags, s string) ([]envelope.WorldField, error) {
	world, err := envelope.ParseWorld(s)
	if err != nil {
		return nil, fmt.Errorf("-world: %v", err)
	}
	for _, w := range world {
		if name := pinningFlag(f, w); name != "" {
			return nil, fmt.Errorf("-world draws %s, but -%s pins it: give one or the other", w, name)
		}
	}
	return world, nil
}

// pinningFlag is the scenario flag given that pins world field w, or "".
func pinningFlag(f *cmdFlags, w envelope.WorldField) string {
	for _, name := range w.FlagsOf() {
		if f.set(name) {
			return name
		}
	}
	return ""
}

func worldFieldList() string {
	names := make([]string, len(envelope.EveryWorldField))
	for i, w := range envelope.EveryWorldField {
		names[i] = string(w)
	}
	return strings.Join(names, ",")
}

// configFlags are the world's flags every command that builds one shares:
// a -config file, then the scenario flags (explore.RegisterConfigFlags)
// given explicitly over it.
type configFlags struct {
	file   string
	base   sim.Config // the command's default world: what the file leaves out
	config sim.Config // written by the scenario flags
}

func (c *configFlags) register(f *cmdFlags, base sim.Config) {
	c.base, c.config = base, base
	f.StringVar(&c.file, "config", "", "JSON scenario file (sim.Config, durations in ns); it pins the fields it names, and flags given explicitly override it")
	explore.RegisterConfigFlags(f.FlagSet, &c.config)
}

// effective is the -config file (if any) with the scenario flags that were
// given explicitly applied on top, and the world fields the file names.
func (c *configFlags) effective(f *cmdFlags) (sim.Config, []envelope.WorldField, error) {
	if c.file == "" {
		return c.config, nil, checkSlowLink(c.config)
	}
	cfg, named, err := readConfig(c.file, c.base)
	if err != nil {
		return sim.Config{}, nil, err
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
	if setErr == nil {
		setErr = checkSlowLink(cfg)
	}
	return cfg, envelope.WorldFieldsOfJSON(named), setErr
}

// readConfig reads a JSON sim.Config strictly: fields it leaves out keep
// base's values; unknown fields and trailing data are errors. It also
// returns the names of the fields the file gives.
func readConfig(path string, base sim.Config) (sim.Config, []string, error) {
	data, err := readInput(path, "config file", explore.MaxConfigBytes)
	if err != nil {
		return sim.Config{}, nil, err
	}
	if err := faults.CheckJSONObject(data, explore.MaxConfigBytes); err != nil {
		return sim.Config{}, nil, fmt.Errorf("config file %s is not a valid scenario: %v", path, err)
	}
	cfg := base
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return sim.Config{}, nil, fmt.Errorf("config file %s is not a valid scenario: %v", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return sim.Config{}, nil, fmt.Errorf("config file %s has trailing data after the JSON object", path)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return sim.Config{}, nil, fmt.Errorf("config file %s is not a valid scenario: %v", path, err)
	}
	named := make([]string, 0, len(fields))
	for k := range fields {
		named = append(named, k)
	}
	slices.Sort(named)
	return cfg, named, nil
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
func describeTarget(w io.Writer, t explore.Target) { describeTargetIn(w, t, "") }

// describeTargetIn is describeTarget with its world line said as world,
// when not "" (a repro file's world: drawn by its seed, kept by the file).
func describeTargetIn(w io.Writer, t explore.Target, world string) {
	faultsText := classesText(t.Classes)
	if t.Plan != nil {
		faultsText = fmt.Sprintf("the given plan (size %d, every seed runs it)", t.Plan.Size())
	}
	fmt.Fprintf(w, "variant: %s   faults: %s\n", t.Variant.Name, faultsText)
	fmt.Fprintf(w, "config:  %s\n", describeConfig(t.Config, t.World))
	if world == "" {
		world = describeWorldDraw(t.World)
	}
	fmt.Fprintf(w, "world:   %s\n", world)
	if t.Variant.New != nil { // a variant, not just a name read back from JSON
		fmt.Fprintf(w, "envelope: %s\n", t.Variant.Envelope)
	}
	if p := t.PCT; p != nil {
		fmt.Fprintf(w, "schedule: PCT, depth %d over %d latency choices (deliveries by client priority)\n", p.Depth, p.Steps)
	}
	if t.Plan == nil {
		fmt.Fprintf(w, "draws:   %s\n", explore.DescribeDraws(t.Beyond))
	}
}

// describeWorldDraw says which fields of the world each seed draws.
func describeWorldDraw(world []envelope.WorldField) string {
	if len(world) == 0 {
		return "fixed, as the config says (-world lists fields for each seed to draw)"
	}
	names := make([]string, len(world))
	for i, f := range world {
		names[i] = string(f)
	}
	return "each seed draws its " + strings.Join(names, ", ") + " (a scenario flag such as -nodes 5 pins a field; -world none draws none)"
}

// describeConfig is the effective config on one line, flag names first,
// leaving out the fields each seed draws.
func describeConfig(c sim.Config, drawn []envelope.WorldField) string {
	var parts []string
	add := func(f envelope.WorldField, s string) {
		if f == "" || !slices.Contains(drawn, f) {
			parts = append(parts, s)
		}
	}
	add(envelope.WorldNodes, fmt.Sprintf("nodes %d", c.Nodes))
	add(envelope.WorldReplication, fmt.Sprintf("replication %d", c.Replication))
	add(envelope.WorldHosts, fmt.Sprintf("hosts %d", c.Hosts))
	add(envelope.WorldThreads, fmt.Sprintf("threads %d", c.ThreadsPerHost))
	add(envelope.WorldTTL, "ttl "+envelope.Span(c.TTL))
	add("", "duration "+envelope.Span(c.Duration))
	add(envelope.WorldLatency, fmt.Sprintf("latency %s..%s +%s tail", envelope.Span(c.LatencyMin), envelope.Span(c.LatencyMax), envelope.Span(c.LatencyTail)))
	add("", "rpc-timeout "+envelope.Span(c.RPCTimeout))
	add(envelope.WorldHold, fmt.Sprintf("hold %s..%s", envelope.Span(c.HoldMin), envelope.Span(c.HoldMax)))
	add(envelope.WorldThink, fmt.Sprintf("think %s..%s", envelope.Span(c.ThinkMin), envelope.Span(c.ThinkMax)))
	d := sim.DefaultConfig()
	if c.MaxEvents != d.MaxEvents {
		parts = append(parts, fmt.Sprintf("max_events %d", c.MaxEvents))
	}
	if c.MaxStepsNoYield != d.MaxStepsNoYield {
		parts = append(parts, fmt.Sprintf("max_steps_no_yield %d", c.MaxStepsNoYield))
	}
	if c.Acquisitions > 0 {
		parts = append(parts, fmt.Sprintf("acquisitions %d", c.Acquisitions))
	}
	if c.RestartingVersions {
		add(envelope.WorldVersions, "restarting versions")
	}
	if c.SlowExtra > 0 {
		add(envelope.WorldLatency, envelope.DescribeSlowLink(c))
	}
	if c.AppData != "" {
		add(envelope.WorldData, envelope.DescribeWorld(c, []envelope.WorldField{envelope.WorldData}))
	}
	return strings.Join(parts, ", ")
}

// changeList is every world change -changes accepts.
func changeList() string {
	s := make([]string, len(envelope.EveryWorldChange))
	for i, c := range envelope.EveryWorldChange {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// parseChanges reads -changes.
func parseChanges(list string) ([]algorithm.WorldChange, error) {
	var out []algorithm.WorldChange
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		c := algorithm.WorldChange(name)
		if !slices.Contains(envelope.EveryWorldChange, c) {
			return nil, fmt.Errorf("-changes: unknown world change %q (known: %s)", name, changeList())
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}
