package reports

import (
	"fmt"
	"io"
	"strings"
)

// markdownLegend explains the cells of Markdown's matrix.
const markdownLegend = `Legend:
- ✓ 0/n: no violation in any of n seeds
- ✗ k/n: k of n seeds broke safety; ⚠ k/n: k of n seeds only starved waiters
- kinds: M mutual exclusion (lock level), U lost update (resource level), L liveness, A abort (panic or livelock)
- first @i: the first failure came at the i-th seed; size s: timed faults left after minimising it
- [n]: replay command n, listed below the matrix
`

// Markdown writes the matrix for review: the matrix with a legend, the
// replay command of every failing cell, the variants' summaries and their
// metrics. The output is deterministic.
func Markdown(w io.Writer, m Matrix) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# locksim: %d variants × %d fault classes, %d seeds per cell\n\n", len(m.Rows), len(m.Classes), m.Seeds)
	b.WriteString(markdownLegend + "\n")
	replays := markdownMatrix(&b, m)
	if len(replays) > 0 {
		b.WriteString("\n## Replay\n\n")
		for i, r := range replays {
			fmt.Fprintf(&b, "%d. %s\n", i+1, r)
		}
	}
	b.WriteString("\n## Variants\n\n| variant | what it changes | assumes |\n| --- | --- | --- |\n")
	for _, r := range m.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cellEscape(r.Variant), cellEscape(r.Summary), cellEscape(orDash(r.Assumptions)))
	}
	b.WriteString("\n## Metrics\n\n| variant | grants/min | acquire p50 (ms) | acquire p99 (ms) | availability | messages/grant |\n" +
		"| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range m.Rows {
		x := r.Metrics
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %.1f%% | %.1f |\n", cellEscape(r.Variant),
			x.GrantsPerMinute, x.AcquireP50ms, x.AcquireP99ms, 100*x.Availability, x.MessagesPerGrant)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownMatrix writes the matrix table and returns the replay lines its
// footnotes refer to, numbered in row-major order.
func markdownMatrix(b *strings.Builder, m Matrix) (replays []string) {
	b.WriteString("| variant |")
	for _, c := range m.Classes {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --- |", len(m.Classes)) + "\n")
	for _, r := range m.Rows {
		fmt.Fprintf(b, "| %s |", cellEscape(r.Variant))
		for _, c := range r.Cells {
			text := cellText(c)
			if c.Violations > 0 && c.Replay != "" {
				replays = append(replays, fmt.Sprintf("%s × %s: `%s`", r.Variant, c.Class, c.Replay))
				text += fmt.Sprintf(" [%d]", len(replays))
			}
			fmt.Fprintf(b, " %s |", text)
		}
		b.WriteString("\n")
	}
	return replays
}

// cellText writes a cell as "✗ 12/200 M+U (first @3, size 2)" or "✓ 0/200".
func cellText(c Cell) string {
	var s string
	switch c.Status() {
	case NotRun:
		return "–"
	case Safe:
		return fmt.Sprintf("✓ 0/%d", c.Seeds)
	case LivenessOnly:
		s = "⚠"
	default:
		s = "✗"
	}
	s += fmt.Sprintf(" %d/%d %s (first @%d", c.Violations, c.Seeds, kindLetters(c.Kinds), c.SeedsToFirst)
	if c.MinimalSize >= 0 {
		s += fmt.Sprintf(", size %d", c.MinimalSize)
	}
	return s + ")"
}

// kindLetters writes the kinds a cell showed as "M+U".
func kindLetters(k Kinds) string {
	var l []string
	for _, x := range []struct {
		n      int
		letter string
	}{{k.MutualExclusion, "M"}, {k.LostUpdate, "U"}, {k.Liveness, "L"}, {k.Aborted, "A"}} {
		if x.n > 0 {
			l = append(l, x.letter)
		}
	}
	return strings.Join(l, "+")
}

// cellEscape keeps text from breaking a Markdown table row.
func cellEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}
