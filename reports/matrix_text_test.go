package reports

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// The terminal's table fits TextWidth, names every variant with its
// verdict, numbers the replay of each failing row, and says what the
// letters mean.
func TestTextFitsATerminal(t *testing.T) {
	m := sampleMatrix()
	for i := range m.Rows { // long names and many broken assumptions
		m.Rows[i].Variant += strings.Repeat("-long", 3)
	}
	var b bytes.Buffer
	if err := Text(&b, m); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, l := range strings.Split(got, "\n") {
		if n := utf8.RuneCountInString(l); n > TextWidth {
			t.Errorf("a line of %d columns, over %d: %q", n, TextWidth, l)
		}
	}
	for _, r := range m.Rows {
		inside, replay := rowInside(r)
		if !strings.Contains(got, r.Variant+" ") || !strings.Contains(got, inside) {
			t.Errorf("row %s (%s) is not shown:\n%s", r.Variant, inside, got)
		}
		if replay != "" && !strings.Contains(got, replay) {
			t.Errorf("the replay of %s's first bug is not listed:\n%s", r.Variant, got)
		}
	}
	for _, want := range []string{"kinds: M two holders", "✓ 0/n (<p%)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the legend lacks %q:\n%s", want, got)
		}
	}
}
