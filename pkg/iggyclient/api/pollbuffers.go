package api

// PollBuffers is memory a caller hands back to Poll (PollRequest.Reuse) once it is done with the
// previous batch, so a steady poll loop allocates nothing per message: the reply is read into
// Reply, decoded into Msgs and Headers, and the Batch points into them. A Batch polled with
// buffers is valid only until the next Poll with the same buffers. The zero value is ready.
//
// The fields belong to the client implementation that fills them; callers never touch them.
type PollBuffers struct {
	Request []byte
	Reply   []byte
	Msgs    []InMessage
	Headers []HeaderEntry
}
