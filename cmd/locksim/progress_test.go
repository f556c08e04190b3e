package main

import (
	"bytes"
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
	if got := b.String(); !strings.HasPrefix(got, "sweep: 2/10 seeds, ") || !strings.HasSuffix(got, ", 1 failing\n") || strings.Contains(got, "\r") {
		t.Fatalf("plain line %q", got)
	}
}
