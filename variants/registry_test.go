package variants

import (
	"slices"
	"strings"
	"testing"

	"github.com/locksim/locksim/algorithm"
)

// The ranked variants come first, in rank order; a reviewer's new file
// adds one after them, and changes nothing here.
func TestAllIsInDocumentedOrder(t *testing.T) {
	got := Names()
	if len(got) < len(rank) || !slices.Equal(got[:len(rank)], rank) {
		t.Fatalf("Names() = %v, want %v first", got, rank)
	}
}

func TestUnrankedVariantsFollowByName(t *testing.T) {
	defer func(saved map[string]algorithm.Variant) { registered = saved }(registered)
	registered = map[string]algorithm.Variant{}
	for _, name := range []string{"zeta", "corrected", "alpha", "original"} {
		Register(algorithm.Variant{Name: name})
	}
	want := []string{"original", "corrected", "alpha", "zeta"}
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
	for _, name := range rank {
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
	Register(algorithm.Variant{Name: "original"})
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
