package explore

import (
	"github.com/locksim/locksim/algorithm"
	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim/repro"
)

// Repro is repro.Repro.
type Repro = repro.Repro

// Lookup is repro.Lookup.
type Lookup = repro.Lookup

// Constants of repro.
const (
	ReproFormat = repro.ReproFormat
)

// NewRepro is repro.NewRepro.
func NewRepro(t Target, o Outcome) Repro { return repro.NewRepro(t, o) }

// DecodeRepro is repro.DecodeRepro.
func DecodeRepro(data []byte, lookup Lookup) (Repro, error) { return repro.DecodeRepro(data, lookup) }

// DecodeReproFor is repro.DecodeReproFor.
func DecodeReproFor(data []byte, v algorithm.Variant) (Repro, error) {
	return repro.DecodeReproFor(data, v)
}

// ReadRepro is repro.ReadRepro.
func ReadRepro(path string, lookup Lookup) (Repro, error) { return repro.ReadRepro(path, lookup) }

// WriteRepro is repro.WriteRepro.
func WriteRepro(dir string, r Repro) (string, error) { return repro.WriteRepro(dir, r) }

// ReproPath is repro.ReproPath.
func ReproPath(dir string, r Repro) string { return repro.ReproPath(dir, r) }

// WriteReproAt is repro.WriteReproAt.
func WriteReproAt(path string, r Repro) error { return repro.WriteReproAt(path, r) }

// Replay is repro.Replay.
func Replay(r Repro, opt Options) (Outcome, error) { return repro.Replay(r, opt) }

// PorcupinePath is repro.PorcupinePath.
func PorcupinePath(path string) string { return repro.PorcupinePath(path) }

// WritePages is repro.WritePages.
func WritePages(path string, o Outcome, model string, info reports.PageInfo) error {
	return repro.WritePages(path, o, model, info)
}
