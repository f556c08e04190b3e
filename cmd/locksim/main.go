// Command locksim runs lock algorithms in a deterministic simulated world
// and breaks them: run one scenario, sweep many seeds, replay and minimise a
// failure, compare variants. It is package cli's Main with the built-in
// variants only; a program of your own can call cli.Main with your locks.
package main

import "github.com/locksim/locksim/cli"

func main() { cli.Main() }
