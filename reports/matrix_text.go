package reports

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// TextWidth is the widest line Text writes: a terminal's.
const TextWidth = 120

// Text writes the matrix as a plain-text table for a terminal, no line
// wider than TextWidth: per variant, its bugs inside its envelope (every
// fault class pooled), the first one's replay number, and the
// assumptions whose breach broke a promise; then the legend and the
// replay commands. The Markdown and HTML reports say the rest.
func Text(w io.Writer, m Matrix) error {
	var b strings.Builder
	classes := "every fault class"
	if len(m.Classes) == 1 && m.Classes[0] != "all" {
		classes = "fault class " + string(m.Classes[0])
	} else if len(m.Classes) > 1 {
		classes = Plural(len(m.Classes), "fault class")
	}
	fmt.Fprintf(&b, "locksim: %s, each inside its envelope under %s (%s)", Plural(len(m.Rows), "variant"), classes,
		Plural(m.Seeds, "seed"))
	if m.CostSeeds > 0 {
		fmt.Fprintf(&b, ",\nand beyond each assumption it makes (%s each)", Plural(m.CostSeeds, "seed"))
	}
	b.WriteString("\n\n")
	nameWidth := len("variant")
	for _, r := range m.Rows {
		nameWidth = max(nameWidth, len(r.Variant))
	}
	const insideWidth = 28
	fmt.Fprintf(&b, "%-*s  %-*s  %s\n", nameWidth, "variant", insideWidth, "inside its envelope", "beyond it: promises broken / runs that broke the assumption")
	var replays []string
	for _, r := range m.Rows {
		inside, replay := rowInside(r)
		if replay != "" {
			replays = append(replays, replay)
			inside += fmt.Sprintf(" [%d]", len(replays))
		}
		line := fmt.Sprintf("%-*s  %s  %s", nameWidth, r.Variant, padRunes(inside, insideWidth), rowBeyond(r))
		b.WriteString(fit(line, TextWidth) + "\n")
	}
	b.WriteString("\n")
	for _, l := range []string{
		"✓ 0/n (<p%): no bug in n seeds; with 95% confidence fewer than p% of seeds would show one",
		"✗ k/n: k seeds showed a bug (a promised property broken inside the envelope); ⚠ k/n: they only starved waiters",
		"kinds: M two holders, U a lost update or the application's data destroyed, L waiters starved or items left, A abort",
		"beyond: per assumption, seeds where a promised property broke after the run broke it / seeds that broke it",
	} {
		b.WriteString(fit(l, TextWidth) + "\n")
	}
	if len(replays) > 0 {
		b.WriteString("\nreplay the first bug of a row:\n")
		for i, r := range replays {
			b.WriteString(fit(fmt.Sprintf("  [%d] %s", i+1, r), TextWidth) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rowInside pools a row's cells: "✗ 273/300 M+U+L" or "✓ 0/300 (<1.0%)",
// and the replay command of its first bug.
func rowInside(r Row) (string, string) {
	seeds, bugs, livenessOnly := 0, 0, true
	var kinds Kinds
	replay, first := "", int64(-1)
	for _, c := range r.Cells {
		if c.Status() == NotRun {
			continue
		}
		seeds += c.Seeds
		bugs += c.Violations
		kinds.MutualExclusion += c.Kinds.MutualExclusion
		kinds.LostUpdate += c.Kinds.LostUpdate
		kinds.Liveness += c.Kinds.Liveness
		kinds.Aborted += c.Kinds.Aborted
		if c.Violations > 0 && c.Status() != LivenessOnly {
			livenessOnly = false
		}
		if c.Violations > 0 && (first < 0 || c.FirstSeed < first) {
			first, replay = c.FirstSeed, c.Replay
		}
	}
	switch {
	case seeds == 0:
		return "–", ""
	case bugs == 0:
		return fmt.Sprintf("✓ 0/%d (<%s)", seeds, percent(upperBound95(seeds))), ""
	case livenessOnly:
		return fmt.Sprintf("⚠ %d/%d %s", bugs, seeds, kindLetters(kinds)), replay
	}
	return fmt.Sprintf("✗ %d/%d %s", bugs, seeds, kindLetters(kinds)), replay
}

// rowBeyond lists the assumptions whose breach broke a promise:
// "clock-error 12/30 M+U, message-loss 3/33 L", or what held.
func rowBeyond(r Row) string {
	var broken []string
	assumed := 0
	for _, c := range r.Costs {
		if !c.Assumed {
			continue
		}
		assumed++
		if c.Expected > 0 {
			broken = append(broken, fmt.Sprintf("%s %d/%d %s", c.Assumption, c.Expected, c.Broke, kindLetters(c.Kinds)))
		}
	}
	switch {
	case assumed == 0 && len(r.Costs) == 0:
		return ""
	case assumed == 0:
		return "assumes nothing"
	case len(broken) == 0:
		return fmt.Sprintf("nothing broke beyond its %s", Plural(assumed, "assumption"))
	}
	return strings.Join(broken, ", ")
}

// padRunes pads s with spaces to width runes (✓ and ✗ are one rune, three bytes).
func padRunes(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// fit cuts s to width runes, ending in "…" when cut.
func fit(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}
