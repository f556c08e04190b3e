package redisnode

import (
	"regexp"
	"slices"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// model is the plain specification the node is checked against: a map of
// strings with absolute expiries in ms, expired entries dropped when touched.
type model struct {
	vals   map[string]string
	expire map[string]int64 // absent: no expiry
	nowNs  int64
}

func (m *model) nowMs() int64 { return floorDiv(m.nowNs, 1e6) }

// live reports key's value, forgetting it if it expired ("gone after its ms").
func (m *model) live(key string) (string, bool) {
	v, ok := m.vals[key]
	if !ok {
		return "", false
	}
	if at, has := m.expire[key]; has && m.nowMs() > at {
		delete(m.vals, key)
		delete(m.expire, key)
		return "", false
	}
	return v, true
}

func (m *model) put(key, val string, expireAt int64, hasExpiry bool) {
	m.vals[key] = val
	delete(m.expire, key)
	if hasExpiry {
		m.expire[key] = expireAt
	}
}

var strictInteger = regexp.MustCompile(`^(0|-?[1-9][0-9]*)$`)

func modelInt(s string) (int64, bool) {
	if !strictInteger.MatchString(s) {
		return 0, false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// modelRange is GETRANGE as a set of indexes: negative indexes count from the
// end, both clamp at 0, the end clamps at the last byte.
func modelRange(s string, start, end int64) string {
	size := int64(len(s))
	if start < 0 && end < 0 && start > end {
		return ""
	}
	norm := func(i int64) int64 {
		if i < 0 {
			i += size
		}
		return max(i, 0)
	}
	lo, hi := norm(start), norm(end)
	out := []byte{}
	for i := int64(0); i < size; i++ {
		if lo <= i && i <= hi {
			out = append(out, s[i])
		}
	}
	return string(out)
}

func bulkOrNil(v string, ok bool) string {
	if !ok {
		return "(nil)"
	}
	return strconv.Quote(v)
}

func TestNodeAgainstModel(t *testing.T) {
	keys := rapid.SampledFrom([]string{"a", "b", "c"})
	values := rapid.SampledFrom([]string{"x", "yy", "1", "-5", "007", "9223372036854775807", "hello world"})
	ttls := rapid.Int64Range(1, 300)
	rapid.Check(t, func(rt *rapid.T) {
		n := New()
		m := &model{vals: map[string]string{}, expire: map[string]int64{}, nowNs: 1_000 * ms}
		do := func(want string, args ...string) {
			b := make([][]byte, len(args))
			for i, a := range args {
				b[i] = []byte(a)
			}
			if got := n.Do(m.nowNs, b).String(); got != want {
				rt.Fatalf("at %dns %q: node %s, model %s", m.nowNs, args, got, want)
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"tick": func(rt *rapid.T) {
				// Mostly forward, sometimes back: the node clock may step either way.
				m.nowNs += rapid.Int64Range(-50*ms, 200*ms).Draw(rt, "dt") + rapid.Int64Range(0, ms-1).Draw(rt, "dtns")
			},
			"set": func(rt *rapid.T) {
				k, v := keys.Draw(rt, "k"), values.Draw(rt, "v")
				mode := rapid.SampledFrom([]string{"", "NX", "XX"}).Draw(rt, "mode")
				withPX := rapid.Bool().Draw(rt, "px")
				args := []string{"SET", k, v}
				if mode != "" {
					args = append(args, mode)
				}
				var px int64
				if withPX {
					px = ttls.Draw(rt, "ttl")
					args = append(args, "PX", strconv.FormatInt(px, 10))
				}
				_, exists := m.live(k)
				if (mode == "NX" && exists) || (mode == "XX" && !exists) {
					do("(nil)", args...)
					return
				}
				m.put(k, v, m.nowMs()+px, withPX)
				do("OK", args...)
			},
			"get": func(rt *rapid.T) {
				k := keys.Draw(rt, "k")
				do(bulkOrNil(m.live(k)), "GET", k)
			},
			"del": func(rt *rapid.T) {
				k := keys.Draw(rt, "k")
				_, ok := m.live(k)
				delete(m.vals, k)
				delete(m.expire, k)
				want := "(integer) 0"
				if ok {
					want = "(integer) 1"
				}
				do(want, "DEL", k)
			},
			"pexpire": func(rt *rapid.T) {
				k, ttl := keys.Draw(rt, "k"), rapid.Int64Range(-10, 300).Draw(rt, "ttl")
				v, ok := m.live(k)
				switch {
				case !ok:
					do("(integer) 0", "PEXPIRE", k, strconv.FormatInt(ttl, 10))
				case ttl <= 0:
					delete(m.vals, k)
					delete(m.expire, k)
					do("(integer) 1", "PEXPIRE", k, strconv.FormatInt(ttl, 10))
				default:
					m.put(k, v, m.nowMs()+ttl, true)
					do("(integer) 1", "PEXPIRE", k, strconv.FormatInt(ttl, 10))
				}
			},
			"pttl": func(rt *rapid.T) {
				k := keys.Draw(rt, "k")
				_, ok := m.live(k)
				at, has := m.expire[k]
				want := "(integer) -2"
				switch {
				case ok && !has:
					want = "(integer) -1"
				case ok:
					want = "(integer) " + strconv.FormatInt(at-m.nowMs(), 10)
				}
				do(want, "PTTL", k)
			},
			"getrange": func(rt *rapid.T) {
				k := keys.Draw(rt, "k")
				start, end := rapid.Int64Range(-15, 15).Draw(rt, "start"), rapid.Int64Range(-15, 15).Draw(rt, "end")
				v, _ := m.live(k)
				do(strconv.Quote(modelRange(v, start, end)), "GETRANGE", k, strconv.FormatInt(start, 10), strconv.FormatInt(end, 10))
			},
			"msetnx": func(rt *rapid.T) {
				k1, k2 := keys.Draw(rt, "k1"), keys.Draw(rt, "k2")
				v1, v2 := values.Draw(rt, "v1"), values.Draw(rt, "v2")
				_, e1 := m.live(k1)
				_, e2 := m.live(k2)
				if e1 || e2 {
					do("(integer) 0", "MSETNX", k1, v1, k2, v2)
					return
				}
				m.put(k1, v1, 0, false)
				m.put(k2, v2, 0, false)
				do("(integer) 1", "MSETNX", k1, v1, k2, v2)
			},
			"incr": func(rt *rapid.T) {
				k := keys.Draw(rt, "k")
				v, ok := m.live(k)
				cur := int64(0)
				if ok {
					i, valid := modelInt(v)
					if !valid {
						do("(error) ERR value is not an integer or out of range", "INCR", k)
						return
					}
					cur = i
				}
				if cur == 1<<63-1 {
					do("(error) ERR increment or decrement would overflow", "INCR", k)
					return
				}
				at, has := m.expire[k]
				m.put(k, strconv.FormatInt(cur+1, 10), at, has)
				do("(integer) "+strconv.FormatInt(cur+1, 10), "INCR", k)
			},
			"": func(rt *rapid.T) {
				// Invariant: the node's live keys are the model's, value and expiry.
				var want []Entry
				for k, v := range m.vals {
					at, has := m.expire[k]
					if has && m.nowMs() > at {
						continue
					}
					e := Entry{Key: k, Value: v}
					if has {
						e.ExpireAt = at * 1e6
					}
					want = append(want, e)
				}
				slices.SortFunc(want, func(a, b Entry) int {
					if a.Key < b.Key {
						return -1
					}
					return 1
				})
				if got := n.Keys(m.nowNs); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					rt.Fatalf("at %dns: node keys %+v, model %+v", m.nowNs, got, want)
				}
			},
		})
	})
}
