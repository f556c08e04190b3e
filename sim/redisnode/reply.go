package redisnode

import (
	"strconv"
	"strings"
)

// ReplyKind is the RESP2 type of a Reply.
type ReplyKind uint8

const (
	Status   ReplyKind = iota + 1 // +OK
	Error                         // -ERR ...
	Integer                       // :1
	Bulk                          // $5 hello
	NilBulk                       // $-1
	Array                         // *2 ...
	NilArray                      // *-1
)

var kindNames = [...]string{"?", "status", "error", "integer", "bulk", "nil-bulk", "array", "nil-array"}

func (k ReplyKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Reply is a RESP value. Str holds a status, an error's text (without the
// leading '-', e.g. "ERR syntax error") or a bulk string; Int an integer;
// Array an array's elements.
type Reply struct {
	Kind  ReplyKind
	Str   string
	Int   int64
	Array []Reply
}

// Shared replies: returned by value, so callers cannot alter them.
var (
	replyOK    = Reply{Kind: Status, Str: "OK"}
	replyNil   = Reply{Kind: NilBulk}
	replyZero  = Reply{Kind: Integer, Int: 0}
	replyOne   = Reply{Kind: Integer, Int: 1}
	replyEmpty = Reply{Kind: Bulk, Str: ""}
)

func statusReply(s string) Reply { return Reply{Kind: Status, Str: s} }
func errorReply(s string) Reply  { return Reply{Kind: Error, Str: s} }
func intReply(i int64) Reply     { return Reply{Kind: Integer, Int: i} }
func bulkReply(s string) Reply   { return Reply{Kind: Bulk, Str: s} }

// IsError reports whether r is an error reply.
func (r Reply) IsError() bool { return r.Kind == Error }

// AppendRESP2 appends r's RESP2 encoding to dst.
func (r Reply) AppendRESP2(dst []byte) []byte {
	switch r.Kind {
	case Status:
		dst = append(dst, '+')
		dst = appendLine(dst, r.Str)
	case Error:
		dst = append(dst, '-')
		dst = appendLine(dst, r.Str)
	case Integer:
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, r.Int, 10)
		dst = append(dst, '\r', '\n')
	case Bulk:
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(r.Str)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, r.Str...)
		dst = append(dst, '\r', '\n')
	case NilBulk:
		dst = append(dst, "$-1\r\n"...)
	case Array:
		dst = append(dst, '*')
		dst = strconv.AppendInt(dst, int64(len(r.Array)), 10)
		dst = append(dst, '\r', '\n')
		for _, e := range r.Array {
			dst = e.AppendRESP2(dst)
		}
	case NilArray:
		dst = append(dst, "*-1\r\n"...)
	default:
		// A zero Reply is a bug in the caller; encode something a client rejects loudly.
		dst = append(dst, "-ERR redisnode: reply of unknown kind\r\n"...)
	}
	return dst
}

// appendLine writes a status or error line; a CR or LF inside would break the
// protocol, so they become spaces, as Redis's addReplyError and status replies do.
func appendLine(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return append(dst, '\r', '\n')
}

// String is a short human form for traces, in redis-cli's style:
// OK, (error) ERR ..., (integer) 1, "value", (nil), [a b].
func (r Reply) String() string {
	var b strings.Builder
	r.writeHuman(&b, true)
	return b.String()
}

func (r Reply) writeHuman(b *strings.Builder, top bool) {
	switch r.Kind {
	case Status:
		b.WriteString(r.Str)
	case Error:
		b.WriteString("(error) ")
		b.WriteString(r.Str)
	case Integer:
		if top {
			b.WriteString("(integer) ")
		}
		b.WriteString(strconv.FormatInt(r.Int, 10))
	case Bulk:
		if top || !plainWord(r.Str) {
			b.WriteString(strconv.Quote(r.Str))
		} else {
			b.WriteString(r.Str)
		}
	case NilBulk, NilArray:
		b.WriteString("(nil)")
	case Array:
		b.WriteByte('[')
		for i, e := range r.Array {
			if i > 0 {
				b.WriteByte(' ')
			}
			e.writeHuman(b, false)
		}
		b.WriteByte(']')
	default:
		b.WriteString("(" + r.Kind.String() + ")")
	}
}

// plainWord: an array element that reads unambiguously without quotes.
func plainWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c > '~' || c == '"' || c == '[' || c == ']' || c == '(' {
			return false
		}
	}
	return true
}
