package etcdv3

// fixedMutex: this build's concurrency.Mutex checks its own key after a
// wait (etcd 3.5 and later, commit b14c7cd44). internal/outoftree rewrites
// this file to false for its 3.4.3 build.
const fixedMutex = true
