package exhaust_test

import (
	"flag"

	"github.com/locksim/locksim/variants"
)

// long runs the slow explorations: more faults.
var long = flag.Bool("long", false, "run long explorations (more faults)")

// variant is the registered variant called name; tests name only real ones.
var variant = variants.MustLookup
