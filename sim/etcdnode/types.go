package etcdnode

// The messages below mirror the subset of etcd's v3 protobuf messages
// (etcdserverpb and mvccpb at v3.6.16) that clientv3 and concurrency.Mutex
// use. Field names, types and enum numbers are etcd's, so a shim converts
// field by field and enums by a cast. Two shapes differ: Compare carries its
// target value in plain fields instead of pb's oneof, and RequestOp /
// ResponseOp hold one pointer per kind instead of a oneof wrapper.
//
// The JSON tags are the proto field names, and 64-bit integers are quoted,
// as etcd's grpc-gateway (jsonpb, OrigName) writes them; enums read and
// write their names. So the same structs encode requests for a real etcd's
// JSON gateway and decode its answers.

// ResponseHeader is etcdserverpb.ResponseHeader.
type ResponseHeader struct {
	ClusterId uint64 `json:"cluster_id,omitempty,string"`
	MemberId  uint64 `json:"member_id,omitempty,string"`
	Revision  int64  `json:"revision,omitempty,string"`
	RaftTerm  uint64 `json:"raft_term,omitempty,string"` // uint64, as in pb
}

// KeyValue is mvccpb.KeyValue.
type KeyValue struct {
	Key            []byte `json:"key,omitempty"`
	CreateRevision int64  `json:"create_revision,omitempty,string"`
	ModRevision    int64  `json:"mod_revision,omitempty,string"`
	Version        int64  `json:"version,omitempty,string"`
	Value          []byte `json:"value,omitempty"`
	Lease          int64  `json:"lease,omitempty,string"`
}

// EventType is mvccpb.Event_EventType.
type EventType int32

const (
	EventPut    EventType = 0 // mvccpb.PUT
	EventDelete EventType = 1 // mvccpb.DELETE
)

// Event is mvccpb.Event. A DELETE event's Kv holds only Key and ModRevision
// (the revision of the deletion), as etcd's.
type Event struct {
	Type   EventType `json:"type,omitempty"`
	Kv     *KeyValue `json:"kv,omitempty"`
	PrevKv *KeyValue `json:"prev_kv,omitempty"`
}

// SortOrder is etcdserverpb.RangeRequest_SortOrder.
type SortOrder int32

const (
	SortNone    SortOrder = 0
	SortAscend  SortOrder = 1
	SortDescend SortOrder = 2
)

// SortTarget is etcdserverpb.RangeRequest_SortTarget.
type SortTarget int32

const (
	SortByKey     SortTarget = 0
	SortByVersion SortTarget = 1
	SortByCreate  SortTarget = 2
	SortByMod     SortTarget = 3
	SortByValue   SortTarget = 4
)

// RangeRequest is etcdserverpb.RangeRequest. RangeEnd empty: the single key
// Key; "\x00": every key ≥ Key; otherwise [Key, RangeEnd).
type RangeRequest struct {
	Key               []byte     `json:"key,omitempty"`
	RangeEnd          []byte     `json:"range_end,omitempty"`
	Limit             int64      `json:"limit,omitempty,string"`
	Revision          int64      `json:"revision,omitempty,string"`
	SortOrder         SortOrder  `json:"sort_order,omitempty"`
	SortTarget        SortTarget `json:"sort_target,omitempty"`
	Serializable      bool       `json:"serializable,omitempty"`
	KeysOnly          bool       `json:"keys_only,omitempty"`
	CountOnly         bool       `json:"count_only,omitempty"`
	MinModRevision    int64      `json:"min_mod_revision,omitempty,string"`
	MaxModRevision    int64      `json:"max_mod_revision,omitempty,string"`
	MinCreateRevision int64      `json:"min_create_revision,omitempty,string"`
	MaxCreateRevision int64      `json:"max_create_revision,omitempty,string"`
}

// RangeResponse is etcdserverpb.RangeResponse.
type RangeResponse struct {
	Header *ResponseHeader `json:"header,omitempty"`
	Kvs    []*KeyValue     `json:"kvs,omitempty"`
	More   bool            `json:"more,omitempty"`
	Count  int64           `json:"count,omitempty,string"`
}

// PutRequest is etcdserverpb.PutRequest.
type PutRequest struct {
	Key         []byte `json:"key,omitempty"`
	Value       []byte `json:"value,omitempty"`
	Lease       int64  `json:"lease,omitempty,string"`
	PrevKv      bool   `json:"prev_kv,omitempty"`
	IgnoreValue bool   `json:"ignore_value,omitempty"`
	IgnoreLease bool   `json:"ignore_lease,omitempty"`
}

// PutResponse is etcdserverpb.PutResponse.
type PutResponse struct {
	Header *ResponseHeader `json:"header,omitempty"`
	PrevKv *KeyValue       `json:"prev_kv,omitempty"`
}

// DeleteRangeRequest is etcdserverpb.DeleteRangeRequest.
type DeleteRangeRequest struct {
	Key      []byte `json:"key,omitempty"`
	RangeEnd []byte `json:"range_end,omitempty"`
	PrevKv   bool   `json:"prev_kv,omitempty"`
}

// DeleteRangeResponse is etcdserverpb.DeleteRangeResponse.
type DeleteRangeResponse struct {
	Header  *ResponseHeader `json:"header,omitempty"`
	Deleted int64           `json:"deleted,omitempty,string"`
	PrevKvs []*KeyValue     `json:"prev_kvs,omitempty"`
}

// CompareResult is etcdserverpb.Compare_CompareResult.
type CompareResult int32

const (
	CompareEqual    CompareResult = 0
	CompareGreater  CompareResult = 1
	CompareLess     CompareResult = 2
	CompareNotEqual CompareResult = 3
)

// CompareTarget is etcdserverpb.Compare_CompareTarget.
type CompareTarget int32

const (
	CompareVersion CompareTarget = 0
	CompareCreate  CompareTarget = 1
	CompareMod     CompareTarget = 2
	CompareValue   CompareTarget = 3
	CompareLease   CompareTarget = 4
)

// Compare is etcdserverpb.Compare. pb's oneof TargetUnion is the five value
// fields; only the one Target names is read (a shim sets that one from
// Compare_Version, Compare_CreateRevision, ... and leaves the others zero).
type Compare struct {
	Result         CompareResult `json:"result,omitempty"`
	Target         CompareTarget `json:"target,omitempty"`
	Key            []byte        `json:"key,omitempty"`
	Version        int64         `json:"version,omitempty,string"`
	CreateRevision int64         `json:"create_revision,omitempty,string"`
	ModRevision    int64         `json:"mod_revision,omitempty,string"`
	Value          []byte        `json:"value,omitempty"`
	Lease          int64         `json:"lease,omitempty,string"`
	RangeEnd       []byte        `json:"range_end,omitempty"`
}

// RequestOp is etcdserverpb.RequestOp: exactly one field is set. None set is
// etcd's empty union (ErrKeyNotFound); several set cannot come from pb, and
// the member uses the first (in field order) and records it as unsupported.
type RequestOp struct {
	RequestRange       *RangeRequest       `json:"request_range,omitempty"`
	RequestPut         *PutRequest         `json:"request_put,omitempty"`
	RequestDeleteRange *DeleteRangeRequest `json:"request_delete_range,omitempty"`
	RequestTxn         *TxnRequest         `json:"request_txn,omitempty"`
}

// ResponseOp is etcdserverpb.ResponseOp: the field matching its RequestOp is set.
type ResponseOp struct {
	ResponseRange       *RangeResponse       `json:"response_range,omitempty"`
	ResponsePut         *PutResponse         `json:"response_put,omitempty"`
	ResponseDeleteRange *DeleteRangeResponse `json:"response_delete_range,omitempty"`
	ResponseTxn         *TxnResponse         `json:"response_txn,omitempty"`
}

// TxnRequest is etcdserverpb.TxnRequest.
type TxnRequest struct {
	Compare []*Compare   `json:"compare,omitempty"`
	Success []*RequestOp `json:"success,omitempty"`
	Failure []*RequestOp `json:"failure,omitempty"`
}

// TxnResponse is etcdserverpb.TxnResponse. As in etcd, the headers of the
// responses inside a txn carry only Revision, and a nested txn's header is
// empty.
type TxnResponse struct {
	Header    *ResponseHeader `json:"header,omitempty"`
	Succeeded bool            `json:"succeeded,omitempty"`
	Responses []*ResponseOp   `json:"responses,omitempty"`
}

// LeaseGrantRequest is etcdserverpb.LeaseGrantRequest. TTL is in seconds;
// ID 0 lets the member choose.
type LeaseGrantRequest struct {
	TTL int64 `json:"TTL,omitempty,string"`
	ID  int64 `json:"ID,omitempty,string"`
}

// LeaseGrantResponse is etcdserverpb.LeaseGrantResponse (Error is never set
// by etcd's server, nor here).
type LeaseGrantResponse struct {
	Header *ResponseHeader `json:"header,omitempty"`
	ID     int64           `json:"ID,omitempty,string"`
	TTL    int64           `json:"TTL,omitempty,string"`
	Error  string          `json:"error,omitempty"`
}

// LeaseRevokeRequest is etcdserverpb.LeaseRevokeRequest.
type LeaseRevokeRequest struct {
	ID int64 `json:"ID,omitempty,string"`
}

// LeaseRevokeResponse is etcdserverpb.LeaseRevokeResponse.
type LeaseRevokeResponse struct {
	Header *ResponseHeader `json:"header,omitempty"`
}

// LeaseKeepAliveRequest is etcdserverpb.LeaseKeepAliveRequest.
type LeaseKeepAliveRequest struct {
	ID int64 `json:"ID,omitempty,string"`
}

// LeaseKeepAliveResponse is etcdserverpb.LeaseKeepAliveResponse. TTL is the
// granted TTL in seconds, or 0 when the lease is gone.
type LeaseKeepAliveResponse struct {
	Header *ResponseHeader `json:"header,omitempty"`
	ID     int64           `json:"ID,omitempty,string"`
	TTL    int64           `json:"TTL,omitempty,string"`
}

// LeaseTimeToLiveRequest is etcdserverpb.LeaseTimeToLiveRequest.
type LeaseTimeToLiveRequest struct {
	ID   int64 `json:"ID,omitempty,string"`
	Keys bool  `json:"keys,omitempty"`
}

// LeaseTimeToLiveResponse is etcdserverpb.LeaseTimeToLiveResponse. TTL is
// the remaining seconds (truncated; -1: no such lease), GrantedTTL the
// lease's TTL in seconds.
type LeaseTimeToLiveResponse struct {
	Header     *ResponseHeader `json:"header,omitempty"`
	ID         int64           `json:"ID,omitempty,string"`
	TTL        int64           `json:"TTL,omitempty,string"`
	GrantedTTL int64           `json:"grantedTTL,omitempty,string"`
	Keys       [][]byte        `json:"keys,omitempty"`
}

// LeaseLeasesRequest is etcdserverpb.LeaseLeasesRequest.
type LeaseLeasesRequest struct{}

// LeaseStatus is etcdserverpb.LeaseStatus.
type LeaseStatus struct {
	ID int64 `json:"ID,omitempty,string"`
}

// LeaseLeasesResponse is etcdserverpb.LeaseLeasesResponse.
type LeaseLeasesResponse struct {
	Header *ResponseHeader `json:"header,omitempty"`
	Leases []*LeaseStatus  `json:"leases,omitempty"`
}

// FilterType is etcdserverpb.WatchCreateRequest_FilterType.
type FilterType int32

const (
	FilterNoPut    FilterType = 0 // drop PUT events
	FilterNoDelete FilterType = 1 // drop DELETE events
)

// WatchCreateRequest is etcdserverpb.WatchCreateRequest. StartRevision 0
// watches from the next revision; WatchId 0 lets the member choose.
type WatchCreateRequest struct {
	Key            []byte       `json:"key,omitempty"`
	RangeEnd       []byte       `json:"range_end,omitempty"`
	StartRevision  int64        `json:"start_revision,omitempty,string"`
	ProgressNotify bool         `json:"progress_notify,omitempty"`
	Filters        []FilterType `json:"filters,omitempty"`
	PrevKv         bool         `json:"prev_kv,omitempty"`
	WatchId        int64        `json:"watch_id,omitempty,string"`
	Fragment       bool         `json:"fragment,omitempty"`
}

// WatchResponse is etcdserverpb.WatchResponse.
type WatchResponse struct {
	Header          *ResponseHeader `json:"header,omitempty"`
	WatchId         int64           `json:"watch_id,omitempty,string"`
	Created         bool            `json:"created,omitempty"`
	Canceled        bool            `json:"canceled,omitempty"`
	CompactRevision int64           `json:"compact_revision,omitempty,string"`
	CancelReason    string          `json:"cancel_reason,omitempty"`
	Fragment        bool            `json:"fragment,omitempty"`
	Events          []*Event        `json:"events,omitempty"`
}
