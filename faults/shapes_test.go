package faults

import "time"

// testShapes are the worlds generators are tested in: the blog post's
// default, the smallest possible, and a wider one.
var testShapes = []Shape{
	{Nodes: 5, Replication: 3, Hosts: 3, Clients: 3, Duration: 10 * time.Minute},
	{Nodes: 1, Replication: 1, Hosts: 1, Clients: 1, Duration: time.Nanosecond},
	{Nodes: 9, Replication: 5, Hosts: 4, Clients: 8, Duration: 30 * time.Minute},
}

// defaultShape is testShapes[0].
var defaultShape = testShapes[0]

// classFaults is the specification of what each class allows: a generator
// given the class may produce exactly these faults (Plan.Faults names).
var classFaults = []struct {
	class  Class
	faults []string
}{
	{ClassNone, nil},
	{ClassLoss, []string{"loss", "duplicate", "latency"}},
	{ClassAmbiguous, []string{"reply-loss"}},
	{ClassCrash, []string{"crash"}},
	{ClassAmnesia, []string{"amnesia"}},
	{ClassPartition, []string{"partition", "clog"}},
	{ClassSkew, []string{"offset", "drift"}},
	{ClassJump, []string{"jump"}},
	{ClassLocalTime, []string{"localtime"}},
	{ClassPause, []string{"pause", "points"}},
	{ClassThreads, []string{"threads"}},
	{ClassTopology, []string{"topology"}},
	{ClassAll, []string{"loss", "duplicate", "latency", "reply-loss", "crash", "amnesia", "partition",
		"clog", "offset", "drift", "jump", "pause", "points", "threads", "topology", "localtime"}},
}
