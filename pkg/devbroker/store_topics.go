package devbroker

import "github.com/iggy-connectors-go/runtime/pkg/iggywire"

// addStream adds a stream named name; callers hold store.mu for writing.
func (s *store) addStream(name string) (*stream, error) {
	if _, taken := s.streamsByName[name]; taken {
		return nil, iggywire.StatusStreamNameAlreadyExists
	}
	id := allocID(&s.streams, &s.freeStreamIDs)
	st := &stream{id: id, name: name, createdAt: s.clock(), topicsByName: map[string]*topic{}}
	s.streams[id], s.streamsByName[name] = st, st
	return st, nil
}

// removeStream removes st; callers hold store.mu for writing.
func (s *store) removeStream(st *stream) {
	freeSlot(s.streams, &s.freeStreamIDs, s.streamsByName, st.id, st.name)
}

// topicSettings is a topic to create: zero expiry and size mean the defaults.
type topicSettings struct {
	partitions        uint32
	compression       uint8
	messageExpiry     uint64
	maxTopicSize      uint64
	replicationFactor uint8
}

// valid checks the settings as the server does before it creates anything: at most 1000
// partitions, and a maximum size that is 0, unlimited or at least the segment size.
func (cfg topicSettings) valid() error {
	if cfg.partitions > maxPartitions {
		return invalid(iggywire.StatusTooManyPartitions)
	}
	if cfg.maxTopicSize != 0 && cfg.maxTopicSize != unlimitedSize && cfg.maxTopicSize < minTopicSize {
		return invalid(iggywire.StatusInvalidTopicSize)
	}
	return nil
}

// addTopic adds a topic to st with settings cfg checked by validTopic; callers hold store.mu for
// writing.
func (s *store) addTopic(st *stream, name string, cfg topicSettings) (*topic, error) {
	if err := cfg.valid(); err != nil {
		return nil, err
	}
	if _, taken := st.topicsByName[name]; taken {
		return nil, iggywire.StatusTopicNameAlreadyExists
	}
	if cfg.messageExpiry == 0 {
		cfg.messageExpiry = neverExpire
	}
	if cfg.maxTopicSize == 0 {
		cfg.maxTopicSize = unlimitedSize
	}
	if cfg.replicationFactor == 0 {
		cfg.replicationFactor = 1
	}
	id := allocID(&st.topics, &st.freeTopicIDs)
	t := &topic{
		id:                id,
		name:              name,
		createdAt:         s.clock(),
		compression:       cfg.compression,
		messageExpiry:     cfg.messageExpiry,
		maxTopicSize:      cfg.maxTopicSize,
		replicationFactor: cfg.replicationFactor,
	}
	t.addPartitions(cfg.partitions, t.createdAt, s.retainBytes)
	st.topics[id], st.topicsByName[name] = t, t
	return t, nil
}

// removeTopic removes t; callers hold store.mu for writing.
func (st *stream) removeTopic(t *topic) {
	freeSlot(st.topics, &st.freeTopicIDs, st.topicsByName, t.id, t.name)
}

// invalidArgument marks a request the store refuses before looking anything up (a partition
// count or topic size out of range): 0.9 answers it in the reply header, before commit, where a
// rejection of the operation itself goes into the result section.
type invalidArgument struct{ status iggywire.Status }

func invalid(s iggywire.Status) error   { return invalidArgument{s} }
func (e invalidArgument) Error() string { return e.status.Error() }
func (e invalidArgument) Unwrap() error { return e.status }

// Snapshots of entities, as the handlers of both protocols encode them.
type (
	streamInfo struct {
		id, topicsCount           uint32
		createdAt, size, messages uint64
		name                      string
		topics                    []topicInfo // GetStream only
	}
	topicInfo struct {
		id, partitionsCount        uint32
		createdAt, expiry, maxSize uint64
		size, messages             uint64
		compression, replication   uint8
		name                       string
		options                    []byte
		partitions                 []partitionInfo // GetTopic and CreateTopic only
	}
	partitionInfo struct {
		id                                 uint32
		createdAt, current, size, messages uint64
	}
)

// appendDetails appends the topic's element (record) and each of its partitions' with the segment
// count the command's reply gives (create 0, get 1), by a protocol's encoders.
func (t topicInfo) appendDetails(dst []byte, segments uint32, topic func([]byte, topicInfo) []byte,
	partition func([]byte, partitionInfo, uint32) []byte) []byte {
	dst = topic(dst, t)
	for _, p := range t.partitions {
		dst = partition(dst, p, segments)
	}
	return dst
}

func (st *stream) info(withTopics bool) streamInfo {
	topics, size, messages := st.stats()
	i := streamInfo{id: st.id, topicsCount: topics, createdAt: st.createdAt, size: size, messages: messages, name: st.name}
	if withTopics {
		for _, t := range st.topics {
			if t != nil {
				i.topics = append(i.topics, t.info(false))
			}
		}
	}
	return i
}

func (t *topic) info(withPartitions bool) topicInfo {
	size, messages := t.stats()
	i := topicInfo{id: t.id, partitionsCount: uint32(len(t.partitions)), createdAt: t.createdAt, expiry: t.messageExpiry,
		maxSize: t.maxTopicSize, size: size, messages: messages, compression: t.compression, replication: t.replicationFactor,
		name: t.name, options: t.options}
	if withPartitions {
		for _, p := range t.partitions {
			size, messages, current := p.snapshot()
			i.partitions = append(i.partitions, partitionInfo{id: p.id, createdAt: p.createdAt, current: current, size: size, messages: messages})
		}
	}
	return i
}

// createStream creates a stream (1012 when the name is taken).
func (s *store) createStream(name string) (streamInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := s.addStream(name)
	if err != nil {
		return streamInfo{}, err
	}
	return st.info(false), nil
}

// deleteStream removes a stream with everything below it (1009 when missing).
func (s *store) deleteStream(id iggywire.Identifier) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.findStream(id)
	if st == nil {
		return iggywire.StatusStreamIDNotFound
	}
	s.removeStream(st)
	return nil
}

// streamInfo is a stream with its topics; false when it is missing.
func (s *store) streamInfo(id iggywire.Identifier) (streamInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.findStream(id)
	if st == nil {
		return streamInfo{}, false
	}
	return st.info(true), true
}

// streamInfos lists every stream in id order.
func (s *store) streamInfos() []streamInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []streamInfo
	for _, st := range s.streams {
		if st != nil {
			out = append(out, st.info(false))
		}
	}
	return out
}

// createTopic creates a topic in a stream: settings out of range are invalid, then 1009 for a
// missing stream and 2013 for a name in use. options is the creator's 0.9 options block, kept to
// answer with.
func (s *store) createTopic(streamID iggywire.Identifier, name string, cfg topicSettings, options []byte) (topicInfo, error) {
	if err := cfg.valid(); err != nil {
		return topicInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.findStream(streamID)
	if st == nil {
		return topicInfo{}, iggywire.StatusStreamIDNotFound
	}
	t, err := s.addTopic(st, name, cfg)
	if err != nil {
		return topicInfo{}, err
	}
	if len(options) > 0 {
		t.options = append([]byte(nil), options...)
	}
	return t.info(true), nil
}

// deleteTopic removes a topic (1009, 2010 when missing).
func (s *store) deleteTopic(ref iggywire.TopicRef) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, t, err := s.resolveTopic(ref)
	if err != nil {
		return err
	}
	st.removeTopic(t)
	return nil
}

// topicInfo is a topic with its partitions; false when it (or its stream) is missing.
func (s *store) topicInfo(ref iggywire.TopicRef) (topicInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, t, err := s.resolveTopic(ref)
	if err != nil {
		return topicInfo{}, false
	}
	return t.info(true), true
}

// topicInfos lists a stream's topics in id order; false when the stream is missing.
func (s *store) topicInfos(streamID iggywire.Identifier) ([]topicInfo, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.findStream(streamID)
	if st == nil {
		return nil, false
	}
	return st.info(true).topics, true
}

// createPartitions adds count partitions (1..1000, else invalid 2015) to a topic, with the next
// ids, and deals every group's partitions anew.
func (s *store) createPartitions(ref iggywire.TopicRef, count uint32) error {
	return s.changePartitions(ref, count, func(t *topic) error {
		t.addPartitions(count, s.clock(), s.retainBytes)
		return nil
	})
}

// deletePartitions removes the last count partitions of a topic (1..1000, else invalid 2015),
// with their messages and offsets, and deals every group's partitions anew; more than the topic
// has is 2019.
func (s *store) deletePartitions(ref iggywire.TopicRef, count uint32) error {
	return s.changePartitions(ref, count, func(t *topic) error {
		if int(count) > len(t.partitions) {
			return iggywire.StatusInvalidPartitionsCount
		}
		kept := len(t.partitions) - int(count)
		clear(t.partitions[kept:])
		t.partitions = t.partitions[:kept]
		return nil
	})
}

// changePartitions runs change on a topic under the write lock, for a count of 1..1000, and then
// deals every group's partitions anew.
func (s *store) changePartitions(ref iggywire.TopicRef, count uint32, change func(t *topic) error) error {
	if count == 0 || count > maxPartitions {
		return invalid(iggywire.StatusTooManyPartitions)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, t, err := s.resolveTopic(ref)
	if err == nil {
		err = change(t)
	}
	if err != nil {
		return err
	}
	s.regroup(t)
	return nil
}

// regroup makes every group of t cover t's partitions and deals them anew; callers hold
// store.mu for writing.
func (s *store) regroup(t *topic) {
	s.groupMu.Lock()
	defer s.groupMu.Unlock()
	for _, g := range t.groups {
		if g != nil {
			g.resetPartitions(uint32(len(t.partitions)))
		}
	}
}
