// Package redislocks wires the Redis locks people deploy, unmodified, for
// locksimtest.CheckRedis: redsync v4 over N masters, bsm/redislock over one
// node, and the naive go-redis lock (SET NX PX, then DEL without an owner
// check). It is a module of its own, so that the libraries' versions are
// its own and not forced on locksim's users; its tests are the verdicts
// in reports/VARIANTS.md. Their envelopes are locksimtest's:
// RedlockEnvelope for Redsync over three masters or more, OneNodeEnvelope
// for Redislock and Naive on one node (CheckRedis states them by default).
package redislocks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/locksim/locksim/locksimtest"
)

// redsyncLock is redsync v4 as its README wires it, over one go-redis
// client per master; its lock values and retry delays come from the
// client's seeded stream, so that runs replay.
// Redsync builds one client's redsync lock.
func Redsync(c *locksimtest.RedisClient) locksimtest.Locker { return newRedsync(c) }

type redsyncLock struct{ m *redsync.Mutex }

func newRedsync(c *locksimtest.RedisClient) locksimtest.Locker {
	pools := make([]redsyncredis.Pool, len(c.Nodes))
	for i, n := range c.Nodes {
		pools[i] = goredis.NewPool(n)
	}
	m := redsync.New(pools...).NewMutex("resource-lock",
		redsync.WithExpiry(c.TTL),
		redsync.WithGenValueFunc(func() (string, error) { return fmt.Sprintf("%s-%016x", c.Name, c.Rand.Uint64()), nil }),
		redsync.WithRetryDelayFunc(func(int) time.Duration { return time.Duration(50+c.Rand.IntN(200)) * time.Millisecond }))
	return redsyncLock{m}
}

func (l redsyncLock) Lock(ctx context.Context) (time.Time, error) {
	err := l.m.LockContext(ctx)
	return l.m.Until(), err
}

func (l redsyncLock) Unlock(ctx context.Context) error {
	_, err := l.m.UnlockContext(ctx)
	return err
}

func (l redsyncLock) Extend(ctx context.Context) (time.Time, error) {
	ok, err := l.m.ExtendContext(ctx)
	if err == nil && !ok {
		err = errors.New("redsync: extend failed")
	}
	return l.m.Until(), err
}

// redislockLock is bsm/redislock over one node, its obtain retried every
// 100 ms.
// Redislock builds one client's bsm/redislock lock, on the first node.
func Redislock(c *locksimtest.RedisClient) locksimtest.Locker { return newRedislock(c) }

type redislockLock struct {
	c    *locksimtest.RedisClient
	cl   *redislock.Client
	lock *redislock.Lock
}

func newRedislock(c *locksimtest.RedisClient) locksimtest.Locker {
	return &redislockLock{c: c, cl: redislock.New(c.Nodes[0])}
}

func (l *redislockLock) Lock(ctx context.Context) (time.Time, error) {
	// One obtain at a time, retried here, so that the validity counts from
	// the attempt that got the lock, not from the first one.
	for {
		start := time.Now()
		lock, err := l.cl.Obtain(ctx, "resource-lock", l.c.TTL, &redislock.Options{
			Token: fmt.Sprintf("%s-%016x", l.c.Name, l.c.Rand.Uint64()),
		})
		if err == nil {
			l.lock = lock
			return start.Add(validity(l.c.TTL)), nil
		}
		if !errors.Is(err, redislock.ErrNotObtained) && ctx.Err() != nil {
			return time.Time{}, err
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

func (l *redislockLock) Unlock(ctx context.Context) error { return l.lock.Release(ctx) }

func (l *redislockLock) Extend(ctx context.Context) (time.Time, error) {
	start := time.Now()
	if err := l.lock.Refresh(ctx, l.c.TTL, nil); err != nil {
		return time.Time{}, err
	}
	return start.Add(validity(l.c.TTL)), nil
}

// validity is how long a lock obtained at an instant may be used: redislock
// leaves it to its user, and the node's clock may run fast. Without this
// margin (Redlock's: 1% of the TTL plus 2 ms, as redsync takes it), a node
// clock 0.95% fast expired the key while its holder still used it (seed
// 677 of class all: two holders).
func validity(ttl time.Duration) time.Duration { return ttl - ttl/100 - 2*time.Millisecond }

// naiveLock is the lock people write first over go-redis: SET NX PX, and
// DEL to release, without checking that the lock is still theirs.
// Naive builds one client's naive lock, on the first node.
func Naive(c *locksimtest.RedisClient) locksimtest.Locker { return newNaive(c) }

type naiveLock struct {
	c     *locksimtest.RedisClient
	tries int
}

func newNaive(c *locksimtest.RedisClient) locksimtest.Locker { return &naiveLock{c: c} }

func (l *naiveLock) Lock(ctx context.Context) (time.Time, error) {
	for {
		l.tries++
		start := time.Now()
		ok, err := l.c.Nodes[0].SetNX(ctx, "resource-lock", fmt.Sprintf("%s#%d", l.c.Name, l.tries), l.c.TTL).Result()
		if err == nil && ok {
			return start.Add(l.c.TTL), nil
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

func (l *naiveLock) Unlock(ctx context.Context) error {
	return l.c.Nodes[0].Del(ctx, "resource-lock").Err()
}
