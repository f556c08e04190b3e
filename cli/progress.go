package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress reports a sweep's advance on stderr: a bar redrawn at most ten
// times a second when stderr is a terminal, a plain line every few seconds
// otherwise. It uses wall time, which is fine here and never in sim.
type progress struct {
	w        io.Writer
	tty      bool
	total    int
	start    time.Time
	last     time.Time // last draw or line
	drawn    bool      // a bar is on screen
	done     int
	failures int
}

const (
	barInterval  = 100 * time.Millisecond
	lineInterval = 5 * time.Second
	barWidth     = 30
)

func newProgress(w io.Writer, total int) *progress {
	now := time.Now()
	return &progress{w: w, tty: isTerminal(w), total: total, start: now, last: now}
}

// isTerminal reports whether w is a character device (a terminal), without
// a dependency: os.File.Stat and ModeCharDevice.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// seen counts one more outcome and redraws if it is time to.
func (p *progress) seen(failed bool) {
	p.done++
	if failed {
		p.failures++
	}
	now := time.Now()
	switch {
	case p.tty && now.Sub(p.last) >= barInterval:
		p.last = now
		p.drawBar(now)
	case !p.tty && now.Sub(p.last) >= lineInterval:
		p.last = now
		fmt.Fprintf(p.w, "sweep: %s\n", p.status(now))
	}
}

func (p *progress) drawBar(now time.Time) {
	filled := 0
	if p.total > 0 {
		filled = barWidth * p.done / p.total
	}
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", barWidth-filled)
	fmt.Fprintf(p.w, "\r\033[K[%s] %s", bar, p.status(now))
	p.drawn = true
}

func (p *progress) status(now time.Time) string {
	elapsed := now.Sub(p.start).Round(time.Second)
	if p.total == forever {
		return fmt.Sprintf("%d seeds in %s, %.0f seeds/s, %d failing (until Ctrl-C)", p.done, elapsed, p.rate(now), p.failures)
	}
	left := "?"
	if r := p.rate(now); r > 0 && p.done > 0 {
		left = estimate(float64(p.total-p.done) / r)
	}
	return fmt.Sprintf("%d/%d seeds in %s, about %s left, %.0f seeds/s, %d failing", p.done, p.total, elapsed, left, p.rate(now), p.failures)
}

// rate is seeds per wall-clock second so far.
func (p *progress) rate(now time.Time) float64 {
	secs := now.Sub(p.start).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(p.done) / secs
}

// clear removes the bar so other output starts on a clean line.
func (p *progress) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// estimate is a time left of secs seconds, for reading: to the second up
// to a day, then in days, then in years (a duration of a trillion seeds
// would overflow time.Duration).
func estimate(secs float64) string {
	const day, year = 24 * 3600, 365.25 * 24 * 3600
	switch {
	case secs < day:
		return (time.Duration(secs) * time.Second).Round(time.Second).String()
	case secs < year:
		return fmt.Sprintf("%.1f days", secs/day)
	case secs < 1e6*year:
		return fmt.Sprintf("%.0f years", secs/year)
	}
	return "more than a million years"
}
