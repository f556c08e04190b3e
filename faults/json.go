package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Encode writes p as indented JSON, the form repro files carry.
// Decode(Encode(p)) equals p for every plan whose empty lists are nil
// (generated plans always are).
func Encode(p Plan) ([]byte, error) {
	return json.MarshalIndent(p, "", "  ")
}

// Decode reads one JSON plan strictly: unknown fields and trailing data are
// errors, so a typo in a hand-written plan is not silently a fault-free run.
// It checks syntax only; call Plan.Validate with the world's shape next.
func Decode(data []byte) (Plan, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return Plan{}, fmt.Errorf("plan: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Plan{}, fmt.Errorf("plan: unexpected data after the plan at offset %d", dec.InputOffset())
	}
	return p, nil
}

// planFields has Plan's fields without its methods, so UnmarshalJSON can
// decode into it without recursing.
type planFields Plan

// UnmarshalJSON decodes strictly (unknown fields are errors) wherever a
// Plan is embedded, e.g. in a repro file, and stores empty lists as nil so
// that decoding is the exact inverse of encoding.
func (p *Plan) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil // json's convention: null leaves the value alone
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f planFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	*p = Plan(f)
	p.normalize()
	return nil
}

// normalize turns empty lists into nil: encoding omits both alike.
func (p *Plan) normalize() {
	if len(p.Clocks) == 0 {
		p.Clocks = nil
	}
	if len(p.Events) == 0 {
		p.Events = nil
	}
	if len(p.Zones) == 0 {
		p.Zones = nil
	}
	for i := range p.Events {
		if len(p.Events[i].Nodes) == 0 {
			p.Events[i].Nodes = nil
		}
		if len(p.Events[i].Hosts) == 0 {
			p.Events[i].Hosts = nil
		}
	}
}
