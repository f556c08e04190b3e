package explore

import (
	"io"

	"github.com/locksim/locksim/reports"
	"github.com/locksim/locksim/sim/compare"
)

// CompareOptions is compare.CompareOptions.
type CompareOptions = compare.CompareOptions

// CellResult is compare.CellResult.
type CellResult = compare.CellResult

// Constants of compare.
const (
	CompareMinimizeRuns = compare.CompareMinimizeRuns
	RealLibrariesMarker = compare.RealLibrariesMarker
	EtcdMarker          = compare.EtcdMarker
)

// Compare is compare.Compare.
func Compare(opts CompareOptions) (reports.Matrix, error) { return compare.Compare(opts) }

// CompareMarkdown is compare.CompareMarkdown.
func CompareMarkdown(w io.Writer, m reports.Matrix, command string) error {
	return compare.CompareMarkdown(w, m, command)
}
