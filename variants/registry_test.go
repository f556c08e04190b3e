package variants

import (
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/algorithm"
)

// builtin is the documented order of All: the original, the one-bug fixes
// by the number in BUGS.md of the bug each fixes, the full fixes, the
// other recipes; each file says its place, and this is what they add up to.
var builtin = []string{
	"original",
	"original-literal",
	"fix-identity",
	"fix-clock",
	"fix-validity",
	"fix-quorum",
	"fix-amnesia",
	"fix-partial",
	"corrected",
	"fenced",
	"etcd-fenced",
	"etcd-mutex",
	"redlock",
}

func TestAllIsInDocumentedOrder(t *testing.T) {
	if got := Names(); !slices.Equal(got, builtin) {
		t.Fatalf("Names() = %v, want %v", got, builtin)
	}
}

// A reviewer's new file adds a variant after the others by name, or where
// its Place says, and changes nothing else.
func TestPlacesOrderVariants(t *testing.T) {
	defer func(saved map[string]algorithm.Variant, savedAt map[string]Place) {
		registered, places = saved, savedAt
	}(registered, places)
	registered, places = map[string]algorithm.Variant{}, map[string]Place{}
	for _, r := range []struct {
		name string
		at   Place
	}{
		{"zeta", Place{}}, {"corrected", Place{Family: AllFixes}}, {"alpha", Place{Family: Added}},
		{"fix-b", Place{OneFix, 9}}, {"original", Place{Family: Original}}, {"fix-a", Place{OneFix, 10}},
	} {
		Register(algorithm.Variant{Name: r.name}, r.at)
	}
	want := []string{"original", "fix-b", "fix-a", "corrected", "alpha", "zeta"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
}

func TestLookup(t *testing.T) {
	v, err := Lookup("fenced")
	if err != nil || v.Name != "fenced" || !v.Envelope.Fenced() {
		t.Fatalf("Lookup(fenced) = %+v, %v", v, err)
	}
	_, err = Lookup("nope")
	if err == nil {
		t.Fatal("Lookup(nope) succeeded")
	}
	for _, name := range builtin {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list %q", err, name)
		}
	}
	if !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("error %q does not name what was asked", err)
	}
}

func TestRegisterDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering original twice did not panic")
		}
	}()
	Register(algorithm.Variant{Name: "original"}, Place{})
}

func TestEveryVariantIsComplete(t *testing.T) {
	for _, v := range All() {
		t.Run(v.Name, func(t *testing.T) {
			if v.Summary == "" || v.New == nil {
				t.Fatalf("incomplete: %+v", v)
			}
			if strings.Contains(v.Summary, "\n") || strings.Contains(v.Envelope.String(), "\n") {
				t.Fatal("summary and envelope must be one line")
			}
			if v.New() == nil {
				t.Fatal("New() returned nil")
			}
		})
	}
}
