package devbroker

// SetClock replaces the clock (µs since the Unix epoch) that stamps what the server stores, for
// tests of the external package that step time instead of sleeping. Call it before Start.
func SetClock(s *Server, clock func() uint64) { s.currentData().clock = clock }
