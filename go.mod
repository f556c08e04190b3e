module github.com/locksim/locksim

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/go-analyze/charts v0.6.4
	github.com/gomodule/redigo v1.9.3
	github.com/redis/go-redis/v9 v9.23.0
	github.com/rogpeppe/go-internal v1.16.0
	github.com/yuin/gopher-lua v1.1.2
	golang.org/x/exp v0.0.0-20261113113407-e3970619a1a4
	pgregory.net/rapid v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/go-analyze/bulk v0.1.6 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/image v0.45.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/tools v0.52.1-0.20261106145633-d407941a339a // indirect
)
