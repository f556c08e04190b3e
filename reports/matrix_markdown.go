package reports

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// markdownLegend explains the cells of Markdown's matrix.
const markdownLegend = `Every cell is a variant inside its envelope: each seed draws a world of the
class that breaks none of the variant's assumptions (up to their edges), and only a
violation of a property the variant promises counts, a **bug**. What breaking each
assumption costs is the second table.

Legend:
- ✓ 0/n (<p%): no bug in any of n seeds: with 95% confidence fewer than p% of seeds would show one
- ✗ k/n: k of n seeds showed a bug; ⚠ k/n: k of n seeds only starved waiters
- kinds: M mutual exclusion (lock level), U lost update or data destroyed (resource level), L liveness (waiters starved, items left behind), A abort (panic or livelock)
- first @i: the first bug came at the i-th seed; size s: timed faults left after minimising it
- not promised k: k seeds broke only what the variant does not promise (fenced: the lock)
- outside k: k seeds broke an assumption anyway (so what broke after it is no bug)
- n/a: the class has no fault the envelope allows (the variant assumes it away); its seeds ran fault-free
- [n]: replay command n, listed below the tables
`

// Markdown writes the matrix for review: the matrix with a legend, the cost
// of breaking each assumption, the replay command of every failing cell,
// the variants' envelopes and their metrics. The output is deterministic.
func Markdown(w io.Writer, m Matrix) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# locksim: %s × %s, %d seeds per cell\n\n", Plural(len(m.Rows), "variant"), Plural(len(m.Classes), "fault class"), m.Seeds)
	b.WriteString(markdownLegend + "\n")
	replays := markdownMatrix(&b, m)
	inside := len(replays)
	replays = markdownCosts(&b, m, replays)
	markdownExamples(&b, m, inside)
	if len(replays) > 0 {
		b.WriteString("\n## Replay\n\n")
		for i, r := range replays {
			fmt.Fprintf(&b, "%d. %s\n", i+1, r)
		}
	}
	markdownBounded(&b, m)
	b.WriteString("\n## Variants\n\n| variant | what it changes | envelope |\n| --- | --- | --- |\n")
	for _, r := range m.Rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cellEscape(r.Variant), cellEscape(r.Summary), cellEscape(orDash(r.Envelope)))
	}
	b.WriteString("\n## Metrics\n\nPooled over every run inside the envelope.\n\n" +
		"| variant | grants/min | acquire p50 (ms) | acquire p99 (ms) | availability | messages/grant |\n" +
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

// markdownCosts writes the cost table, if the matrix has one, numbering its
// replay footnotes after those already in replays.
func markdownCosts(b *strings.Builder, m Matrix, replays []string) []string {
	if m.CostSeeds == 0 || len(m.Assumptions) == 0 {
		return replays
	}
	fmt.Fprintf(b, "\n## What breaking each assumption costs\n\n"+
		"Per variant and assumption it makes, %d seeds drawn to break that one assumption (faults of\n"+
		"every class, every other assumption kept): in how many seeds a promised property broke\n"+
		"after it (kinds as above), of how many whose run really broke it. – : not assumed.\n\n", m.CostSeeds)
	b.WriteString("| variant |")
	for _, a := range m.Assumptions {
		fmt.Fprintf(b, " %s |", a)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --- |", len(m.Assumptions)) + "\n")
	for _, r := range m.Rows {
		fmt.Fprintf(b, "| %s |", cellEscape(r.Variant))
		for _, c := range r.Costs {
			text := costText(c)
			if c.Expected > 0 && c.Replay != "" {
				replays = append(replays, fmt.Sprintf("%s beyond %s: `%s`", r.Variant, c.Assumption, c.Replay))
				text += fmt.Sprintf(" [%d]", len(replays))
			}
			fmt.Fprintf(b, " %s |", text)
		}
		b.WriteString("\n")
	}
	return replays
}

// markdownExamples shows what inside and outside mean with the matrix's own
// first bug and its first cost: the replay footnotes are numbered as the
// tables number them (cells first, then costs).
func markdownExamples(b *strings.Builder, m Matrix, cellNotes int) {
	var inside, outside string
	note := 0
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			if c.Violations > 0 && c.Replay != "" {
				note++
				if inside == "" && c.Story != "" {
					inside = fmt.Sprintf("- **Inside: a bug.** %s × %s, seed %d: %s. The run broke none of %s's assumptions, "+
						"and %s promises what broke: a bug of the variant, and a failing sweep [%d].\n",
						r.Variant, c.Class, c.FirstSeed, c.Story, r.Variant, r.Variant, note)
				}
			}
		}
	}
	note = cellNotes
	for _, r := range m.Rows {
		for _, c := range r.Costs {
			if c.Expected > 0 && c.Replay != "" {
				note++
				if outside == "" && c.Story != "" {
					outside = fmt.Sprintf("- **Outside: expected.** %s, drawn to break %s, seed %d: %s. The assumption broke "+
						"first, so what broke after it is its price, not a bug: the sweep does not fail unless -strict [%d].\n",
						r.Variant, c.Assumption, c.FirstSeed, c.Story, note)
				}
			}
		}
	}
	if inside == "" && outside == "" {
		return
	}
	b.WriteString("\n## Inside and outside, by example\n\n" + inside + outside)
}

// cellText writes a cell as "✗ 12/200 M+U (first @3, size 2)" or
// "✓ 0/200 (<1.5%)".
func cellText(c Cell) string {
	var s string
	switch c.Status() {
	case NotRun:
		return "–"
	case Safe:
		s = fmt.Sprintf("✓ 0/%d (<%s)", c.Seeds, percent(upperBound95(c.Seeds)))
		if c.Excluded != "" {
			s = "n/a: assumes no " + c.Excluded
		}
	default:
		mark := "✗"
		if c.Status() == LivenessOnly {
			mark = "⚠"
		}
		s = fmt.Sprintf("%s %d/%d %s (first @%d", mark, c.Violations, c.Seeds, kindLetters(c.Kinds), c.SeedsToFirst)
		if c.MinimalSize >= 0 {
			s += fmt.Sprintf(", size %d", c.MinimalSize)
		}
		s += ")"
	}
	return s + cellNotes(c)
}

// cellNotes are a cell's counts of what is not a bug: " · not promised 3".
func cellNotes(c Cell) string {
	s := ""
	if c.Unpromised > 0 {
		s += fmt.Sprintf(" · not promised %d", c.Unpromised)
	}
	if c.Outside > 0 {
		s += fmt.Sprintf(" · outside %d", c.Outside)
	}
	return s
}

// costText writes a cost as "12/40 M+U of 50 (first @3)", "0/50 of 48", or
// "–" when the variant makes no such assumption.
func costText(c Cost) string {
	if !c.Assumed {
		return "–"
	}
	s := fmt.Sprintf("%d/%d", c.Expected, c.Broke)
	if c.Expected > 0 {
		s += fmt.Sprintf(" %s (first @%d)", kindLetters(c.Kinds), c.SeedsToFirst)
	}
	if c.Bugs > 0 {
		s += fmt.Sprintf(" · bugs %d", c.Bugs)
	}
	return s
}

// upperBound95 is the failure rate per seed that n clean seeds rule out
// with 95% confidence, by the rule of three: 3/n (the exact bound,
// 1 - 0.05^(1/n), is a little lower; 3/n needs no float library, so every
// machine prints the same).
func upperBound95(n int) (percentTimes100 int) {
	if n <= 3 {
		return 100_00
	}
	return (3*100_00 + n - 1) / n // rounded up: never claim more than the seeds show
}

// percent writes hundredths of a percent with two significant digits,
// rounded up: "38%", "1.5%", "0.30%".
func percent(h int) string {
	switch {
	case h >= 10_00:
		return fmt.Sprintf("%d%%", (h+99)/100)
	case h >= 1_00:
		tenths := (h + 9) / 10
		return fmt.Sprintf("%d.%d%%", tenths/10, tenths%10)
	}
	return fmt.Sprintf("0.%02d%%", h)
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

// Plural is n and what, in the plural unless n is 1, with thousands
// separated: "1 fault", "45,055 schedules", "3 fault classes".
func Plural(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "s"):
		return Thousands(n) + " " + what + "es"
	}
	return Thousands(n) + " " + what + "s"
}

// Thousands is 183204 as "183,204".
func Thousands(n int) string {
	s := strconv.Itoa(n)
	start := 0
	if n < 0 {
		start = 1
	}
	for i := len(s) - 3; i > start; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// markdownBounded writes the systematic exploration's table, if the
// comparison ran one: per variant, its bounded result or its fewest-fault
// counterexample, and the schedules (failing) at each number of faults.
func markdownBounded(b *strings.Builder, m Matrix) {
	var world string
	maxK := -1
	for _, r := range m.Rows {
		if r.Bounded != nil {
			world, maxK = r.Bounded.World, max(maxK, r.Bounded.MaxFaults)
		}
	}
	if maxK < 0 {
		return
	}
	fmt.Fprintf(b, "\n## Systematic exploration\n\nEvery schedule of a small world (%s) with at most %s inside the variant's "+
		"envelope (locksim explore): a deviation loses, delays or duplicates a message, crashes or restarts without data a node, "+
		"or pauses a holder within or past its validity. Breadth-first by the number of faults, so a counterexample has the "+
		"fewest there are. Schedules are counted, not distinct executions (no reduction yet); each column is failing/schedules "+
		"with exactly that many faults, every level run (explore -keep-going).\n\n| variant | result |", world, Plural(maxK, "fault"))
	for k := 0; k <= maxK; k++ {
		fmt.Fprintf(b, " k=%d |", k)
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" ---: |", maxK+1) + "\n")
	for _, r := range m.Rows {
		x := r.Bounded
		if x == nil {
			continue
		}
		result := fmt.Sprintf("✓ no violation with ≤ %s", Plural(x.MaxFaults, "fault"))
		switch {
		case x.Counterexample != "":
			result = fmt.Sprintf("✗ counterexample with %s: %s (`%s`)", Plural(x.Faults, "fault"), x.Counterexample, x.Command)
		case !x.Complete:
			result = "budget ran out"
		}
		fmt.Fprintf(b, "| %s | %s |", cellEscape(r.Variant), cellEscape(result))
		for k := 0; k <= maxK; k++ {
			if k < len(x.Levels) {
				fmt.Fprintf(b, " %d/%d |", x.Levels[k].Failing, x.Levels[k].Schedules)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
}
