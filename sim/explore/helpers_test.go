package explore

import "github.com/locksim/locksim/variants"

// variant is the registered variant called name; tests name only real ones.
var variant = variants.MustLookup

// variantList is the registered variants called names, in that order.
var variantList = variants.MustLookupAll
