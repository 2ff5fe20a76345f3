package v09

import (
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/wire09"
)

// identifier turns a stream or topic string into a wire identifier (api.ParseIdentifier). Parsed
// identifiers are kept, so hot paths neither re-parse nor allocate.
func (c *client) identifier(what, s string) (wire09.Identifier, error) {
	if v, ok := c.ids.Load(s); ok {
		return v.(wire09.Identifier), nil
	}
	id, err := parseIdentifier(s)
	if err != nil {
		return wire09.Identifier{}, fmt.Errorf("%s %q: %w", what, s, err)
	}
	c.ids.Store(s, id)
	return id, nil
}

func parseIdentifier(s string) (wire09.Identifier, error) {
	n, numeric, err := api.ParseIdentifier(s)
	switch {
	case err != nil:
		return wire09.Identifier{}, err
	case numeric:
		return wire09.NumericID(n), nil
	}
	return wire09.NamedID(s), nil
}

// groupIdentifier is a consumer group's identifier: always a name, since the server assigns
// group ids ("5" is an id as a stream but a name as a group, hence a cache of its own).
func (c *client) groupIdentifier(group string) (wire09.Identifier, error) {
	if v, ok := c.groupIDs.Load(group); ok {
		return v.(wire09.Identifier), nil
	}
	if group == "" || len(group) > api.MaxHeaderFieldLen {
		return wire09.Identifier{}, fmt.Errorf("consumer group %q: %w: a name must be 1..255 bytes", group, api.ErrInvalidIdentifier)
	}
	id := wire09.NamedID(group)
	c.groupIDs.Store(group, id)
	return id, nil
}

// groupRef resolves the three identifiers of a group operation.
func (c *client) groupRef(stream, topic, group string) (wire09.GroupRef, error) {
	t, err := c.topicRef(stream, topic)
	if err != nil {
		return wire09.GroupRef{}, err
	}
	g, err := c.groupIdentifier(group)
	if err != nil {
		return wire09.GroupRef{}, err
	}
	return wire09.GroupRef{TopicRef: t, GroupID: g}, nil
}

// topicRef resolves a stream and topic pair.
func (c *client) topicRef(stream, topic string) (wire09.TopicRef, error) {
	s, err := c.identifier("stream", stream)
	if err != nil {
		return wire09.TopicRef{}, err
	}
	t, err := c.identifier("topic", topic)
	if err != nil {
		return wire09.TopicRef{}, err
	}
	return wire09.TopicRef{StreamID: s, TopicID: t}, nil
}
