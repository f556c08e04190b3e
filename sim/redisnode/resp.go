package redisnode

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Limits from Redis 7's networking.c and config.c.
const (
	protoInlineMaxSize = 64 * 1024         // PROTO_INLINE_MAX_SIZE
	protoMaxBulkLen    = 512 * 1024 * 1024 // proto-max-bulk-len default
	maxPrealloc        = 1024              // elements preallocated per reply: a huge count must not allocate up front
)

// ProtocolError is a malformed request. Redis replies with it and closes the
// connection; the reply is Reply{Kind: Error, Str: err.Error()}.
type ProtocolError struct {
	Msg string // e.g. "invalid bulk length"
}

func (e *ProtocolError) Error() string { return "ERR Protocol error: " + e.Msg }

// Reply is what Redis writes before closing the connection.
func (e *ProtocolError) Reply() Reply { return errorReply(e.Error()) }

func protoErr(msg string) error { return &ProtocolError{Msg: msg} }

// ParseCommand parses one request from what a client wrote: a RESP array of
// bulk strings, or an inline command (a line of words, quotes allowed), as
// Redis 7's processMultibulkBuffer and processInlineBuffer do.
//
// n == 0 and err == nil: incomplete, wait for more bytes. n > 0: the request
// took buf[:n]; an empty request (an empty line, "*0\r\n") has len(args) == 0
// and is skipped, as Redis does. err != nil: a protocol error, to reply with
// and then close the connection. args alias buf only through copies: they stay
// valid after buf is reused.
func ParseCommand(buf []byte) (args [][]byte, n int, err error) {
	if len(buf) == 0 {
		return nil, 0, nil
	}
	if buf[0] == '*' {
		return parseMultibulk(buf)
	}
	return parseInline(buf)
}

func parseInline(buf []byte) ([][]byte, int, error) {
	nl := bytes.IndexByte(buf, '\n')
	if nl < 0 {
		if len(buf) > protoInlineMaxSize {
			return nil, 0, protoErr("too big inline request")
		}
		return nil, 0, nil
	}
	line := buf[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	args, ok := splitArgs(line)
	if !ok {
		return nil, 0, protoErr("unbalanced quotes in request")
	}
	return args, nl + 1, nil
}

func parseMultibulk(buf []byte) ([][]byte, int, error) {
	line, pos, ok, err := lengthLine(buf, 0, "too big mbulk count string")
	if err != nil || !ok {
		return nil, 0, err
	}
	ll, valid := parseStrictInt(line[1:])
	if !valid || ll > math.MaxInt32 {
		return nil, 0, protoErr("invalid multibulk length")
	}
	if ll <= 0 {
		return [][]byte{}, pos, nil
	}
	// Find every argument first, then copy them all into one allocation.
	var spanBuf [8]struct{ at, n int }
	spans, total := spanBuf[:0], 0
	for range ll {
		line, next, ok, err := lengthLine(buf, pos, "too big bulk count string")
		if err != nil || !ok {
			return nil, 0, err
		}
		if buf[pos] != '$' {
			return nil, 0, protoErr(fmt.Sprintf("expected '$', got '%c'", buf[pos]))
		}
		bl, valid := parseStrictInt(line[1:])
		if !valid || bl < 0 || bl > protoMaxBulkLen {
			return nil, 0, protoErr("invalid bulk length")
		}
		// Redis skips the two bytes after the payload without checking them.
		if int64(len(buf)-next) < bl+2 {
			return nil, 0, nil
		}
		spans = append(spans, struct{ at, n int }{next, int(bl)})
		total += int(bl)
		pos = next + int(bl) + 2
	}
	data := make([]byte, 0, total)
	args := make([][]byte, len(spans))
	for i, sp := range spans {
		start := len(data)
		data = append(data, buf[sp.at:sp.at+sp.n]...)
		args[i] = data[start:len(data):len(data)] // capped: an append to one cannot overwrite the next
	}
	return args, pos, nil
}

// lengthLine finds the "\r\n" ending the line that starts at pos; next is the
// index after it. ok false: incomplete (or, past the inline limit, an error).
func lengthLine(buf []byte, pos int, tooBig string) (line []byte, next int, ok bool, err error) {
	cr := bytes.IndexByte(buf[pos:], '\r')
	if cr < 0 {
		if len(buf)-pos > protoInlineMaxSize {
			return nil, 0, false, protoErr(tooBig)
		}
		return nil, 0, false, nil
	}
	if pos+cr+1 >= len(buf) { // the '\n' has not arrived yet
		return nil, 0, false, nil
	}
	return buf[pos : pos+cr], pos + cr + 2, true, nil
}

// splitArgs is Redis's sdssplitargs: words separated by blanks, "double quotes"
// with C-like escapes, 'single quotes' with only \' escaped. A closing quote
// must be followed by a blank or the end. ok is false for unbalanced quotes.
func splitArgs(line []byte) (args [][]byte, ok bool) {
	args = [][]byte{}
	p := 0
	for {
		for p < len(line) && isBlank(line[p]) {
			p++
		}
		if p >= len(line) {
			return args, true
		}
		var cur []byte
		if cur, p, ok = splitWord(line, p); !ok {
			return nil, false
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

// splitWord reads the word of splitArgs that starts at line[p], not a
// blank, and returns it (nil if empty) and the index to go on from: past
// the blank that ended it, or the end of the line. A quote starts a quoted
// part that ends the word; ok is false if that part is unbalanced.
func splitWord(line []byte, p int) (cur []byte, next int, ok bool) {
	for p < len(line) {
		switch line[p] {
		case ' ', '\n', '\r', '\t', 0:
			return cur, p + 1, true
		case '"':
			return splitDoubleQuoted(line, p+1, cur)
		case '\'':
			return splitSingleQuoted(line, p+1, cur)
		default:
			cur = append(cur, line[p])
		}
		p++
	}
	return cur, p, true
}

// splitDoubleQuoted appends to cur the "double quoted" part of a word
// that starts at line[p], just past its opening quote, and returns cur and
// the index past the byte after the closing quote (a blank, or the end).
// It undoes \xHH and C's escapes; any other escaped byte stands for itself.
func splitDoubleQuoted(line []byte, p int, cur []byte) ([]byte, int, bool) {
	for {
		if p >= len(line) {
			return nil, 0, false
		}
		switch {
		case line[p] == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]):
			cur = append(cur, hexVal(line[p+2])*16+hexVal(line[p+3]))
			p += 3
		case line[p] == '\\' && p+1 < len(line):
			p++
			cur = append(cur, unescape(line[p]))
		case line[p] == '"':
			if p+1 < len(line) && !isBlank(line[p+1]) {
				return nil, 0, false
			}
			return cur, p + 1, true
		default:
			cur = append(cur, line[p])
		}
		p++
	}
}

// splitSingleQuoted is splitDoubleQuoted for a 'single quoted' part, in
// which only \' is an escape.
func splitSingleQuoted(line []byte, p int, cur []byte) ([]byte, int, bool) {
	for {
		if p >= len(line) {
			return nil, 0, false
		}
		switch {
		case line[p] == '\\' && p+1 < len(line) && line[p+1] == '\'':
			p++
			cur = append(cur, '\'')
		case line[p] == '\'':
			if p+1 < len(line) && !isBlank(line[p+1]) {
				return nil, 0, false
			}
			return cur, p + 1, true
		default:
			cur = append(cur, line[p])
		}
		p++
	}
}

// unescape is the byte that a backslash before c stands for in double
// quotes: C's \n \r \t \b \a, and c itself for any other.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

func isBlank(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == 0 }
func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// errBadReply is returned by ParseReply for bytes that are not RESP2.
var errBadReply = errors.New("redisnode: malformed RESP2 reply")

// ParseReply parses one RESP2 reply (what a server wrote). n == 0 and
// err == nil: incomplete.
func ParseReply(buf []byte) (r Reply, n int, err error) {
	return parseReply(buf, 0, 0)
}

const maxReplyDepth = 1000 // nesting a reply may have: bounds the recursion

func parseReply(buf []byte, pos, depth int) (Reply, int, error) {
	if depth > maxReplyDepth {
		return Reply{}, 0, fmt.Errorf("%w: nested deeper than %d", errBadReply, maxReplyDepth)
	}
	if pos >= len(buf) {
		return Reply{}, 0, nil
	}
	nl := bytes.Index(buf[pos:], []byte("\r\n"))
	if nl < 0 {
		return Reply{}, 0, nil
	}
	line := buf[pos+1 : pos+nl]
	next := pos + nl + 2
	switch buf[pos] {
	case '+':
		return statusReply(string(line)), next, nil
	case '-':
		return errorReply(string(line)), next, nil
	case ':':
		i, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return Reply{}, 0, fmt.Errorf("%w: integer %q", errBadReply, line)
		}
		return intReply(i), next, nil
	case '$':
		l, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil || l < -1 {
			return Reply{}, 0, fmt.Errorf("%w: bulk length %q", errBadReply, line)
		}
		if l == -1 {
			return replyNil, next, nil
		}
		if int64(len(buf)-next) < l+2 {
			return Reply{}, 0, nil
		}
		end := next + int(l)
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return Reply{}, 0, fmt.Errorf("%w: bulk not ended by CRLF", errBadReply)
		}
		return bulkReply(string(buf[next:end])), end + 2, nil
	case '*':
		l, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil || l < -1 {
			return Reply{}, 0, fmt.Errorf("%w: array length %q", errBadReply, line)
		}
		if l == -1 {
			return Reply{Kind: NilArray}, next, nil
		}
		elems := make([]Reply, 0, min(l, maxPrealloc))
		for range l {
			e, end, err := parseReply(buf, next, depth+1)
			if err != nil || end == 0 {
				return Reply{}, 0, err
			}
			elems = append(elems, e)
			next = end
		}
		return Reply{Kind: Array, Array: elems}, next, nil
	}
	return Reply{}, 0, fmt.Errorf("%w: type byte %q", errBadReply, buf[pos])
}
