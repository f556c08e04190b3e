// Package variants is the registry of lock algorithms locksim can run: the
// original (from package algorithm), one variant per bug of the original that
// fixes only that bug, the corrected lock with every fix, the fenced lock,
// Redlock, and etcd's mutex with and without fencing. A reviewer adds a
// variant by adding one file whose init() calls Register with the variant
// and its Place; nothing else needs to change.
package variants

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/locksim/locksim/algorithm"
)

// Family is a kind of variant, the first key of All's order.
type Family int

const (
	// Added, the zero Family, is a variant the registry knows nothing more
	// of: a reviewer's new file, until it says where it belongs. Added
	// variants come last.
	Added Family = iota
	// Original is the post's algorithm, as written and read literally.
	Original
	// OneFix fixes one bug of the original (Place.Fixes says which).
	OneFix
	// AllFixes fixes every bug the algorithm can fix: corrected, fenced.
	AllFixes
	// Recipe is a lock from another published recipe: Redlock, etcd's mutex.
	Recipe
)

// order is the family's place in All: Added last.
func (f Family) order() int {
	if f == Added {
		return int(Recipe) + 1
	}
	return int(f)
}

// Place is where a variant stands in All's order: by Family, then by the
// number in reports/BUGS.md of the bug it fixes (OneFix; the first, if it
// fixes several), then by name. Each variant's file states its own place,
// so a new variant needs no edit anywhere else.
type Place struct {
	Family Family
	Fixes  int // the BUGS.md number of the bug a OneFix variant fixes
}

var registered = map[string]algorithm.Variant{}

var places = map[string]Place{}

// Register adds a variant at its place in All's order. It is called from
// init(); a duplicate or empty name is a programming error and panics at
// start-up.
func Register(v algorithm.Variant, at Place) {
	if v.Name == "" {
		panic("variants: Register with an empty name")
	}
	if _, dup := registered[v.Name]; dup {
		panic(fmt.Sprintf("variants: %q registered twice", v.Name))
	}
	registered[v.Name] = v
	places[v.Name] = at
}

// All returns every registered variant in their places' order (Place).
func All() []algorithm.Variant {
	all := make([]algorithm.Variant, 0, len(registered))
	for _, v := range registered {
		all = append(all, v)
	}
	slices.SortFunc(all, func(a, b algorithm.Variant) int {
		pa, pb := places[a.Name], places[b.Name]
		return cmp.Or(cmp.Compare(pa.Family.order(), pb.Family.order()), cmp.Compare(pa.Fixes, pb.Fixes), strings.Compare(a.Name, b.Name))
	})
	return all
}

// Names lists the registered names in All's order.
func Names() []string {
	var names []string
	for _, v := range All() {
		names = append(names, v.Name)
	}
	return names
}

// Lookup returns the variant called name, or an error listing the known names.
func Lookup(name string) (algorithm.Variant, error) {
	if v, ok := registered[name]; ok {
		return v, nil
	}
	if v, ok, err := lookupFixed(name); ok {
		return v, err
	}
	return algorithm.Variant{}, fmt.Errorf("unknown variant %q (known: %s)", name, strings.Join(Names(), ", "))
}

// MustLookup is Lookup for names a program or a test knows are registered:
// it panics on an unknown one, as regexp.MustCompile does on a bad pattern.
func MustLookup(name string) algorithm.Variant {
	v, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return v
}

// MustLookupAll is MustLookup of each name, in order.
func MustLookupAll(names ...string) []algorithm.Variant {
	out := make([]algorithm.Variant, len(names))
	for i, n := range names {
		out[i] = MustLookup(n)
	}
	return out
}
