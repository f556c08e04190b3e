package cli

import (
	"fmt"
	"io"

	"github.com/locksim/locksim/model"
	"github.com/locksim/locksim/sim/cause"
)

// printCauses prints failing seeds grouped by the cause of each kind of
// violation: how many, the first seed, the first seed that shows that
// cause alone, and their replay lines.
//
// stuck, when not nil, says why nobody got the lock in a seed's first
// wait (Outcome.Stuck), for the groups of liveness violations: what the
// run's own state shows beside the fixes that cure it.
func printCauses(w io.Writer, as []cause.Attribution, of int, replay func(seed uint64) string, stuck func(seed uint64) string) {
	what := "fixes the variant's family knows"
	if len(as) > 0 && as[0].ByWorld {
		what = "world changes (the variant declares no fixes)"
	}
	fmt.Fprintf(w, "\ncauses of %d failing seeds, by counterfactual replay with each of the %s:\n", len(as), what)
	if len(as) < of {
		fmt.Fprintf(w, "  (the first %d of %d failing seeds; -why N attributes more)\n", len(as), of)
	}
	replays := 0
	for _, a := range as {
		replays += a.Replays
	}
	for _, g := range cause.Groups(as) {
		fmt.Fprintf(w, "  %-16s %-40s %5d seeds\n", g.Kind, g.Cause, len(g.Seeds))
		alone := ""
		if g.Pure == g.Seeds[0] {
			alone = "   (its cause alone)"
		}
		fmt.Fprintf(w, "      first:      %s%s\n", replay(g.Seeds[0]), alone)
		if g.Kind == model.Liveness && stuck != nil {
			if why := stuck(g.Seeds[0]); why != "" {
				fmt.Fprintf(w, "      stuck:      %s\n", why)
			}
		}
		switch {
		case g.Pure != 0 && g.Pure != g.Seeds[0]:
			fmt.Fprintf(w, "      first pure: %s\n", replay(g.Pure))
		case g.Pure == 0 && g.Cause != cause.Unattributed:
			fmt.Fprintf(w, "      no seed shows it alone here (its fix together with others, or with another bug)\n")
		}
	}
	if len(as) > 0 {
		fmt.Fprintf(w, "  %d replays, %.1f per failing seed; a cause of several fixes joined by & needed each bug, by + only all of them together remove it\n",
			replays, float64(replays)/float64(len(as)))
	}
}

// printAttribution prints one seed's attribution.
func printAttribution(w io.Writer, a cause.Attribution) {
	fmt.Fprintf(w, "why:     %s\n", a)
}
