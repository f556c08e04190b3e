package redisnode

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		args []string
		n    int
		err  string // "" for none
	}{
		{"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", []string{"GET", "k"}, 20, ""},
		{"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n", []string{"GET", "k"}, 20, ""},
		{"*1\r\n$0\r\n\r\n", []string{""}, 10, ""},
		{"*0\r\n", []string{}, 4, ""},
		{"*-1\r\n", []string{}, 5, ""},
		{"PING\r\n", []string{"PING"}, 6, ""},
		{"PING\n", []string{"PING"}, 5, ""},
		{"  set  k  \"a b\\r\\n\\x41\"  'it\\'s'\r\n", []string{"set", "k", "a b\r\nA", "it's"}, 34, ""},
		{"\r\n", []string{}, 2, ""},
		{"*x\r\n", nil, 0, "ERR Protocol error: invalid multibulk length"},
		{"*01\r\n", nil, 0, "ERR Protocol error: invalid multibulk length"},
		{"*3000000000\r\n", nil, 0, "ERR Protocol error: invalid multibulk length"},
		{"*1\r\nX\r\n", nil, 0, "ERR Protocol error: expected '$', got 'X'"},
		{"*1\r\n$-1\r\n", nil, 0, "ERR Protocol error: invalid bulk length"},
		{"*1\r\n$536870913\r\n", nil, 0, "ERR Protocol error: invalid bulk length"},
		{"GET \"k\r\n", nil, 0, "ERR Protocol error: unbalanced quotes in request"},
		{"GET \"k\"x\r\n", nil, 0, "ERR Protocol error: unbalanced quotes in request"},
		{"GET 'k\r\n", nil, 0, "ERR Protocol error: unbalanced quotes in request"},
		{strings.Repeat("a", protoInlineMaxSize+1), nil, 0, "ERR Protocol error: too big inline request"},
		{"*" + strings.Repeat("1", protoInlineMaxSize+1), nil, 0, "ERR Protocol error: too big mbulk count string"},
		{"*1\r\n$" + strings.Repeat("1", protoInlineMaxSize), nil, 0, "ERR Protocol error: too big bulk count string"},
	} {
		args, n, err := ParseCommand([]byte(tc.in))
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Reply().Str != gotErr {
				t.Errorf("%q: error %v is not a *ProtocolError with a matching reply", tc.in, err)
			}
		}
		if gotErr != tc.err || n != tc.n || (tc.err == "" && !reflect.DeepEqual(strs(args), tc.args)) {
			t.Errorf("ParseCommand(%q) = %q, %d, %q; want %q, %d, %q", tc.in, strs(args), n, gotErr, tc.args, tc.n, tc.err)
		}
	}
}

func TestParseCommandWaitsForEveryPrefix(t *testing.T) {
	for _, full := range []string{
		"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n",
		"SET k \"quoted value\"\r\n",
	} {
		for i := 0; i < len(full); i++ {
			args, n, err := ParseCommand([]byte(full[:i]))
			if n != 0 || err != nil || args != nil {
				t.Errorf("prefix %q: got %q, %d, %v; want incomplete", full[:i], strs(args), n, err)
			}
		}
	}
}

func TestParseCommandCopiesArguments(t *testing.T) {
	buf := []byte("*1\r\n$4\r\nPING\r\n")
	args, _, _ := ParseCommand(buf)
	copy(buf, bytes.Repeat([]byte{'x'}, len(buf)))
	if string(args[0]) != "PING" {
		t.Errorf("argument changed with the buffer: %q", args[0])
	}
}

func strs(args [][]byte) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

func TestReplyEncodingRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		r     Reply
		wire  string
		human string
	}{
		{replyOK, "+OK\r\n", "OK"},
		{errorReply("ERR syntax error"), "-ERR syntax error\r\n", "(error) ERR syntax error"},
		{intReply(-42), ":-42\r\n", "(integer) -42"},
		{bulkReply("va\r\nl"), "$5\r\nva\r\nl\r\n", `"va\r\nl"`},
		{bulkReply(""), "$0\r\n\r\n", `""`},
		{replyNil, "$-1\r\n", "(nil)"},
		{Reply{Kind: NilArray}, "*-1\r\n", "(nil)"},
		{Reply{Kind: Array, Array: []Reply{}}, "*0\r\n", "[]"},
		{Reply{Kind: Array, Array: []Reply{bulkReply("a"), intReply(1), replyNil,
			{Kind: Array, Array: []Reply{bulkReply("b c")}}, errorReply("E x")}},
			"*5\r\n$1\r\na\r\n:1\r\n$-1\r\n*1\r\n$3\r\nb c\r\n-E x\r\n", `[a 1 (nil) ["b c"] (error) E x]`},
	} {
		wire := string(tc.r.AppendRESP2(nil))
		if wire != tc.wire {
			t.Errorf("%s: encoded %q, want %q", tc.human, wire, tc.wire)
		}
		if got := tc.r.String(); got != tc.human {
			t.Errorf("String() = %s, want %s", got, tc.human)
		}
		back, n, err := ParseReply([]byte(wire + "+next\r\n"))
		if err != nil || n != len(wire) || !reflect.DeepEqual(back, tc.r) {
			t.Errorf("ParseReply(%q) = %#v, %d, %v; want %#v, %d", wire, back, n, err, tc.r, len(wire))
		}
		for i := 0; i < len(wire); i++ {
			if _, n, err := ParseReply([]byte(wire[:i])); n != 0 || err != nil {
				t.Errorf("ParseReply(%q) = %d, %v; want incomplete", wire[:i], n, err)
			}
		}
	}
}

func TestStatusAndErrorLinesCannotBreakTheProtocol(t *testing.T) {
	if got := string(errorReply("ERR a\r\nb").AppendRESP2(nil)); got != "-ERR a  b\r\n" {
		t.Errorf("got %q", got)
	}
}

func TestParseReplyRejectsGarbage(t *testing.T) {
	for _, in := range []string{"?x\r\n", ":abc\r\n", "$-2\r\n", "$1\r\nab\r\n", "*-2\r\n"} {
		if _, _, err := ParseReply([]byte(in)); err == nil {
			t.Errorf("ParseReply(%q) accepted it", in)
		}
	}
}
