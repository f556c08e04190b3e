package sweep_test

import "github.com/locksim/locksim/variants"

// variant is the registered variant called name; tests name only real ones.
var variant = variants.MustLookup
