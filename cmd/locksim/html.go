package main

import (
	"errors"
	"io"

	"locksim/sim/explore"
)

// porcupineHTML renders o with porcupine's visualisation (reports.PorcupineHTML).
func porcupineHTML(w io.Writer, o explore.Outcome, kind string) error {
	return errors.New("the porcupine HTML report is not available yet")
}
