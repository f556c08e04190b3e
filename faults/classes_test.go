package faults

import (
	"slices"
	"strings"
	"testing"
)

func TestClassFaults(t *testing.T) {
	if len(classFaults) != len(Classes) {
		t.Fatalf("classFaults covers %d classes, Classes has %d", len(classFaults), len(Classes))
	}
	for _, tc := range classFaults {
		if got := Allow(tc.class).Faults(); !slices.Equal(got, tc.faults) {
			t.Errorf("Allow(%s).Faults() = %v, want %v", tc.class, got, tc.faults)
		}
	}
}

func TestAllowHas(t *testing.T) {
	a := Allow(ClassLoss, ClassCrash)
	for _, c := range Classes {
		want := c == ClassLoss || c == ClassCrash
		if a.Has(c) != want {
			t.Errorf("Allow(loss,crash).Has(%s) = %v, want %v", c, !want, want)
		}
	}
	if !Allow(ClassAll).Has(ClassAll) || !Allow(ClassAll).Has(ClassTopology) {
		t.Error("Allow(all) lacks all or topology")
	}
	if !Allow().Has(ClassNone) || !Allow(ClassNone).Has(ClassNone) || Allow(ClassNone) != 0 {
		t.Error("the empty set should be none")
	}
	if got := a.String(); got != "loss,crash" {
		t.Errorf("String() = %q", got)
	}
	if got := Allow(ClassAll).Classes(); len(got) != len(Classes)-2 {
		t.Errorf("Allow(all).Classes() = %v", got)
	}
}

func TestParseClasses(t *testing.T) {
	got, err := ParseClasses(" loss, crash ")
	if err != nil || !slices.Equal(got, []Class{ClassLoss, ClassCrash}) {
		t.Fatalf("ParseClasses = %v, %v", got, err)
	}
	if got, err := ParseClasses(""); err != nil || got != nil {
		t.Errorf(`ParseClasses("") = %v, %v`, got, err)
	}
	for _, c := range Classes {
		if got, err := ParseClasses(string(c)); err != nil || !slices.Equal(got, []Class{c}) {
			t.Errorf("ParseClasses(%q) = %v, %v", c, got, err)
		}
	}
	_, err = ParseClasses("loss,clog")
	if err == nil || !strings.Contains(err.Error(), `"clog"`) || !strings.Contains(err.Error(), "amnesia") {
		t.Errorf("unknown class error %v should name it and list the valid ones", err)
	}
}

func TestCheckNamesField(t *testing.T) {
	p := Plan{Events: []Event{{Kind: Pause, For: 1}, {Kind: Crash, Node: 1, For: 1, Wipe: true}}}
	err := Allow(ClassPause, ClassCrash).Check(p)
	if err == nil || !strings.Contains(err.Error(), "events[1]") || !strings.Contains(err.Error(), "amnesia") {
		t.Errorf("Check = %v, want events[1] needing amnesia", err)
	}
	if err := Allow(ClassPause, ClassAmnesia).Check(p); err != nil {
		t.Errorf("Check = %v, want nil", err)
	}
}

func TestSizeAndFaults(t *testing.T) {
	if (Plan{}).Size() != 0 || (Plan{}).Faults() != nil {
		t.Error("the zero plan should have size 0 and no faults")
	}
	p := Plan{
		Network: Network{LossPPM: 1, ReplyLossPPM: 2},
		Clocks:  []Clock{{Kind: NodeProcess, DriftPPM: 3}},
		Points:  Points{PausePPM: 1, PauseFor: 1},
		Events:  []Event{{Kind: Clog, For: 1}, {Kind: Clog, For: 1}},
	}
	if got := p.Size(); got != 6 {
		t.Errorf("Size() = %d, want 6", got)
	}
	want := []string{"loss", "reply-loss", "clog", "drift", "points"}
	if got := p.Faults(); !slices.Equal(got, want) {
		t.Errorf("Faults() = %v, want %v", got, want)
	}
}
