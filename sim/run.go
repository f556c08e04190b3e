package sim

import "errors"

// Run executes one scenario and returns its history and trace hash.
// (Kernel under construction.)
func Run(s Scenario) (Result, error) {
	if err := s.Config.Validate(); err != nil {
		return Result{}, err
	}
	return Result{}, errors.New("sim: not yet implemented")
}
