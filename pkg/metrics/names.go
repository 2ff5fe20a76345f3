package metrics

// Family names, help texts and buckets exactly as upstream registers them
// (core/connectors/runtime/src/metrics.rs). Upstream's OpenMetrics encoder
// appends a period to every help text and "_total" to counter samples; the
// Go names below carry both already, so every exposition format shows the
// same names and help as upstream.
const (
	FamilySourcesTotal   = "iggy_connectors_sources_total"
	FamilySourcesRunning = "iggy_connectors_sources_running"
	FamilySinksTotal     = "iggy_connectors_sinks_total"
	FamilySinksRunning   = "iggy_connectors_sinks_running"

	FamilyMessagesProduced  = "iggy_connector_messages_produced_total"
	FamilyMessagesSent      = "iggy_connector_messages_sent_total"
	FamilyMessagesConsumed  = "iggy_connector_messages_consumed_total"
	FamilyMessagesProcessed = "iggy_connector_messages_processed_total"
	FamilyMessagesFiltered  = "iggy_connector_messages_filtered_total"
	FamilyErrors            = "iggy_connector_errors_total"
	FamilyStageDuration     = "iggy_connector_stage_duration_seconds"

	// Supervisor additions (docs/architecture.md, decision 10); not in upstream.
	FamilyConnectorUp       = "iggy_connector_up"
	FamilyConnectorRestarts = "iggy_connector_restarts_total"

	// Failed records (docs/architecture.md, decision 14); not in upstream.
	FamilyDeadLettered = "iggy_connector_dead_lettered_total"
	// FamilyLogLinesDropped counts plugin log lines dropped over the runner's limit (ours).
	FamilyLogLinesDropped = "iggy_connector_log_lines_dropped_total"
	// FamilyTapDropped counts live-tap events dropped because a tap client did not keep up (ours).
	FamilyTapDropped = "iggy_connector_tap_dropped_total"

	// Run-time operations (docs/architecture.md, decision 13); not in upstream. One series per state
	// (ConnectorStates, label LabelState), 1 for the current one.
	FamilyConnectorState = "iggy_connector_state"
	// Consumer lag (docs/architecture.md, decision 13); not in upstream.
	FamilyConsumerLag = "iggy_connector_consumer_lag"

	// Safe changes at run time (docs/runtime-changes.md); not in upstream.
	// FamilyThrottled: seconds a connector waited for its [rate_limit] (runner and supervisor).
	FamilyThrottled = "iggy_connector_throttled_seconds_total"
	// FamilyConfigRollbacks: activations the supervisor rolled back (supervisor only).
	FamilyConfigRollbacks = "iggy_connector_config_rollbacks_total"
	// FamilyRestartLimitReached: 1 while the supervisor gave up restarting the connector
	// (IGGY_SUPERVISOR_RESTART_LIMIT), else 0; present only with a limit set (supervisor only).
	FamilyRestartLimitReached = "iggy_connector_restart_limit_reached"
)

// Label names.
const (
	LabelConnectorKey  = "connector_key"
	LabelConnectorType = "connector_type"
	LabelStage         = "stage"
	LabelState         = "state" // of FamilyConnectorState
	LabelStream        = "stream"
	LabelTopic         = "topic"
	LabelPartition     = "partition"
)

// Connector kinds, the values of the connector_type label.
const (
	KindSource = "source"
	KindSink   = "sink"
)

// Stage label values of the stage histogram (docs/pipeline.md §6).
const (
	StageDecode    = "decode"
	StagePrepare   = "prepare"
	StageFFI       = "ffi"        // sinks only
	StageIggySend  = "iggy_send"  // sources only
	StageStateSave = "state_save" // sources only
	StageTotal     = "total"
)

// Stage label values of the dead-letter counter: where a record failed (docs/architecture.md, decision 14).
const (
	DeadLetterDecode    = "decode"
	DeadLetterTransform = "transform"
	DeadLetterEncode    = "encode"
	DeadLetterConsume   = "consume" // sinks: the plugin refused the record
	DeadLetterSend      = "send"    // sources: Iggy refused the record
)

// DeadLetterStages are the dead-letter stage values, in the cells' order.
var DeadLetterStages = [numDeadLetterStages]string{DeadLetterDecode, DeadLetterTransform, DeadLetterEncode, DeadLetterConsume, DeadLetterSend}

// StageBuckets are the histogram upper bounds in seconds (+Inf is implicit).
var StageBuckets = []float64{
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 5,
}

const (
	helpSourcesTotal      = "Total configured source connectors."
	helpSourcesRunning    = "Sources in Running status."
	helpSinksTotal        = "Total configured sink connectors."
	helpSinksRunning      = "Sinks in Running status."
	helpMessagesProduced  = "Messages received from source plugin poll."
	helpMessagesSent      = "Messages sent to Iggy (source)."
	helpMessagesConsumed  = "Messages consumed from Iggy (sink)."
	helpMessagesProcessed = "Messages processed and sent to sink plugin."
	helpMessagesFiltered  = "Messages intentionally dropped by transforms returning Ok(None)."
	helpErrors            = "Errors encountered."
	helpStageDuration     = "Per-batch processing stage duration in seconds."
	helpConnectorUp       = "Whether the connector's runner process answers its endpoint (1) or not (0)."
	helpConnectorRestarts = "Times the supervisor restarted the connector's runner process."
	helpDeadLettered      = "Failed records sent to the dead-letter topic (or logged and skipped without one), by stage."
	helpConnectorState    = "The connector's lifecycle state: 1 for the current state, 0 for the others."
	helpLogLinesDropped   = "Plugin log lines dropped over the per-second limit (IGGY_CONNECTOR_PLUGIN_LOG_RATE)."
	helpTapDropped        = "Live-tap events dropped because a tap client's buffer was full (the pipeline never waits for a tap)."
	helpConsumerLag       = "Messages in the partition after the last one the sink polled (the partition's current offset minus the last polled offset)."
	helpThrottled         = "Seconds the connector waited for its rate limit ([rate_limit])."
	helpConfigRollbacks   = "Config activations that failed their probe and were rolled back to the previous version."
	helpRestartLimit      = "Whether the supervisor stopped restarting the connector after IGGY_SUPERVISOR_RESTART_LIMIT restarts within IGGY_SUPERVISOR_RESTART_WINDOW (1), until a manual start or restart."
)

// familyOrder is upstream's registration order, which is also the order of
// the families in its /metrics body; the supervisor's additions follow.
var familyOrder = []string{
	FamilySourcesTotal, FamilySourcesRunning, FamilySinksTotal, FamilySinksRunning,
	FamilyMessagesProduced, FamilyMessagesSent, FamilyMessagesConsumed, FamilyMessagesProcessed,
	FamilyMessagesFiltered, FamilyErrors, FamilyStageDuration,
	FamilyConnectorUp, FamilyConnectorRestarts, FamilyDeadLettered, FamilyConnectorState, FamilyConsumerLag,
	FamilyLogLinesDropped, FamilyThrottled, FamilyConfigRollbacks, FamilyRestartLimitReached, FamilyTapDropped,
}
