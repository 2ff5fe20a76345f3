package metrics

// SumReplicas is one connector's /stats object over several runners of it (replicas in one
// consumer group, active/standby sources): the first's identity, every counter, memory and CPU
// summed; a counter absent from all stays absent. Status, pid, last error and times are the
// caller's to set.
func SumReplicas(replicas []ConnectorStats) ConnectorStats {
	if len(replicas) == 0 {
		return ConnectorStats{}
	}
	out := replicas[0]
	out.MessagesProduced, out.MessagesSent, out.MessagesConsumed, out.MessagesProcessed = nil, nil, nil, nil
	out.MessagesFiltered, out.MessagesDeadLettered, out.Lag, out.ThrottledSeconds = nil, nil, nil, nil
	out.LogLinesDropped, out.TapDropped = nil, nil
	out.Errors, out.MemoryUsage, out.CPUUsage, out.Restarts = 0, 0, 0, 0
	for _, r := range replicas {
		addCount(&out.MessagesProduced, r.MessagesProduced)
		addCount(&out.MessagesSent, r.MessagesSent)
		addCount(&out.MessagesConsumed, r.MessagesConsumed)
		addCount(&out.MessagesProcessed, r.MessagesProcessed)
		addCount(&out.MessagesFiltered, r.MessagesFiltered)
		addCount(&out.MessagesDeadLettered, r.MessagesDeadLettered)
		addCount(&out.Lag, r.Lag)
		if r.ThrottledSeconds != nil {
			out.ThrottledSeconds = new(float64(valueOr(out.ThrottledSeconds) + *r.ThrottledSeconds))
		}
		addCount(&out.LogLinesDropped, r.LogLinesDropped)
		addCount(&out.TapDropped, r.TapDropped)
		out.Errors += r.Errors
		out.Restarts += r.Restarts
		out.MemoryUsage += r.MemoryUsage
		out.CPUUsage += r.CPUUsage
	}
	return out
}

func addCount(sum **uint64, v *uint64) {
	if v == nil {
		return
	}
	if *sum == nil {
		*sum = new(uint64)
	}
	**sum += *v
}

func valueOr(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
