package redisnode

import (
	"errors"
	"fmt"
	"math"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// What keeps scripts deterministic and bounded: an instruction budget in place
// of Redis's wall-clock busy-script timeout, and Redis's own rand48 behind
// math.random in place of gopher-lua's use of Go's global generator.

// mathRandom is Redis's math.random over its rand48 (deps/lua/src/lmathlib.c).
func (e *luaEngine) mathRandom(L *lua.LState) int {
	r := float64(e.rand.next()%rand48Max) / float64(rand48Max)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		lo, hi := L.CheckInt(1), L.CheckInt(2)
		if lo > hi {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(hi-lo+1)) + float64(lo)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (e *luaEngine) mathRandomSeed(L *lua.LState) int {
	e.rand.seed(int32(L.CheckInt(1)))
	return 0
}

// stepBudget is the context gopher-lua consults before each VM instruction:
// Done turns closed once the script has used its instructions. It counts, it
// never reads a clock, so where a script stops is deterministic.
type stepBudget struct {
	limit, left int64
	closed      chan struct{}
}

var errStepBudget = errors.New("script exceeded the node's Lua instruction budget")

func newStepBudget(limit int64) *stepBudget {
	b := &stepBudget{limit: limit, closed: make(chan struct{})}
	close(b.closed)
	return b
}

func (b *stepBudget) reset() { b.left = b.limit }

func (b *stepBudget) Done() <-chan struct{} {
	b.left--
	if b.left < 0 {
		return b.closed
	}
	return nil // a nil channel is never ready: the VM runs on
}

func (b *stepBudget) Err() error {
	if b.left < 0 {
		return fmt.Errorf("%w (%d instructions; Redis would keep running it until SCRIPT KILL)", errStepBudget, b.limit)
	}
	return nil
}

func (b *stepBudget) Deadline() (time.Time, bool) { return time.Time{}, false }

func (b *stepBudget) Value(any) any { return nil }

// rand48 is Redis's redisLrand48 (src/rand.c): the 48-bit LCG of POSIX
// lrand48, a = 0x5DEECE66D, c = 0xB, returning the top 31 bits.
type rand48 struct{ x uint64 }

const rand48Max = 1<<31 - 1 // REDIS_LRAND48_MAX (INT32_MAX)

// newRand48 is the state Redis starts with (X2 X1 X0 = 0x1234 0xABCD 0x330E).
func newRand48() rand48 { return rand48{x: 0x1234ABCD330E} }

func (r *rand48) seed(s int32) { r.x = uint64(uint32(s))<<16 | 0x330E }

func (r *rand48) next() int32 {
	r.x = (0x5DEECE66D*r.x + 0xB) & (1<<48 - 1)
	return int32(r.x >> 17)
}
