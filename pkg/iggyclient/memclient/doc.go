// Package memclient is an iggyclient.Client over an in-memory log, for fast unit tests of the
// code that drives a client (the runner's sink and source loops): a Broker holds streams, topics,
// partitions and their messages, consumer groups with members and stored offsets; every Client
// dialled from it is one connection with its own group memberships, as a real client is.
//
// It keeps the rules the pumps depend on, as Iggy has them: a group's partitions are dealt to its
// members (partition i to member i mod n, anew at every join, leave, Close or partition change:
// an eager rebalance, without Iggy's cooperative hand-over); a poll without a partition reads the
// member's partitions round robin from the stored offset + 1; a poll naming a partition
// (PollRequest.At) that is not the member's is NotOwned; only the member that owns a partition
// may store its offset, and not past its last message; StoreFirst is stored before the poll and
// heard by OnStored; balanced sends go round robin, keyed ones to XXH32(key) mod the partition
// count. Partitions are numbered from 0, as Iggy 0.8 numbers them. Retention, timestamps polls,
// TLS, reconnects and wire formats are not modelled: for those the tests use the dev broker
// (pkg/devbroker) with the real clients.
//
// Broker.OnRequest sees every request before it is served and may fail it, which is how a test
// injects a lost request or checks an invariant at the moment a store is made; Broker.OnServed
// hears every store and send once it is held, which is what a test waits on.
//
// It lives under pkg/iggyclient, beside the real implementations of the interface it implements,
// rather than in pkg/testkit: it is a Client like v08 and v09, imports nothing but the api, and
// so costs a test package neither the dev broker, the SDK nor processes.
//
// Files: broker.go (the Broker: its data, the test helpers, dealing partitions), client.go (the
// Client: api.Client on the Broker).
package memclient
