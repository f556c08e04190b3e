package faults

import "slices"

// validate checks one event (at path field) against the world's shape;
// clients is the number of client threads the plan runs with.
func (e Event) validate(field string, s Shape, clients int) error {
	if err := notNegative(field+".at", e.At); err != nil {
		return err
	}
	if e.At >= s.Duration {
		return bad(field+".at", "%v is not before the end of the run (%v)", e.At, s.Duration)
	}
	if err := e.checkUnused(field); err != nil {
		return err
	}
	switch e.Kind {
	case Crash:
		if err := inRange(field+".node", e.Node, s.Nodes, "nodes"); err != nil {
			return err
		}
		if e.Wipe {
			// A node that never restarts cannot forget anything.
			return positive(field+".for", e.For)
		}
		return notNegative(field+".for", e.For)
	case Partition:
		if len(e.Nodes) == 0 && len(e.Hosts) == 0 {
			return bad(field, "partition names no nodes and no hosts")
		}
		if err := checkSet(field+".nodes", e.Nodes, s.Nodes, "nodes"); err != nil {
			return err
		}
		if err := checkSet(field+".hosts", e.Hosts, s.Hosts, "hosts"); err != nil {
			return err
		}
		return positive(field+".for", e.For)
	case Clog:
		if err := inRange(field+".node", e.Node, s.Nodes, "nodes"); err != nil {
			return err
		}
		return positive(field+".for", e.For)
	case ClockJump:
		if err := checkProcess(field+".target", field+".index", e.Target, e.Index, s); err != nil {
			return err
		}
		if e.Delta == 0 {
			return bad(field+".delta", "must not be zero")
		}
		return nil
	case Pause:
		if err := inRange(field+".client", e.Client, clients, "clients"); err != nil {
			return err
		}
		if e.Point != "" && e.Point != InAcquire && e.Point != BeforeDelete {
			return bad(field+".point", "%q is not a point a timed pause can wait for (valid: %s, %s)", e.Point, InAcquire, BeforeDelete)
		}
		return positive(field+".for", e.For)
	case Topology:
		if len(e.Nodes) == 0 && e.For <= 0 {
			return bad(field+".nodes", "must name at least one node (an empty topology needs a for: it ends)")
		}
		if e.Point != "" && e.Point != WhileHeld {
			return bad(field+".point", "%q is not a point a topology change can wait for (valid: %s)", e.Point, WhileHeld)
		}
		if err := notNegative(field+".for", e.For); err != nil {
			return err
		}
		if err := notNegative(field+".spread", e.Spread); err != nil {
			return err
		}
		return checkSet(field+".nodes", e.Nodes, s.Nodes, "nodes")
	}
	return bad(field+".kind", "%q unknown (valid: %s, %s, %s, %s, %s, %s)",
		e.Kind, Crash, Partition, Clog, ClockJump, Pause, Topology)
}

// checkUnused rejects fields the event's kind does not read: a value there
// is a mistake (a pause with a node, a clog with a duration in delta) that
// would otherwise be silently ignored.
func (e Event) checkUnused(field string) error {
	used := usedFields(e.Kind)
	set := []struct {
		name string
		on   bool
	}{
		{"node", e.Node != 0}, {"client", e.Client != 0}, {"target", e.Target != ""},
		{"index", e.Index != 0}, {"nodes", len(e.Nodes) > 0}, {"hosts", len(e.Hosts) > 0},
		{"for", e.For != 0}, {"delta", e.Delta != 0}, {"wipe", e.Wipe}, {"one_way", e.OneWay},
		{"point", e.Point != ""}, {"spread", e.Spread != 0}, {"black_hole", e.BlackHole},
	}
	for _, f := range set {
		if f.on && !slices.Contains(used, f.name) {
			return bad(field+"."+f.name, "is set but a %s event does not use it", e.Kind)
		}
	}
	return nil
}

// usedFields lists the JSON fields each kind reads besides at and kind.
// Unknown kinds report every field as used so the kind error comes first.
func usedFields(k Kind) []string {
	switch k {
	case Crash:
		return []string{"node", "for", "wipe", "black_hole"}
	case Partition:
		return []string{"nodes", "hosts", "for", "one_way"}
	case Clog:
		return []string{"node", "for"}
	case ClockJump:
		return []string{"target", "index", "delta"}
	case Pause:
		return []string{"client", "for", "point"}
	case Topology:
		return []string{"nodes", "point", "for", "spread"}
	}
	return []string{"node", "client", "target", "index", "nodes", "hosts", "for", "delta", "wipe", "one_way", "point", "spread", "black_hole"}
}
