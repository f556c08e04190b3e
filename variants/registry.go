// Package variants is the registry of lock algorithms locksim can run: the
// original (from package algorithm), one variant per bug of the original that
// fixes only that bug, the corrected lock with every fix, the fenced lock,
// Redlock, and etcd's mutex with and without fencing. A reviewer adds a variant by adding one file whose init() calls
// Register; nothing else needs to change.
package variants

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locksim/locksim/algorithm"
)

// rank is the documented order of All: the original first, then the per-bug
// fixes in the order the bugs are usually found, then the full fixes.
// Variants not listed here (a reviewer's new file) follow, sorted by name.
var rank = []string{
	"original",
	"original-literal",
	"fix-quorum",
	"fix-identity",
	"fix-validity",
	"fix-clock",
	"fix-partial",
	"fix-amnesia",
	"corrected",
	"fenced",
	"redlock",
	"etcd-mutex",
	"etcd-fenced",
}

var registered = map[string]algorithm.Variant{}

// Register adds a variant. It is called from init(); a duplicate or empty
// name is a programming error and panics at start-up.
func Register(v algorithm.Variant) {
	if v.Name == "" {
		panic("variants: Register with an empty name")
	}
	if _, dup := registered[v.Name]; dup {
		panic(fmt.Sprintf("variants: %q registered twice", v.Name))
	}
	registered[v.Name] = v
}

// All returns every registered variant: those named in rank in that order,
// then the others by name.
func All() []algorithm.Variant {
	all := make([]algorithm.Variant, 0, len(registered))
	for _, v := range registered {
		all = append(all, v)
	}
	slices.SortFunc(all, func(a, b algorithm.Variant) int {
		if ra, rb := rankOf(a.Name), rankOf(b.Name); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Name, b.Name)
	})
	return all
}

func rankOf(name string) int {
	if i := slices.Index(rank, name); i >= 0 {
		return i
	}
	return len(rank)
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
	return algorithm.Variant{}, fmt.Errorf("unknown variant %q (known: %s)", name, strings.Join(Names(), ", "))
}
