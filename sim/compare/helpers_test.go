package compare_test

import (
	"flag"
	"strconv"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/variants"
)

// long checks the golden that takes minutes, reports/VARIANTS.md.
var long = flag.Bool("long", false, "check reports/VARIANTS.md too (minutes)")

// variant is the registered variant called name; tests name only real ones.
func variant(name string) algorithm.Variant {
	v, err := variants.Lookup(name)
	if err != nil {
		panic(err)
	}
	return v
}

// variantList is the registered variants called names, in that order.
func variantList(names ...string) []algorithm.Variant {
	out := make([]algorithm.Variant, len(names))
	for i, n := range names {
		out[i] = variant(n)
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }
