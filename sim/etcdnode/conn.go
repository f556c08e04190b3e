package etcdnode

// The connection a client library has to the member, as a shim over
// etcd's generated gRPC clients sees it: requests, answers and stream
// messages in this package's types. The simulator implements it
// (sim/realredis carries every message through its network and faults);
// the etcdv3 module's shim turns it into etcd's pb clients.

import "context"

// Conn is one client's gRPC connection to the member, as a shim over
// etcd's generated clients sees it. All its methods may be called from any
// goroutine of the client library.
type Conn interface {
	// Call sends one unary request and waits for the answer: req is one
	// of *RangeRequest, PutRequest, DeleteRangeRequest,
	// TxnRequest, LeaseGrantRequest, LeaseRevokeRequest,
	// LeaseTimeToLiveRequest or LeaseLeasesRequest, and the answer the
	// matching *..Response. Every error is an *Error, a
	// gRPC status: etcd's own (ErrLeaseNotFound), Unavailable when the
	// connection broke, Canceled or DeadlineExceeded when ctx ended first.
	Call(ctx context.Context, req any) (any, error)
	// Open opens a bidirectional stream of kind, which ends with ctx.
	Open(ctx context.Context, kind StreamKind) (Stream, error)
}

// StreamKind is which of etcd's streaming RPCs a stream is.
type StreamKind uint8

const (
	// LeaseKeepAlive carries *LeaseKeepAliveRequest up and
	// *LeaseKeepAliveResponse down.
	LeaseKeepAlive StreamKind = iota + 1
	// Watch carries *WatchRequest up and *WatchResponse down.
	Watch
)

func (k StreamKind) String() string {
	switch k {
	case LeaseKeepAlive:
		return "lease-keepalive"
	case Watch:
		return "watch"
	}
	return "stream?"
}

// Stream is one open stream of a Conn.
type Stream interface {
	// Send sends one message; an error (an *Error, or io.EOF
	// when the stream ended) means it was not sent.
	Send(msg any) error
	// Recv waits for the next message; io.EOF when the member ended the
	// stream, an *Error otherwise (Unavailable: the connection
	// broke; Canceled: the stream's context ended).
	Recv() (any, error)
	// CloseSend says the client sends no more.
	CloseSend() error
}

// WatchRequest is etcdserverpb.WatchRequest: exactly one field is set.
type WatchRequest struct {
	Create   *WatchCreateRequest
	Cancel   *WatchCancelRequest
	Progress bool // a WatchProgressRequest
}

// WatchCancelRequest is etcdserverpb.WatchCancelRequest.
type WatchCancelRequest struct {
	WatchId int64
}
