package v09

import (
	"fmt"

	"github.com/iggy-connectors-go/runtime/pkg/iggyclient/api"
	"github.com/iggy-connectors-go/runtime/pkg/iggywire"
)

// identifier turns a stream or topic string into a wire identifier (api.ParseIdentifier). Parsed
// identifiers are kept, so hot paths neither re-parse nor allocate.
func (c *client) identifier(what, s string) (iggywire.Identifier, error) {
	if v, ok := c.ids.Load(s); ok {
		return v.(iggywire.Identifier), nil
	}
	id, err := parseIdentifier(s)
	if err != nil {
		return iggywire.Identifier{}, fmt.Errorf("%s %q: %w", what, s, err)
	}
	c.ids.Store(s, id)
	return id, nil
}

func parseIdentifier(s string) (iggywire.Identifier, error) {
	n, numeric, err := api.ParseIdentifier(s)
	switch {
	case err != nil:
		return iggywire.Identifier{}, err
	case numeric:
		return iggywire.NumericID(n), nil
	}
	return iggywire.NamedID(s), nil
}

// groupIdentifier is a consumer group's identifier: always a name, since the server assigns
// group ids ("5" is an id as a stream but a name as a group, hence a cache of its own).
func (c *client) groupIdentifier(group string) (iggywire.Identifier, error) {
	if v, ok := c.groupIDs.Load(group); ok {
		return v.(iggywire.Identifier), nil
	}
	if group == "" || len(group) > api.MaxHeaderFieldLen {
		return iggywire.Identifier{}, fmt.Errorf("consumer group %q: %w: a name must be 1..255 bytes", group, api.ErrInvalidIdentifier)
	}
	id := iggywire.NamedID(group)
	c.groupIDs.Store(group, id)
	return id, nil
}

// groupRef resolves the three identifiers of a group operation.
func (c *client) groupRef(stream, topic, group string) (iggywire.GroupRef, error) {
	t, err := c.topicRef(stream, topic)
	if err != nil {
		return iggywire.GroupRef{}, err
	}
	g, err := c.groupIdentifier(group)
	if err != nil {
		return iggywire.GroupRef{}, err
	}
	return iggywire.GroupRef{TopicRef: t, GroupID: g}, nil
}

// topicRef resolves a stream and topic pair.
func (c *client) topicRef(stream, topic string) (iggywire.TopicRef, error) {
	s, err := c.identifier("stream", stream)
	if err != nil {
		return iggywire.TopicRef{}, err
	}
	t, err := c.identifier("topic", topic)
	if err != nil {
		return iggywire.TopicRef{}, err
	}
	return iggywire.TopicRef{StreamID: s, TopicID: t}, nil
}
