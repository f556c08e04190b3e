package compare_test

import (
	"flag"
	"strconv"

	"github.com/locksim/locksim/variants"
)

// long checks the golden that takes minutes, reports/VARIANTS.md.
var long = flag.Bool("long", false, "check reports/VARIANTS.md too (minutes)")

// variant is the registered variant called name; tests name only real ones.
var variant = variants.MustLookup

// variantList is the registered variants called names, in that order.
var variantList = variants.MustLookupAll

func itoa(i int) string { return strconv.Itoa(i) }
