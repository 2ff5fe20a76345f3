package codec

// Member is one key/value pair of a JSON object.
type Member struct {
	Key   string
	Value any
}

// indexThreshold is the member count above which an OrderedMap keeps a key
// index; below it a linear scan is faster than hashing and saves memory.
const indexThreshold = 16

// OrderedMap is a JSON object that remembers key insertion order. Setting an
// existing key replaces its value in place (the key keeps its position); a
// new key is appended. Keys are unique.
//
// The zero value is an empty map ready to use.
type OrderedMap struct {
	members []Member
	index   map[string]int // nil until len(members) > indexThreshold
}

// NewOrderedMap returns an empty map with room for capacity members.
func NewOrderedMap(capacity int) *OrderedMap {
	return &OrderedMap{members: make([]Member, 0, capacity)}
}

// Len returns the number of members.
func (m *OrderedMap) Len() int { return len(m.members) }

// Members returns the members in order. The slice is the map's own storage:
// callers must not modify it or keep it across changes to the map.
func (m *OrderedMap) Members() []Member { return m.members }

// Keys returns the keys in order, in a new slice.
func (m *OrderedMap) Keys() []string {
	keys := make([]string, len(m.members))
	for i, member := range m.members {
		keys[i] = member.Key
	}
	return keys
}

func (m *OrderedMap) find(key string) int {
	if m.index != nil {
		if i, ok := m.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range m.members {
		if m.members[i].Key == key {
			return i
		}
	}
	return -1
}

// Get returns the value stored under key.
func (m *OrderedMap) Get(key string) (any, bool) {
	if i := m.find(key); i >= 0 {
		return m.members[i].Value, true
	}
	return nil, false
}

// Has reports whether key is present.
func (m *OrderedMap) Has(key string) bool { return m.find(key) >= 0 }

// Set stores value under key: in place when the key exists, appended
// otherwise.
func (m *OrderedMap) Set(key string, value any) {
	if i := m.find(key); i >= 0 {
		m.members[i].Value = value
		return
	}
	m.members = append(m.members, Member{Key: key, Value: value})
	if m.index != nil {
		m.index[key] = len(m.members) - 1
	} else if len(m.members) > indexThreshold {
		m.rebuildIndex()
	}
}

// Delete removes key and reports whether it was present. The other members
// keep their order.
func (m *OrderedMap) Delete(key string) bool {
	i := m.find(key)
	if i < 0 {
		return false
	}
	last := len(m.members) - 1
	copy(m.members[i:], m.members[i+1:])
	m.members[last] = Member{} // drop the stale reference for the GC
	m.members = m.members[:last]
	if m.index != nil {
		m.rebuildIndex()
	}
	return true
}

// Retain keeps only the members for which keep returns true, preserving
// their order.
func (m *OrderedMap) Retain(keep func(key string, value any) bool) {
	kept := m.members[:0]
	for _, member := range m.members {
		if keep(member.Key, member.Value) {
			kept = append(kept, member)
		}
	}
	clear(m.members[len(kept):])
	m.members = kept
	if m.index != nil {
		m.rebuildIndex()
	}
}

// Remove deletes key and returns the value it held.
func (m *OrderedMap) Remove(key string) (any, bool) {
	i := m.find(key)
	if i < 0 {
		return nil, false
	}
	value := m.members[i].Value
	m.Delete(key)
	return value, true
}

func (m *OrderedMap) rebuildIndex() {
	if len(m.members) <= indexThreshold {
		m.index = nil
		return
	}
	m.index = make(map[string]int, len(m.members))
	for i, member := range m.members {
		m.index[member.Key] = i
	}
}

// MarshalJSON writes the object as compact JSON, in member order, so an
// OrderedMap nested in other Go values still serializes correctly.
func (m *OrderedMap) MarshalJSON() ([]byte, error) {
	return AppendJSON(nil, m)
}

// Clone returns a deep copy of a JSON value of the model described in the
// package documentation. Values of other types are returned as they are.
func Clone(v any) any {
	switch t := v.(type) {
	case *OrderedMap:
		if t == nil {
			return t
		}
		out := &OrderedMap{members: make([]Member, len(t.members))}
		for i, member := range t.members {
			out.members[i] = Member{Key: member.Key, Value: Clone(member.Value)}
		}
		out.rebuildIndex()
		return out
	case []any:
		if t == nil {
			return t
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Clone(e)
		}
		return out
	default:
		return v
	}
}
