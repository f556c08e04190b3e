// Package etcdv3 runs etcd's own Go client (go.etcd.io/etcd/client/v3 and
// its concurrency package), unmodified, against locksim's simulated etcd
// member: NewClient gives a *clientv3.Client whose KV, Lease and Watcher
// are etcd's own, over gRPC clients that talk to the simulator
// (etcdnode.Conn) instead of a network.
//
// It is a module of its own so that locksim's module imports no etcd and
// no gRPC: a user of etcd 3.4 (whose gRPC cannot be newer than 1.26) and a
// user of 3.6 both import locksim. The files of this package other than
// this one build against etcd 3.4's packages with the import paths
// rewritten, which is how locksim checks 3.4's Mutex.
package etcdv3

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
	_ "unsafe" // go:linkname

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/locksim/locksim/sim/etcdnode"
)

// valCtxCh is clientv3's package-level channel that every watch's context
// selects on (watch.go: a valCtx's Done). Made at init, outside any
// synctest bubble, it keeps the bubble's clock from ever advancing while
// a watch exists: a select on a channel of no bubble is not durably
// blocked. NewClient replaces it with a channel of the calling bubble;
// etcd runs of one process must therefore not overlap (realetcd runs one
// at a time).
//
//go:linkname valCtxCh go.etcd.io/etcd/client/v3.valCtxCh
var valCtxCh chan struct{}

// valCtxMu guards valCtxCh's replacement, and valCtxWorld is the world
// (a run's, see worldOf) whose bubble made the channel now in it.
var (
	valCtxMu    sync.Mutex
	valCtxWorld any
)

// worldOf is what conn says it belongs to: the clients of one run share
// one (realredis's connections, World); nil when conn does not say.
func worldOf(conn etcdnode.Conn) any {
	if w, ok := conn.(interface{ World() any }); ok {
		return w.World()
	}
	return nil
}

// NewClient is a client of the simulated member over conn, with etcd's own
// KV, Lease and Watcher. Call it inside the run's bubble.
//
// The first client of a run gives clientv3's valCtxCh a channel of the
// run's bubble; the others of the run leave it, so that no client writes
// it while another's watch reads it (a data race the race detector saw
// when every client replaced it). A conn that does not say its world
// replaces it every time, as before.
func NewClient(conn etcdnode.Conn) *clientv3.Client {
	valCtxMu.Lock()
	if w := worldOf(conn); w == nil || w != valCtxWorld {
		valCtxCh, valCtxWorld = make(chan struct{}), w
	}
	valCtxMu.Unlock()
	g := &grpcClients{conn: conn}
	c := clientv3.NewCtxClient(context.Background())
	c.KV = clientv3.NewKVFromKVClient(g, c)
	// clientv3.New passes DialTimeout+1s: with no DialTimeout, 1 s, which
	// the lessor turns into etcd's default first keep-alive timeout (5 s).
	c.Lease = clientv3.NewLeaseFromLeaseClient(g, c, time.Second)
	c.Watcher = clientv3.NewWatchFromWatchClient(g, c)
	return c
}

// grpcClients implements etcd's generated KV, Lease and Watch clients
// over a Conn.
type grpcClients struct{ conn etcdnode.Conn }

// rpcErr is err as gRPC returns it: a status.
func rpcErr(err error) error {
	var e *etcdnode.Error
	if errors.As(err, &e) {
		return status.Error(codes.Code(e.Code), e.Msg)
	}
	if err == io.EOF {
		return err
	}
	return status.Error(codes.Unknown, err.Error())
}

// call sends req and returns the answer as type R.
func call[R any](g *grpcClients, ctx context.Context, req any) (R, error) {
	var zero R
	resp, err := g.conn.Call(ctx, req)
	if err != nil {
		return zero, rpcErr(err)
	}
	return resp.(R), nil
}

func (g *grpcClients) Range(ctx context.Context, r *pb.RangeRequest, _ ...grpc.CallOption) (*pb.RangeResponse, error) {
	resp, err := call[*etcdnode.RangeResponse](g, ctx, rangeReq(r))
	if err != nil {
		return nil, err
	}
	return rangeResp(resp), nil
}

func (g *grpcClients) Put(ctx context.Context, r *pb.PutRequest, _ ...grpc.CallOption) (*pb.PutResponse, error) {
	resp, err := call[*etcdnode.PutResponse](g, ctx, putReq(r))
	if err != nil {
		return nil, err
	}
	return putResp(resp), nil
}

func (g *grpcClients) DeleteRange(ctx context.Context, r *pb.DeleteRangeRequest, _ ...grpc.CallOption) (*pb.DeleteRangeResponse, error) {
	resp, err := call[*etcdnode.DeleteRangeResponse](g, ctx, deleteReq(r))
	if err != nil {
		return nil, err
	}
	return deleteResp(resp), nil
}

func (g *grpcClients) Txn(ctx context.Context, r *pb.TxnRequest, _ ...grpc.CallOption) (*pb.TxnResponse, error) {
	resp, err := call[*etcdnode.TxnResponse](g, ctx, txnReq(r))
	if err != nil {
		return nil, err
	}
	return txnResp(resp), nil
}

// Compact is not simulated: the member keeps its whole history.
func (g *grpcClients) Compact(context.Context, *pb.CompactionRequest, ...grpc.CallOption) (*pb.CompactionResponse, error) {
	return nil, status.Error(codes.Unimplemented, "locksim: the simulated etcd member does not compact")
}

func (g *grpcClients) LeaseGrant(ctx context.Context, r *pb.LeaseGrantRequest, _ ...grpc.CallOption) (*pb.LeaseGrantResponse, error) {
	resp, err := call[*etcdnode.LeaseGrantResponse](g, ctx, &etcdnode.LeaseGrantRequest{TTL: r.TTL, ID: r.ID})
	if err != nil {
		return nil, err
	}
	return &pb.LeaseGrantResponse{Header: header(resp.Header), ID: resp.ID, TTL: resp.TTL, Error: resp.Error}, nil
}

func (g *grpcClients) LeaseRevoke(ctx context.Context, r *pb.LeaseRevokeRequest, _ ...grpc.CallOption) (*pb.LeaseRevokeResponse, error) {
	resp, err := call[*etcdnode.LeaseRevokeResponse](g, ctx, &etcdnode.LeaseRevokeRequest{ID: r.ID})
	if err != nil {
		return nil, err
	}
	return &pb.LeaseRevokeResponse{Header: header(resp.Header)}, nil
}

func (g *grpcClients) LeaseTimeToLive(ctx context.Context, r *pb.LeaseTimeToLiveRequest, _ ...grpc.CallOption) (*pb.LeaseTimeToLiveResponse, error) {
	resp, err := call[*etcdnode.LeaseTimeToLiveResponse](g, ctx, &etcdnode.LeaseTimeToLiveRequest{ID: r.ID, Keys: r.Keys})
	if err != nil {
		return nil, err
	}
	return &pb.LeaseTimeToLiveResponse{Header: header(resp.Header), ID: resp.ID, TTL: resp.TTL, GrantedTTL: resp.GrantedTTL, Keys: resp.Keys}, nil
}

func (g *grpcClients) LeaseLeases(ctx context.Context, _ *pb.LeaseLeasesRequest, _ ...grpc.CallOption) (*pb.LeaseLeasesResponse, error) {
	resp, err := call[*etcdnode.LeaseLeasesResponse](g, ctx, &etcdnode.LeaseLeasesRequest{})
	if err != nil {
		return nil, err
	}
	out := &pb.LeaseLeasesResponse{Header: header(resp.Header)}
	for _, l := range resp.Leases {
		out.Leases = append(out.Leases, &pb.LeaseStatus{ID: l.ID})
	}
	return out, nil
}

func (g *grpcClients) LeaseKeepAlive(ctx context.Context, _ ...grpc.CallOption) (pb.Lease_LeaseKeepAliveClient, error) {
	s, err := g.conn.Open(ctx, etcdnode.LeaseKeepAlive)
	if err != nil {
		return nil, rpcErr(err)
	}
	return keepAliveStream{stream{ctx, s}}, nil
}

func (g *grpcClients) Watch(ctx context.Context, _ ...grpc.CallOption) (pb.Watch_WatchClient, error) {
	s, err := g.conn.Open(ctx, etcdnode.Watch)
	if err != nil {
		return nil, rpcErr(err)
	}
	return watchStream{stream{ctx, s}}, nil
}

// stream is grpc.ClientStream over a etcdnode.Stream: what etcd's client
// calls of it besides Send and Recv.
type stream struct {
	ctx context.Context
	s   etcdnode.Stream
}

func (s stream) Header() (metadata.MD, error) { return nil, nil }
func (s stream) Trailer() metadata.MD         { return nil }
func (s stream) CloseSend() error             { return s.s.CloseSend() }
func (s stream) Context() context.Context     { return s.ctx }
func (s stream) SendMsg(m any) error          { return s.s.Send(m) }
func (s stream) RecvMsg(any) error {
	return status.Error(codes.Unimplemented, "locksim: RecvMsg: use Recv")
}

type keepAliveStream struct{ stream }

func (s keepAliveStream) Send(r *pb.LeaseKeepAliveRequest) error {
	return sendErr(s.s.Send(&etcdnode.LeaseKeepAliveRequest{ID: r.ID}))
}

func (s keepAliveStream) Recv() (*pb.LeaseKeepAliveResponse, error) {
	m, err := s.s.Recv()
	if err != nil {
		return nil, rpcErr(err)
	}
	r := m.(*etcdnode.LeaseKeepAliveResponse)
	return &pb.LeaseKeepAliveResponse{Header: header(r.Header), ID: r.ID, TTL: r.TTL}, nil
}

type watchStream struct{ stream }

func (s watchStream) Send(r *pb.WatchRequest) error { return sendErr(s.s.Send(watchReq(r))) }

func (s watchStream) Recv() (*pb.WatchResponse, error) {
	m, err := s.s.Recv()
	if err != nil {
		return nil, rpcErr(err)
	}
	return watchResp(m.(*etcdnode.WatchResponse)), nil
}

// sendErr is a stream Send's error as gRPC gives it: io.EOF once the
// stream has ended (the real error comes from Recv).
func sendErr(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return io.EOF
}
