package faults_test

import (
	"fmt"
	"time"

	"github.com/locksim/locksim/faults"
)

// A hand-written plan is decoded strictly, then validated against the world
// it will run in.
func ExampleDecode() {
	shape := faults.Shape{Nodes: 5, Replication: 3, Hosts: 3, Clients: 3, Duration: 10 * time.Minute}
	plan, err := faults.Decode([]byte(`{
		"network": {"loss_ppm": 50000},
		"events": [
			{"at": 60000000000, "kind": "pause", "client": 0, "for": 90000000000},
			{"at": 61000000000, "kind": "crash", "node": 7, "for": 1000000000}
		]
	}`))
	fmt.Println(err)
	fmt.Println(plan.Faults(), plan.Size())
	fmt.Println(plan.Validate(shape))
	// Output:
	// <nil>
	// [loss crash pause] 3
	// plan: events[1].node 7 out of range (5 nodes)
}

// Swarm draws only the faults of the classes it is given.
func ExampleSwarm() {
	classes, err := faults.ParseClasses("crash,pause")
	if err != nil {
		panic(err)
	}
	shape := faults.Shape{Nodes: 5, Replication: 3, Hosts: 3, Clients: 3, Duration: 10 * time.Minute}
	plan := faults.Swarm(42, classes, shape)
	fmt.Println(faults.Allow(classes...).Check(plan), plan.Validate(shape))
	fmt.Println(faults.Allow(classes...).Faults())
	// Output:
	// <nil> <nil>
	// [crash pause points]
}
