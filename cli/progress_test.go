package cli

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// On a terminal the bar redraws in place, at most every barInterval; on
// anything else progress is a plain line every lineInterval.
func TestProgressBarRedrawsInPlace(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, 10)
	p.tty = true
	p.last = time.Now().Add(-time.Second)
	p.seen(false)
	p.seen(true) // within barInterval of the last draw: no redraw
	if got := strings.Count(b.String(), "\r\033[K"); got != 1 {
		t.Fatalf("bar drawn %d times, want 1: %q", got, b.String())
	}
	if !strings.Contains(b.String(), "1/10 seeds") || !strings.Contains(b.String(), "seeds/s") {
		t.Fatalf("bar %q lacks the count or the rate", b.String())
	}
	p.clear()
	if !strings.HasSuffix(b.String(), "\r\033[K") || p.drawn {
		t.Fatalf("clear did not erase the bar: %q", b.String())
	}
}

func TestProgressPlainLines(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, 10)
	if p.tty {
		t.Fatal("a buffer is not a terminal")
	}
	p.seen(true)
	if b.Len() != 0 {
		t.Fatalf("plain line before lineInterval: %q", b.String())
	}
	p.last = time.Now().Add(-lineInterval)
	p.seen(false)
	if got := b.String(); !strings.HasPrefix(got, "sweep: 2/10 seeds in ") || !strings.Contains(got, " left, ") || !strings.HasSuffix(got, ", 1 failing\n") || strings.Contains(got, "\r") {
		t.Fatalf("plain line %q", got)
	}
}

// The line says how long the sweep has run and about how long is left; a
// sweep without end says it runs until interrupted.
func TestProgressSaysElapsedAndLeft(t *testing.T) {
	p := newProgress(new(bytes.Buffer), 100)
	p.start = time.Now().Add(-10 * time.Second)
	p.done = 25
	if got := p.status(time.Now()); !strings.Contains(got, "25/100 seeds in 10s, about 30s left") {
		t.Fatalf("status %q, want 10s elapsed and about 30s left", got)
	}
	p.total = forever
	if got := p.status(time.Now()); !strings.Contains(got, "25 seeds in 10s") || !strings.Contains(got, "until Ctrl-C") {
		t.Fatalf("status %q of a sweep without end", got)
	}
}

func TestParseCount(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1000": 1000, "100000000": 100_000_000, "10k": 10_000, "5M": 5_000_000, "1T": 1_000_000_000_000, "forever": forever} {
		got, err := parseCount(in)
		if want > math.MaxInt { // a 32-bit build cannot count them, and says so
			if err == nil {
				t.Errorf("parseCount(%q) = %d on a %d-bit build", in, got, strconv.IntSize)
			}
			continue
		}
		if err != nil || int64(got) != want {
			t.Errorf("parseCount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"1000000000000", "-5", "ten", "1.5k", "10K", "", "9999999T"} {
		if _, err := parseCount(in); err == nil {
			t.Errorf("parseCount(%q) took it", in)
		}
	}
}

// A time left is readable at any size: a trillion seeds is years, not a
// negative duration.
func TestEstimateReadsAtAnySize(t *testing.T) {
	cases := map[float64]string{
		59:         "59s",
		3725:       "1h2m5s",
		86400:      "1.0 days",
		3 * 3.2e7:  "3 years",
		1e12 / 300: "106 years",
		1e20:       "more than a million years",
	}
	for secs, want := range cases {
		if got := estimate(secs); got != want {
			t.Errorf("estimate(%v) = %q, want %q", secs, got, want)
		}
	}
}
