package redisnode

import "testing"

func TestServerCommands(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "PING", "PONG"},
		{0, "PING hi", `"hi"`},
		{0, "PING a b", "(error) ERR wrong number of arguments for 'ping' command"},
		{0, "ECHO", "(error) ERR wrong number of arguments for 'echo' command"},
		{0, "ECHO hi", `"hi"`},
		{0, "SELECT", "(error) ERR wrong number of arguments for 'select' command"},
		{0, "SELECT 0", "OK"},
		{0, "SELECT x", "(error) ERR value is not an integer or out of range"},
		{0, "SELECT 16", "(error) ERR DB index is out of range"},
		{0, "SELECT -1", "(error) ERR DB index is out of range"},
		{0, "SELECT 1", "(error) ERR DB index is out of range"}, // Redis: OK; this node has db 0 only
		{0, "SELECT 9999999999", "(error) ERR value is out of range, value must between -2147483648 and 2147483647"},
		{1_700_000_000_123_456_789, "TIME", "[1700000000 123456]"},
		{0, "TIME x", "(error) ERR wrong number of arguments for 'time' command"},
		{0, "HELLO", "(error) NOPROTO unsupported protocol version"},
		{0, "HELLO 3", "(error) NOPROTO unsupported protocol version"},
		{0, "HELLO 3 SETNAME x", "(error) NOPROTO unsupported protocol version"},
		{0, "INFO", `"# Server\r\nredis_version:7.0.15\r\n"`},
		{0, "INFO server", `"# Server\r\nredis_version:7.0.15\r\n"`},
	})
}

func TestClientCommands(t *testing.T) {
	runSteps(t, New(), []step{
		{0, "CLIENT", "(error) ERR wrong number of arguments for 'client' command"},
		{0, "CLIENT SETNAME", "(error) ERR wrong number of arguments for 'client|setname' command"},
		{0, "CLIENT SETNAME foo", "OK"},
		{0, `CLIENT SETNAME "a b"`, "(error) ERR Client names cannot contain spaces, newlines or special characters."},
		{0, "CLIENT GETNAME", "(nil)"}, // names are not kept: no connections here
		{0, "CLIENT ID", "(integer) 1"},
		{0, "CLIENT SETINFO lib-name go-redis", "OK"},
		{0, "CLIENT SETINFO LIB-VER 9.7.0", "OK"},
		{0, "CLIENT SETINFO foo bar", "(error) ERR Unrecognized option 'foo'"},
		{0, "CLIENT SETINFO lib-name", "(error) ERR wrong number of arguments for 'client|setinfo' command"},
		{0, "CLIENT foo", "(error) ERR unknown subcommand 'foo'. Try CLIENT HELP."},
		{0, "CLIENT INFO", `"id=1 addr=127.0.0.1:0 laddr=127.0.0.1:6379 fd=0 name= db=0 resp=2 cmd=client|info\n"`},
	})
}
