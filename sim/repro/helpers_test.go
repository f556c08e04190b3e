package repro_test

import (
	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/variants"
)

// variant is the registered variant called name; tests name only real ones.
func variant(name string) algorithm.Variant {
	v, err := variants.Lookup(name)
	if err != nil {
		panic(err)
	}
	return v
}
