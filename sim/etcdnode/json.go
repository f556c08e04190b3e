package etcdnode

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Enums read and write their proto names in JSON, as etcd's gateway does;
// reading also accepts the number, which the gateway accepts too.

var (
	eventTypeNames     = []string{"PUT", "DELETE"}
	sortOrderNames     = []string{"NONE", "ASCEND", "DESCEND"}
	sortTargetNames    = []string{"KEY", "VERSION", "CREATE", "MOD", "VALUE"}
	compareResultNames = []string{"EQUAL", "GREATER", "LESS", "NOT_EQUAL"}
	compareTargetNames = []string{"VERSION", "CREATE", "MOD", "VALUE", "LEASE"}
	filterTypeNames    = []string{"NOPUT", "NODELETE"}
)

func enumMarshal(names []string, v int32) ([]byte, error) {
	if v >= 0 && int(v) < len(names) {
		return json.Marshal(names[v])
	}
	return []byte(strconv.Itoa(int(v))), nil // an unknown number is written as a number, as jsonpb does
}

func enumUnmarshal(names []string, b []byte) (int32, error) {
	var name string
	if json.Unmarshal(b, &name) == nil {
		for i, n := range names {
			if n == name {
				return int32(i), nil
			}
		}
		return 0, fmt.Errorf("etcdnode: unknown enum name %q", name)
	}
	var n int32
	err := json.Unmarshal(b, &n)
	return n, err
}

func (v EventType) MarshalJSON() ([]byte, error)  { return enumMarshal(eventTypeNames, int32(v)) }
func (v SortOrder) MarshalJSON() ([]byte, error)  { return enumMarshal(sortOrderNames, int32(v)) }
func (v SortTarget) MarshalJSON() ([]byte, error) { return enumMarshal(sortTargetNames, int32(v)) }
func (v CompareResult) MarshalJSON() ([]byte, error) {
	return enumMarshal(compareResultNames, int32(v))
}
func (v CompareTarget) MarshalJSON() ([]byte, error) {
	return enumMarshal(compareTargetNames, int32(v))
}
func (v FilterType) MarshalJSON() ([]byte, error) { return enumMarshal(filterTypeNames, int32(v)) }

func (v *EventType) UnmarshalJSON(b []byte) error     { return enumInto(eventTypeNames, b, v) }
func (v *SortOrder) UnmarshalJSON(b []byte) error     { return enumInto(sortOrderNames, b, v) }
func (v *SortTarget) UnmarshalJSON(b []byte) error    { return enumInto(sortTargetNames, b, v) }
func (v *CompareResult) UnmarshalJSON(b []byte) error { return enumInto(compareResultNames, b, v) }
func (v *CompareTarget) UnmarshalJSON(b []byte) error { return enumInto(compareTargetNames, b, v) }
func (v *FilterType) UnmarshalJSON(b []byte) error    { return enumInto(filterTypeNames, b, v) }

func enumInto[E ~int32](names []string, b []byte, v *E) error {
	n, err := enumUnmarshal(names, b)
	*v = E(n)
	return err
}
