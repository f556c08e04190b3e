package etcdv3

import (
	"testing"

	"github.com/locksim/locksim/locksimtest"
)

// The default check of etcd's own Mutex, wired as its documentation does,
// within the envelope etcd's documentation states (MutexEnvelope). etcd
// 3.5 and later pass it; internal/outoftree runs this same test against
// 3.4.3, whose Mutex returns from a wait after its lease ended, and wants
// it to fail with two holders and a replay line that reproduces them.
func TestMutexCheck(t *testing.T) {
	Check(t, func(c *Client) locksimtest.Locker { return NewMutexLocker(c, "/locksim-lock") },
		locksimtest.Name("etcd-concurrency-mutex"), locksimtest.Envelope(MutexEnvelope()), locksimtest.Seeds(300))
}
