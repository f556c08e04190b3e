package isolate_test

import (
	"time"

	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/sim"
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

// variantList is the registered variants called names, in that order.
func variantList(names ...string) []algorithm.Variant {
	out := make([]algorithm.Variant, len(names))
	for i, n := range names {
		out[i] = variant(n)
	}
	return out
}

func withDuration(c sim.Config, d time.Duration) sim.Config {
	c.Duration = d
	return c
}
