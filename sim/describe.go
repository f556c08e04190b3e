package sim

import "fmt"

// Descriptions for trace lines. Only called when tracing.

func (w *world) endpointName(e endpoint) string {
	switch {
	case e == resourceEndpoint:
		return "resource"
	case e.isClient():
		return w.clients[e.client()].name
	default:
		return w.nodes[e].name
	}
}

func (w *world) describe(m *message) string {
	dir := fmt.Sprintf("%s->%s", w.endpointName(m.from), w.endpointName(m.to))
	if m.isReply {
		return fmt.Sprintf("reply %s #%d %s", dir, m.call, describeReply(m.rep))
	}
	r := &m.req
	switch r.op {
	case opWriteIfAbsentOrSame:
		return fmt.Sprintf("%s #%d %s %s owner=%s expiry=%s", dir, m.call, r.op, r.key, r.owner, fmtTime(r.expiry))
	case opRemove:
		return fmt.Sprintf("%s #%d %s %s v%d", dir, m.call, r.op, r.key, r.version)
	case opSetIfAbsentTTL:
		return fmt.Sprintf("%s #%d %s %s owner=%s ttl=%s", dir, m.call, r.op, r.key, r.owner, fmtTime(r.ttl))
	case opCompareAndDelete:
		return fmt.Sprintf("%s #%d %s %s owner=%s", dir, m.call, r.op, r.key, r.owner)
	case opRaiseCounter:
		return fmt.Sprintf("%s #%d %s %s at-least=%d", dir, m.call, r.op, r.key, r.num)
	case opLeaseGrant:
		return fmt.Sprintf("%s #%d %s ttl=%s", dir, m.call, r.op, fmtTime(r.ttl))
	case opLeaseKeepAlive, opLeaseRevoke:
		return fmt.Sprintf("%s #%d %s lease=%d", dir, m.call, r.op, r.num)
	case opCreateWithLease:
		return fmt.Sprintf("%s #%d %s %s owner=%s lease=%d", dir, m.call, r.op, r.key, r.owner, r.num)
	case opLastCreatedBefore:
		return fmt.Sprintf("%s #%d %s %s rev<%d", dir, m.call, r.op, r.key, r.num)
	case opExtendIfOwner:
		return fmt.Sprintf("%s #%d %s %s owner=%s ttl=%s", dir, m.call, r.op, r.key, r.owner, fmtTime(r.ttl))
	case opResourceRead, opResourceWrite:
		return fmt.Sprintf("%s #%d %s token=%d value=%d", dir, m.call, r.op, m.resToken, m.resValue)
	default:
		return fmt.Sprintf("%s #%d %s %s", dir, m.call, r.op, r.key)
	}
}

func describeReply(r reply) string {
	if r.err != errNone {
		return r.err.err().Error()
	}
	if r.item.Owner != "" {
		return fmt.Sprintf("ok owner=%s v%d", r.item.Owner, r.item.Version)
	}
	return "ok"
}
