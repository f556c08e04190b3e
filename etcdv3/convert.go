package etcdv3

// Field-by-field conversion between etcd's generated messages and
// locksim's mirror of them (etcdnode): the two have the same fields, and
// enums the same numbers. This file is version-neutral: the same text
// builds against etcd 3.4's packages with the import paths rewritten.

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/locksim/locksim/sim/etcdnode"
)

func header(h *etcdnode.ResponseHeader) *pb.ResponseHeader {
	if h == nil {
		return nil
	}
	return &pb.ResponseHeader{ClusterId: h.ClusterId, MemberId: h.MemberId, Revision: h.Revision, RaftTerm: h.RaftTerm}
}

func kv(k *etcdnode.KeyValue) *mvccpb.KeyValue {
	if k == nil {
		return nil
	}
	return &mvccpb.KeyValue{Key: k.Key, CreateRevision: k.CreateRevision, ModRevision: k.ModRevision,
		Version: k.Version, Value: k.Value, Lease: k.Lease}
}

func kvs(ks []*etcdnode.KeyValue) []*mvccpb.KeyValue {
	if ks == nil {
		return nil
	}
	out := make([]*mvccpb.KeyValue, len(ks))
	for i, k := range ks {
		out[i] = kv(k)
	}
	return out
}

func events(es []*etcdnode.Event) []*mvccpb.Event {
	if es == nil {
		return nil
	}
	out := make([]*mvccpb.Event, len(es))
	for i, e := range es {
		out[i] = &mvccpb.Event{Type: mvccpb.Event_EventType(e.Type), Kv: kv(e.Kv), PrevKv: kv(e.PrevKv)}
	}
	return out
}

func rangeReq(r *pb.RangeRequest) *etcdnode.RangeRequest {
	return &etcdnode.RangeRequest{Key: r.Key, RangeEnd: r.RangeEnd, Limit: r.Limit, Revision: r.Revision,
		SortOrder: etcdnode.SortOrder(r.SortOrder), SortTarget: etcdnode.SortTarget(r.SortTarget),
		Serializable: r.Serializable, KeysOnly: r.KeysOnly, CountOnly: r.CountOnly,
		MinModRevision: r.MinModRevision, MaxModRevision: r.MaxModRevision,
		MinCreateRevision: r.MinCreateRevision, MaxCreateRevision: r.MaxCreateRevision}
}

func rangeResp(r *etcdnode.RangeResponse) *pb.RangeResponse {
	return &pb.RangeResponse{Header: header(r.Header), Kvs: kvs(r.Kvs), More: r.More, Count: r.Count}
}

func putReq(r *pb.PutRequest) *etcdnode.PutRequest {
	return &etcdnode.PutRequest{Key: r.Key, Value: r.Value, Lease: r.Lease, PrevKv: r.PrevKv,
		IgnoreValue: r.IgnoreValue, IgnoreLease: r.IgnoreLease}
}

func putResp(r *etcdnode.PutResponse) *pb.PutResponse {
	return &pb.PutResponse{Header: header(r.Header), PrevKv: kv(r.PrevKv)}
}

func deleteReq(r *pb.DeleteRangeRequest) *etcdnode.DeleteRangeRequest {
	return &etcdnode.DeleteRangeRequest{Key: r.Key, RangeEnd: r.RangeEnd, PrevKv: r.PrevKv}
}

func deleteResp(r *etcdnode.DeleteRangeResponse) *pb.DeleteRangeResponse {
	return &pb.DeleteRangeResponse{Header: header(r.Header), Deleted: r.Deleted, PrevKvs: kvs(r.PrevKvs)}
}

func compare(c *pb.Compare) *etcdnode.Compare {
	out := &etcdnode.Compare{Result: etcdnode.CompareResult(c.Result), Target: etcdnode.CompareTarget(c.Target),
		Key: c.Key, RangeEnd: c.RangeEnd}
	switch u := c.TargetUnion.(type) {
	case *pb.Compare_Version:
		out.Version = u.Version
	case *pb.Compare_CreateRevision:
		out.CreateRevision = u.CreateRevision
	case *pb.Compare_ModRevision:
		out.ModRevision = u.ModRevision
	case *pb.Compare_Value:
		out.Value = u.Value
	case *pb.Compare_Lease:
		out.Lease = u.Lease
	}
	return out
}

func txnReq(r *pb.TxnRequest) *etcdnode.TxnRequest {
	out := &etcdnode.TxnRequest{}
	for _, c := range r.Compare {
		out.Compare = append(out.Compare, compare(c))
	}
	out.Success, out.Failure = requestOps(r.Success), requestOps(r.Failure)
	return out
}

func requestOps(ops []*pb.RequestOp) []*etcdnode.RequestOp {
	var out []*etcdnode.RequestOp
	for _, op := range ops {
		o := &etcdnode.RequestOp{}
		switch u := op.Request.(type) {
		case *pb.RequestOp_RequestRange:
			o.RequestRange = rangeReq(u.RequestRange)
		case *pb.RequestOp_RequestPut:
			o.RequestPut = putReq(u.RequestPut)
		case *pb.RequestOp_RequestDeleteRange:
			o.RequestDeleteRange = deleteReq(u.RequestDeleteRange)
		case *pb.RequestOp_RequestTxn:
			o.RequestTxn = txnReq(u.RequestTxn)
		}
		out = append(out, o)
	}
	return out
}

func txnResp(r *etcdnode.TxnResponse) *pb.TxnResponse {
	out := &pb.TxnResponse{Header: header(r.Header), Succeeded: r.Succeeded}
	for _, op := range r.Responses {
		o := &pb.ResponseOp{}
		switch {
		case op.ResponseRange != nil:
			o.Response = &pb.ResponseOp_ResponseRange{ResponseRange: rangeResp(op.ResponseRange)}
		case op.ResponsePut != nil:
			o.Response = &pb.ResponseOp_ResponsePut{ResponsePut: putResp(op.ResponsePut)}
		case op.ResponseDeleteRange != nil:
			o.Response = &pb.ResponseOp_ResponseDeleteRange{ResponseDeleteRange: deleteResp(op.ResponseDeleteRange)}
		case op.ResponseTxn != nil:
			o.Response = &pb.ResponseOp_ResponseTxn{ResponseTxn: txnResp(op.ResponseTxn)}
		}
		out.Responses = append(out.Responses, o)
	}
	return out
}

func watchReq(r *pb.WatchRequest) *etcdnode.WatchRequest {
	out := &etcdnode.WatchRequest{}
	switch u := r.RequestUnion.(type) {
	case *pb.WatchRequest_CreateRequest:
		c := u.CreateRequest
		cr := &etcdnode.WatchCreateRequest{Key: c.Key, RangeEnd: c.RangeEnd, StartRevision: c.StartRevision,
			ProgressNotify: c.ProgressNotify, PrevKv: c.PrevKv, WatchId: c.WatchId, Fragment: c.Fragment}
		for _, f := range c.Filters {
			cr.Filters = append(cr.Filters, etcdnode.FilterType(f))
		}
		out.Create = cr
	case *pb.WatchRequest_CancelRequest:
		out.Cancel = &etcdnode.WatchCancelRequest{WatchId: u.CancelRequest.WatchId}
	case *pb.WatchRequest_ProgressRequest:
		out.Progress = true
	}
	return out
}

func watchResp(r *etcdnode.WatchResponse) *pb.WatchResponse {
	return &pb.WatchResponse{Header: header(r.Header), WatchId: r.WatchId, Created: r.Created, Canceled: r.Canceled,
		CompactRevision: r.CompactRevision, CancelReason: r.CancelReason, Fragment: r.Fragment, Events: events(r.Events)}
}
