package realredis

import (
	"errors"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/locksim/locksim/sim/redisnode"
)

// conn is one TCP connection between a client and a node, in memory. The
// client side is the net.Conn a go-redis client reads and writes; the node
// side is the coordinator's. A write never blocks: complete commands go to
// the coordinator's inbox. A read blocks until the coordinator has
// delivered reply bytes, the connection was reset or closed, or the read
// deadline passed (on the bubble's clock).
//
// Everything the coordinator does to a conn it stages and publishes only
// after the instant's events are all processed (world.publish), so a client
// that wakes sees every change of that instant or none.
type conn struct {
	w            *world
	client, node int
	id           int // the coordinator's, in dial order; never ordered by

	mu       sync.Mutex
	in       []byte // delivered, not yet read
	out      []byte // written, not yet a whole command
	reset    bool   // the node side reset it (a crash, the run's end)
	closed   bool   // the client closed it
	closedAt int64  // when, true time
	deadline time.Time
	notify   chan struct{} // a reader waits on it; cap 1
	sent     int           // requests posted; replies published: answered
	answered int

	// The coordinator's own, touched only by it.
	dead       bool  // a message was lost: the stream is gone, silently
	lastToNode int64 // FIFO: a request is delivered after the one before it
	lastToCli  int64
}

var (
	errReset  = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	errRefuse = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
)

// timeoutError is what a read past its deadline returns, as the net
// package's does (os.ErrDeadlineExceeded, Timeout true).
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
func (timeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }

func (c *conn) signal() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *conn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if len(c.in) > 0 {
			n := copy(p, c.in)
			c.in = c.in[n:]
			c.mu.Unlock()
			return n, nil
		}
		if c.closed {
			c.mu.Unlock()
			return 0, net.ErrClosed
		}
		if c.reset {
			c.mu.Unlock()
			return 0, errReset
		}
		dl := c.deadline
		c.mu.Unlock()
		if dl.IsZero() {
			<-c.notify
			continue
		}
		wait := time.Until(dl)
		if wait <= 0 {
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}
		}
		t := time.NewTimer(wait)
		select {
		case <-c.notify:
			t.Stop()
		case <-t.C:
		}
	}
}

func (c *conn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return 0, net.ErrClosed
	case c.reset:
		return 0, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}
	}
	c.out = append(c.out, p...)
	posted := false
	for len(c.out) > 0 {
		args, n, err := redisnode.ParseCommand(c.out)
		if err != nil {
			// Redis answers a protocol error and closes the connection.
			r := redisnode.Reply{Kind: redisnode.Error, Str: "ERR Protocol error: " + err.Error()}
			if pe, ok := err.(*redisnode.ProtocolError); ok {
				r = pe.Reply()
			}
			c.in = r.AppendRESP2(c.in)
			c.reset, c.out = true, nil
			c.signal()
			return len(p), nil
		}
		if n == 0 {
			break
		}
		c.out = c.out[n:]
		if len(args) == 0 {
			continue // an empty line: Redis answers nothing
		}
		if r, ok := handshake(args); ok && c.sent == c.answered && !posted {
			// Handshakes are byte-identical on every connection and change
			// no state: answered at once, they need no order.
			c.in = r.AppendRESP2(c.in)
			c.signal()
			continue
		}
		c.sent++
		c.w.post(inboxItem{conn: c, args: args, at: time.Now(), inLock: c.cl().inLock()})
		posted = true
	}
	return len(p), nil
}

// handshake answers what a client sends when it opens a connection.
func handshake(args [][]byte) (redisnode.Reply, bool) {
	if len(args) == 0 {
		return redisnode.Reply{}, false
	}
	switch string(upper(args[0])) {
	case "HELLO":
		// As Redis answers a protocol version it does not speak: clients
		// fall back to RESP2 (and go-redis turns its maintenance
		// notifications off).
		return redisnode.Reply{Kind: redisnode.Error, Str: "NOPROTO unsupported protocol version"}, true
	case "CLIENT":
		if len(args) > 1 {
			switch string(upper(args[1])) {
			case "SETINFO", "SETNAME":
				return redisnode.Reply{Kind: redisnode.Status, Str: "OK"}, true
			}
		}
	}
	return redisnode.Reply{}, false
}

func upper(b []byte) []byte {
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			u := make([]byte, len(b))
			copy(u, b)
			for j := i; j < len(u); j++ {
				if 'a' <= u[j] && u[j] <= 'z' {
					u[j] -= 'a' - 'A'
				}
			}
			return u
		}
	}
	return b
}

func (c *conn) Close() error {
	c.mu.Lock()
	if !c.closed {
		c.closed, c.closedAt = true, c.w.now()
	}
	c.mu.Unlock()
	c.signal()
	return nil
}

func (c *conn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	c.signal()
	return nil
}

// SetWriteDeadline is accepted and ignored: a write never blocks.
func (c *conn) SetWriteDeadline(time.Time) error { return nil }

func (c *conn) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(10, 1, byte(c.client>>8), byte(c.client)), Port: 40000 + c.id%20000}
}

func (c *conn) RemoteAddr() net.Addr { return nodeAddr(c.node) }

// nodeAddr is node i's address: an IP literal, so go-redis resolves
// nothing (a name would reach the real resolver from inside the bubble).
func nodeAddr(i int) *net.TCPAddr { return &net.TCPAddr{IP: net.IPv4(10, 0, 0, byte(i+1)), Port: 6379} }

var errNotServed = errors.New("realredis: not an address locksim serves")
