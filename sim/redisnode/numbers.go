package redisnode

import (
	"math"
	"strconv"
)

// parseStrictInt is Redis's string2ll: the only integers Redis accepts, in
// arguments and in stored values alike. No sign but a leading '-', no leading
// zeros, no "-0", no spaces, at most 20 bytes, within int64.
func parseStrictInt(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) >= 21 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
		if len(s) == 0 {
			return 0, false
		}
	}
	if s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return int64(-v), true // -(1<<63) wraps to MinInt64, as intended
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

func parseStrictIntString(s string) (int64, bool) {
	// The conversion does not allocate: the compiler sees it is read-only.
	return parseStrictInt([]byte(s))
}

// formatLuaNumber is how Redis 7.0 turns a Lua number argument of redis.call
// into a string: C's "%.17g" (so 0.1 is "0.10000000000000001", 3.0 is "3").
func formatLuaNumber(f float64) string { return formatCNumber(f, 17) }

// formatCNumber is C's "%.<digits>g" as glibc prints it.
func formatCNumber(f float64, digits int) string {
	switch {
	case math.IsNaN(f):
		// glibc prints the NaN that 0/0 makes, which has its sign bit set, as "-nan".
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', digits, 64)
}

// luaNumberToInt is C's (long long) cast of a Lua number, as Redis uses for a
// number a script returns: truncation toward zero. Out of range and NaN are
// undefined in C; x86-64 (where Redis runs) yields INT64_MIN, and so do we on
// every platform, so that replies do not depend on the machine.
func luaNumberToInt(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// floorDiv divides rounding toward minus infinity: a node clock before the
// epoch still maps to the millisecond that contains it.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
