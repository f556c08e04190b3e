package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/locksim/locksim/variants"
)

func variantsCmd(args []string, stdout, stderr io.Writer) int {
	f := newFlags("variants", "locksim variants [-v]",
		"Lists the registered lock algorithms, one line each on what they change. -v adds the\n"+
			"assumptions under which each claims to be safe, and the fixes its family knows\n"+
			"(which -only and -why use).",
		"locksim variants",
		"locksim variants -v")
	verbose := f.Bool("v", false, "also print each variant's assumptions")
	if code, done := f.parseNone(args, stdout, stderr); done {
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, v := range variants.All() {
		fmt.Fprintf(tw, "%s\t%s\n", v.Name, v.Summary)
		if *verbose {
			fmt.Fprintf(tw, "\t  envelope: %s\n", v.Envelope)
			if len(v.Fixes) > 0 {
				fmt.Fprintf(tw, "\t  fixes (-only, -why): %s\n", v.FixNames())
			}
		}
	}
	tw.Flush()
	return exitOK
}
