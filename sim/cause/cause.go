// Package cause says which bug a failing seed shows, by counterfactual
// replay: the same seed, world and plan, run again with each single fix
// the variant's family knows (algorithm.Variant.Fixes), then with pairs of
// them (a minimal set, found by dropping fixes from all of them) if no
// single one helps. The cause of a violation is the smallest
// set of fixes whose replay no longer shows it. A lock that declares no
// fixes is attributed the same way by world changes (the faults and world
// fields its failure needs), said in the same words.
//
// A counterfactual replay diverges from the run it replays as soon as
// the fix changes a call, so a fix can also cure a seed by chance; the
// pure seeds of a cause (cured by its fix alone, and by no other) are the
// ones a catalogue shows.
package cause

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/faults"
	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim"
	"github.com/locksim/locksim/sim/envelope"
	"github.com/locksim/locksim/sim/explore"
)

// Unattributed is the cause of a seed no set of fixes cures.
const Unattributed = "unattributed"

// Options say how attribution replays.
type Options struct {
	// Run is how each replay is run and checked (the failing run's own).
	Run explore.Options
}

// Attribution is what the counterfactual replays of one failing seed say,
// violation by violation.
type Attribution struct {
	Seed uint64
	// Kinds are the seed's violations that count, each with its cause:
	// those of properties the variant promises (bugs, or expected outside
	// its envelope), each kind once, in the verdict's order.
	Kinds []Kind
	// Tried are the replays, in the order they ran.
	Tried []Tried
	// ByWorld: the variant declares no fixes, and causes are world changes.
	ByWorld bool
	// Replays is how many runs attribution took.
	Replays int
}

// Kind is one kind of violation of the seed and what cures it.
type Kind struct {
	Kind model.ViolationKind
	// Cures are the smallest sets of fixes whose replay no longer shows
	// the violation: several singles when each fix alone removes it (it
	// needed each of those bugs), or one minimal set when only fixes
	// together do (each bug alone was enough). Empty: unattributed.
	Cures [][]string
}

// Tried is one counterfactual replay: the fixes applied, and which of the
// seed's violations it no longer shows.
type Tried struct {
	Fixes   []string              `json:"fixes"`
	Removed []model.ViolationKind `json:"removed,omitempty"`
}

// Cause is the kind's cause in a word or a few: "quorum" (that fix alone
// removes it), "identity & quorum" (each alone does: the violation needed
// both bugs), "partial + quorum" (only both together do: either bug alone
// was enough), or "unattributed".
func (k Kind) Cause() string {
	if len(k.Cures) == 0 {
		return Unattributed
	}
	var single, sets []string
	for _, c := range k.Cures {
		if len(c) == 1 {
			single = append(single, c[0])
		} else {
			sets = append(sets, strings.Join(c, " + "))
		}
	}
	if len(single) > 0 {
		return strings.Join(single, " & ")
	}
	return strings.Join(sets, " | ")
}

// Pure reports whether exactly one fix removes the violation on its own.
func (k Kind) Pure() bool { return len(k.Cures) == 1 && len(k.Cures[0]) == 1 }

// Attributed reports whether every violation of the seed has a cause.
func (a Attribution) Attributed() bool {
	return !slices.ContainsFunc(a.Kinds, func(k Kind) bool { return len(k.Cures) == 0 })
}

// PureFor reports whether the seed shows fix's bug and no other: fix
// alone, and no other fix alone, removes each of its violations.
func (a Attribution) PureFor(fix string) bool {
	return len(a.Kinds) > 0 && !slices.ContainsFunc(a.Kinds, func(k Kind) bool { return !k.Pure() || k.Cures[0][0] != fix })
}

// Cause is the seed's causes, kind by kind: "mutual-exclusion: identity;
// data-loss: reserved-name".
func (a Attribution) Cause() string {
	s := make([]string, len(a.Kinds))
	for i, k := range a.Kinds {
		s[i] = string(k.Kind) + ": " + k.Cause()
	}
	return strings.Join(s, "; ")
}

// String is the attribution in sentences, one per violation.
func (a Attribution) String() string {
	what, whats := "fix", "fixes"
	if a.ByWorld {
		what, whats = "world change", "world changes"
	}
	var b strings.Builder
	for i, k := range a.Kinds {
		if i > 0 {
			b.WriteString("; ")
		}
		switch {
		case len(k.Cures) == 0:
			fmt.Fprintf(&b, "%s: unattributed (no %s removes it, nor every one together)", k.Kind, what)
		case k.Pure():
			fmt.Fprintf(&b, "%s: %s (that %s alone removes it, and no other %s does)", k.Kind, k.Cause(), what, what)
		case len(k.Cures[0]) == 1:
			fmt.Fprintf(&b, "%s: %s (each of these %s alone removes it: it needed every one of those bugs)", k.Kind, k.Cause(), whats)
		default:
			fmt.Fprintf(&b, "%s: %s (no single %s removes it, these together do, and none of them can be left out: each bug alone was enough)", k.Kind, k.Cause(), what)
		}
	}
	fmt.Fprintf(&b, " [%d replays]", a.Replays)
	return b.String()
}

// counted are the kinds of o's violations that attribution explains: its
// bugs, or, in a run that broke assumptions on purpose and has none, the
// violations of promised properties outside the envelope.
func counted(o explore.Outcome) []model.ViolationKind {
	var ks []model.ViolationKind
	bugs := o.Bugs() > 0
	for _, f := range o.Findings {
		if f.Promised && (f.Bug() || !bugs) && !slices.Contains(ks, f.Kind) {
			ks = append(ks, f.Kind)
		}
	}
	return ks
}

// still are the kinds of a replay's violations that the fixes did not
// remove: promised, and inside the envelope of the variant replayed, or
// outside only assumptions the unfixed variant made too. A violation the
// fix's own assumption excuses is removed as a bug (fix-validity trusts
// its holder to use the lock only while valid; a pause past that still
// loses an update, outside its envelope).
func still(r explore.Outcome, was algorithm.Envelope) []model.ViolationKind {
	var ks []model.ViolationKind
	for _, f := range r.Findings {
		if f.Promised && (f.Breach == nil || was.Assumes(f.Breach.Assumption)) && !slices.Contains(ks, f.Kind) {
			ks = append(ks, f.Kind)
		}
	}
	return ks
}

// fix is one counterfactual: a lock fix of the variant, or a world change.
type fix struct {
	name  string
	lock  bool
	world algorithm.WorldChange
	broad bool
}

// fixesOf are t's variant's declared fixes, or, when it declares none,
// every world change.
func fixesOf(v algorithm.Variant) ([]fix, bool) {
	var out []fix
	for _, f := range v.Fixes {
		out = append(out, fix{name: f.Name, lock: f.World == "", world: f.World, broad: f.Broad})
	}
	if len(out) > 0 {
		return out, false
	}
	for _, c := range envelope.EveryWorldChange {
		out = append(out, fix{name: string(c), world: c})
	}
	return out, true
}

// Attribute replays failing run o of target t (its seed, the world it ran
// in, its plan) under each fix, then, for a violation no single fix
// removes, a minimal set of fixes that does, and says for each
// violation of o that counts the smallest sets of fixes that remove it.
func Attribute(t explore.Target, o explore.Outcome, opt Options) (Attribution, error) {
	a := Attribution{Seed: o.Seed}
	for _, k := range counted(o) {
		a.Kinds = append(a.Kinds, Kind{Kind: k})
	}
	if len(a.Kinds) == 0 {
		return a, fmt.Errorf("seed %d shows no violation of a promised property: nothing to attribute", o.Seed)
	}
	if opt.Run.Check == (model.CheckOptions{}) {
		opt.Run = explore.DefaultOptions()
	}
	opt.Run.Keep, opt.Run.Trace = false, false
	all, byWorld := fixesOf(t.Variant)
	a.ByWorld = byWorld
	// Singles first; a world change that changes nothing in this seed
	// is no counterfactual and is not tried.
	var useful, broad []fix
	for _, f := range all {
		if f.broad {
			broad = append(broad, f)
			continue
		}
		tr, ok, err := replay(t, o, []fix{f}, opt, &a)
		if err != nil {
			return a, err
		}
		if ok {
			useful = append(useful, f)
			a.cured(tr)
		}
	}
	if !a.Attributed() && len(useful) > 1 {
		// No single fix removes some violation: several bugs each did it.
		// Every fix together must (else no fix the variant knows explains
		// it: unattributed); then each fix is dropped in turn while the
		// rest still remove it, down to a minimal set: n+1 replays, where
		// trying every set would take 2^n.
		if err := a.minimalSets(t, o, useful, opt); err != nil {
			return a, err
		}
	}
	for _, f := range broad {
		if a.Attributed() {
			break
		}
		tr, ok, err := replay(t, o, []fix{f}, opt, &a)
		if err != nil {
			return a, err
		}
		if ok {
			a.curedUnattributed(tr)
		}
		if !a.Attributed() && len(useful) > 0 {
			// Alone, the broad fix leaves the narrow bugs in (a quorum
			// of every node at replication 4, data under k_lock), and
			// every narrow fix together leaves the broad bug in: each
			// starves the waiters alone, so only some of them with the
			// broad one cure it (seeds 97, 4307 and 8933 of the default
			// sweep). The broad fix on top of the narrow ones, down to a
			// minimal set.
			if err := a.minimalSets(t, o, append(slices.Clone(useful), f), opt); err != nil {
				return a, err
			}
		}
	}
	return a, nil
}

// only are the lock fixes of fs (lock), or its world changes.
func only(fs []fix, lock bool) []fix {
	var out []fix
	for _, f := range fs {
		if f.lock == lock {
			out = append(out, f)
		}
	}
	return out
}

// minimalSets finds, for each violation no single fix removes, a minimal
// set of fixes that removes it, by dropping fixes from the set of all.
func (a *Attribution) minimalSets(t explore.Target, o explore.Outcome, useful []fix, opt Options) error {
	for i := range a.Kinds {
		if len(a.Kinds[i].Cures) > 0 {
			continue
		}
		kind := a.Kinds[i].Kind
		removes := func(set []fix) (bool, error) {
			tr, ok, err := replay(t, o, set, opt, a)
			return ok && slices.Contains(tr.Removed, kind), err
		}
		// Every fix together, or else the lock's fixes alone or the
		// world's alone: a replay diverges from the run, and one with
		// more changed can show the violation again by another path.
		starts := [][]fix{useful}
		for _, lock := range []bool{true, false} {
			if part := only(useful, lock); len(part) > 0 && len(part) < len(useful) {
				starts = append(starts, part)
			}
		}
		var set []fix
		for _, start := range starts {
			ok, err := removes(start)
			if err != nil {
				return err
			}
			if ok {
				set = slices.Clone(start)
				break
			}
		}
		if set == nil {
			continue // unattributed: no set of its fixes removes it
		}
		for j := len(set) - 1; j >= 0 && len(set) > 2; j-- {
			without := slices.Delete(slices.Clone(set), j, j+1)
			ok, err := removes(without)
			if err != nil {
				return err
			}
			if ok {
				set = without
			}
		}
		var names []string
		for _, f := range set {
			names = append(names, f.name)
		}
		a.Kinds[i].Cures = [][]string{names}
	}
	return nil
}

// curedUnattributed records tr's fixes as the cure of each violation it
// removed that has none yet.
func (a *Attribution) curedUnattributed(tr Tried) {
	for i := range a.Kinds {
		if k := &a.Kinds[i]; len(k.Cures) == 0 && slices.Contains(tr.Removed, k.Kind) {
			k.Cures = [][]string{tr.Fixes}
		}
	}
}

// AttributeAll attributes failing runs of t on every core, each in its
// place in the result, with every error, joined.
func AttributeAll(t explore.Target, fails []explore.Outcome, opt Options) ([]Attribution, error) {
	out := make([]Attribution, len(fails))
	errs := make([]error, len(fails))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(fails), 1)) {
		wg.Go(func() {
			for i := range next {
				out[i], errs[i] = Attribute(t, fails[i], opt)
			}
		})
	}
	for i := range fails {
		next <- i
	}
	close(next)
	wg.Wait()
	return out, errors.Join(errs...)
}

// cured records tr's fixes as a cure of each violation it removed that no
// smaller set removes already.
func (a *Attribution) cured(tr Tried) {
	for i := range a.Kinds {
		k := &a.Kinds[i]
		if slices.Contains(tr.Removed, k.Kind) && !containsCure(k.Cures, tr.Fixes) {
			k.Cures = append(k.Cures, tr.Fixes)
		}
	}
}

// containsCure reports whether a smaller cure is a subset of set.
func containsCure(cures [][]string, set []string) bool {
	return slices.ContainsFunc(cures, func(c []string) bool {
		for _, n := range c {
			if !slices.Contains(set, n) {
				return false
			}
		}
		return true
	})
}

// replay runs o's seed again with fixes applied. ok is false when the
// fixes change nothing of the run's world, plan or lock.
func replay(t explore.Target, o explore.Outcome, fixes []fix, opt Options, a *Attribution) (Tried, bool, error) {
	names := make([]string, len(fixes))
	for i, f := range fixes {
		names[i] = f.name
	}
	// A set already replayed (every fix together, asked again for each
	// violation no single fix removes) is not run twice.
	if i := slices.IndexFunc(a.Tried, func(tr Tried) bool { return slices.Equal(tr.Fixes, names) }); i >= 0 {
		return a.Tried[i], true, nil
	}
	tt, plan, ok, err := apply(t, o.Config, o.Plan, fixes)
	if err != nil || !ok {
		return Tried{}, false, err
	}
	r, err := explore.RunPlan(tt, o.Seed, plan, opt.Run)
	if err != nil {
		return Tried{}, false, err
	}
	a.Replays++
	tr := Tried{Fixes: names}
	left := still(r, t.Variant.Envelope)
	for _, k := range a.Kinds {
		if !slices.Contains(left, k.Kind) {
			tr.Removed = append(tr.Removed, k.Kind)
		}
	}
	a.Tried = append(a.Tried, tr)
	return tr, true, nil
}

// apply is target t, world cfg and plan with fixes applied: the lock
// fixes to the variant, the world changes to the world and plan. ok is
// false when they change nothing.
func apply(t explore.Target, cfg sim.Config, plan faults.Plan, fixes []fix) (explore.Target, faults.Plan, bool, error) {
	v, changed := t.Variant, false
	var lock []string
	for _, f := range fixes {
		if f.lock {
			lock = append(lock, f.name)
		}
	}
	if len(lock) > 0 {
		if v.WithFixes == nil {
			return t, plan, false, fmt.Errorf("variant %s declares lock fixes but cannot apply them (WithFixes is nil)", v.Name)
		}
		v, changed = v.WithFixes(lock), true
	}
	// World changes after the lock's: one may change the variant's
	// envelope too (a restart quarantine), which the fixed lock keeps.
	for _, f := range fixes {
		if f.lock {
			continue
		}
		var did bool
		var err error
		if cfg, plan, v, did, err = envelope.ChangeWorld(f.world, cfg, plan, v); err != nil {
			return t, plan, false, err
		}
		changed = changed || did
	}
	t.Variant, t.Config, t.World, t.Plan, t.Beyond = v, cfg, nil, nil, nil
	return t, plan, changed, nil
}

// Only is target t with every fix of its variant applied but one: a sweep
// of it shows that bug alone, without the frequent ones masking it. The
// variant's lock fixes but fix are applied (its name says which: the
// repros replay by it), and its world fixes but fix are changes every
// seed's world gets (explore.Target.Changes). Broad fixes stay out: they
// would remove the bug shown too; so does the fix the bug needs the world
// of (algorithm.Fix.Within: stale views need topology changes).
func Only(t explore.Target, name string) (explore.Target, error) {
	v := t.Variant
	i := slices.IndexFunc(v.Fixes, func(f algorithm.Fix) bool { return f.Name == name })
	if i < 0 {
		return t, fmt.Errorf("%s knows no fix %q (its fixes: %s)", v.Name, name, v.FixNames())
	}
	within := v.Fixes[i].Within
	var lock []string
	for _, f := range v.Fixes {
		switch {
		case f.Name == name || f.Broad || f.Name == within:
		case f.World != "":
			t.Changes = append(t.Changes, f.World)
		default:
			lock = append(lock, f.Name)
		}
	}
	if len(lock) > 0 {
		if v.WithFixes == nil {
			return t, fmt.Errorf("variant %s declares lock fixes but cannot apply them", v.Name)
		}
		t.Variant = v.WithFixes(lock)
	}
	return t, nil
}

// Group is the failing seeds of a sweep whose violation of one kind has
// one cause.
type Group struct {
	Kind  model.ViolationKind
	Cause string
	Seeds []uint64
	// Pure is the group's first seed that shows its cause alone (every
	// violation of the seed removed by that one fix, and by no other);
	// 0 when none does, or the cause is not a single fix.
	Pure uint64
}

// Groups sorts attributions by violation kind and cause, each group in
// the order of its first seed; a seed with several kinds of violation is
// in several groups.
func Groups(as []Attribution) []Group {
	var gs []Group
	at := map[string]int{}
	for _, a := range as {
		for _, k := range a.Kinds {
			key := string(k.Kind) + "\x00" + k.Cause()
			i, ok := at[key]
			if !ok {
				i = len(gs)
				at[key] = i
				gs = append(gs, Group{Kind: k.Kind, Cause: k.Cause()})
			}
			g := &gs[i]
			g.Seeds = append(g.Seeds, a.Seed)
			if g.Pure == 0 && k.Pure() && a.PureFor(k.Cures[0][0]) {
				g.Pure = a.Seed
			}
		}
	}
	return gs
}
