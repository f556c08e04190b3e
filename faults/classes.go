package faults

import (
	"fmt"
	"strings"
)

// Allowed is a set of fault classes, as a bitset indexed by position in
// Classes (so nothing iterates a map and every listing is in matrix order).
// ClassAll stands for every class; ClassNone allows nothing.
type Allowed uint32

// classBit is c's bit, or 0 for a name that is not a class.
func classBit(c Class) Allowed {
	for i, known := range Classes {
		if known == c {
			return 1 << i
		}
	}
	return 0
}

// everyClass has the bit of every class that allows something.
var everyClass = func() Allowed {
	var a Allowed
	for _, c := range Classes {
		if c != ClassNone && c != ClassAll {
			a |= classBit(c)
		}
	}
	return a
}()

// Allow is the set of the given classes; ClassAll expands to every class,
// ClassNone and unknown names add nothing (ParseClasses rejects unknown names).
func Allow(classes ...Class) Allowed {
	var a Allowed
	for _, c := range classes {
		switch c {
		case ClassAll:
			a |= everyClass
		case ClassNone:
		default:
			a |= classBit(c)
		}
	}
	return a
}

// Has reports whether faults of class c are allowed. ClassAll is had when
// every class is; ClassNone is had only by the empty set.
func (a Allowed) Has(c Class) bool {
	switch c {
	case ClassAll:
		return a&everyClass == everyClass
	case ClassNone:
		return a == 0
	}
	bit := classBit(c)
	return bit != 0 && a&bit != 0
}

// Classes lists the allowed classes in matrix order, without ClassAll.
func (a Allowed) Classes() []Class {
	var out []Class
	for _, c := range Classes {
		if c != ClassNone && c != ClassAll && a&classBit(c) != 0 {
			out = append(out, c)
		}
	}
	return out
}

// String is the classes as ParseClasses reads them ("none" when empty).
func (a Allowed) String() string {
	cs := a.Classes()
	if len(cs) == 0 {
		return string(ClassNone)
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = string(c)
	}
	return strings.Join(names, ",")
}

// Faults lists the names of the faults of the world these classes allow
// (see Plan.Faults), without the deployment lapses a plan may add to break
// an envelope on purpose.
func (a Allowed) Faults() []string {
	var out []string
	for f := feature(0); f < numWorldFeatures; f++ {
		if a.permits(f) {
			out = append(out, f.String())
		}
	}
	return out
}

// permits reports whether feature f's class is allowed.
func (a Allowed) permits(f feature) bool { return a&classBit(features[f].class) != 0 }

// Check reports the first part of p that these classes do not allow,
// naming the field: a generator given these classes must never produce it.
func (a Allowed) Check(p Plan) error {
	for _, u := range p.uses() {
		if !a.permits(u.feature) {
			return &PlanError{Field: u.field, Reason: fmt.Sprintf("(%s) needs class %q, not in %s",
				u.feature, features[u.feature].class, a)}
		}
	}
	return nil
}

// ParseClasses reads a comma-separated list of class names ("loss,crash").
// Blanks around names are ignored; an empty string is no class at all.
func ParseClasses(s string) ([]Class, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Class
	for _, name := range strings.Split(s, ",") {
		c := Class(strings.TrimSpace(name))
		if classBit(c) == 0 {
			return nil, fmt.Errorf("faults: unknown class %q (valid: %s)", c, classNames())
		}
		out = append(out, c)
	}
	return out, nil
}

// classNames lists every class name for error messages.
func classNames() string {
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
