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
// It refuses more than MaxPlanBytes, and anything but one JSON object.
func Decode(data []byte) (Plan, error) {
	if err := CheckJSONObject(data, MaxPlanBytes); err != nil {
		return Plan{}, fmt.Errorf("plan: %w", err)
	}
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

// CheckJSONObject reports why data cannot be one JSON object of at most
// max bytes: too large, empty, or something else than an object (null,
// a list, a number), which a decoder would otherwise take as the zero value
// or as a type error deep inside.
func CheckJSONObject(data []byte, max int) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(data) > max:
		return fmt.Errorf("%d bytes is more than the %s it may hold", len(data), Bytes(int64(max)))
	case len(trimmed) == 0:
		return errors.New("empty, not a JSON object")
	case trimmed[0] != '{':
		return fmt.Errorf("not a JSON object (it starts with %q)", firstToken(trimmed))
	}
	return nil
}

// firstToken is the start of data, up to 12 bytes, for an error message.
func firstToken(data []byte) string {
	if len(data) > 12 {
		data = data[:12]
	}
	return string(data)
}

// Bytes writes a size the way the limits are given: 32 MiB, 64 KiB, 100 B.
func Bytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
