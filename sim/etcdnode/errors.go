package etcdnode

// Error is a gRPC status as etcd's server returns it: Code is the gRPC
// status code (google.golang.org/grpc/codes numbering), Msg etcd's text. A
// shim turns it into status.Error(codes.Code(e.Code), e.Msg), which the
// client's rpctypes maps back to its named errors.
type Error struct {
	Code uint32
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is match a copy of one of the values below.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Msg == e.Msg
}

// gRPC status codes used here (google.golang.org/grpc/codes).
const (
	CodeCanceled           uint32 = 1
	CodeUnknown            uint32 = 2
	CodeInvalidArgument    uint32 = 3
	CodeNotFound           uint32 = 5
	CodeFailedPrecondition uint32 = 9
	CodeOutOfRange         uint32 = 11
)

// etcd's server errors, texts and codes as in api/v3rpc/rpctypes/error.go
// (v3.6.16; the same in 3.4).
var (
	ErrEmptyKey          = &Error{CodeInvalidArgument, "etcdserver: key is not provided"}
	ErrKeyNotFound       = &Error{CodeInvalidArgument, "etcdserver: key not found"}
	ErrValueProvided     = &Error{CodeInvalidArgument, "etcdserver: value is provided"}
	ErrLeaseProvided     = &Error{CodeInvalidArgument, "etcdserver: lease is provided"}
	ErrTooManyOps        = &Error{CodeInvalidArgument, "etcdserver: too many operations in txn request"}
	ErrDuplicateKey      = &Error{CodeInvalidArgument, "etcdserver: duplicate key given in txn request"}
	ErrInvalidSortOption = &Error{CodeInvalidArgument, "etcdserver: invalid sort option"}
	ErrCompacted         = &Error{CodeOutOfRange, "etcdserver: mvcc: required revision has been compacted"}
	ErrFutureRev         = &Error{CodeOutOfRange, "etcdserver: mvcc: required revision is a future revision"}
	ErrLeaseNotFound     = &Error{CodeNotFound, "etcdserver: requested lease not found"}
	ErrLeaseExist        = &Error{CodeFailedPrecondition, "etcdserver: lease already exists"}
	ErrLeaseTTLTooLarge  = &Error{CodeOutOfRange, "etcdserver: too large lease TTL"}
)

// Watch cancel reasons: a WatchResponse carries these texts, not a status.
const (
	// ReasonDuplicateWatchID is mvcc.ErrWatcherDuplicateID.
	ReasonDuplicateWatchID = "mvcc: duplicate watch ID provided on the WatchStream"
	// ReasonEmptyWatchRange is mvcc.ErrEmptyWatcherRange (Key ≥ RangeEnd).
	ReasonEmptyWatchRange = "mvcc: watcher range is empty"
	// ReasonCompacted answers a negative StartRevision (rpctypes.ErrCompacted's text).
	ReasonCompacted = "etcdserver: mvcc: required revision has been compacted"
)
