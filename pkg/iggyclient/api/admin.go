package api

import (
	"context"
	"errors"
)

// Admin reads and rewrites a consumer group's stored offsets, for an operator tool (the
// supervisor's offsets routes, the runner's --check) rather than a pump. It shares the
// connection handling of Client: Dial's reconnects, classified errors and context handling.
type Admin interface {
	// StreamExists reports whether the stream exists.
	StreamExists(ctx context.Context, stream string) (bool, error)
	// Partitions lists the topic's partitions in id order; ErrNotFound when the stream or topic
	// is missing.
	Partitions(ctx context.Context, stream, topic string) ([]PartitionInfo, error)
	// GroupOffset is the group's stored offset on one partition; ok is false when none is stored
	// (or the group does not exist yet). Reading needs no membership.
	GroupOffset(ctx context.Context, stream, topic, group string, partitionID uint32) (offset uint64, ok bool, err error)
	// SetGroupOffsets stores the given offset per partition for the group: it creates and joins
	// the group, stores each offset and leaves again. A partition another member of the group
	// owns gives ErrPartitionOwned.
	SetGroupOffsets(ctx context.Context, stream, topic, group string, offsets map[uint32]uint64) error
	// DeleteGroupOffsets removes the group's stored offsets on the given partitions (nothing
	// stored is fine), joining and leaving like SetGroupOffsets. A group that does not exist has
	// nothing stored.
	DeleteGroupOffsets(ctx context.Context, stream, topic, group string, partitions []uint32) error
	// Close ends the connection.
	Close() error
}

// PartitionInfo is one partition as the topic describes it.
type PartitionInfo struct {
	ID uint32
	// CurrentOffset is the offset of the partition's last message (0 also when it is empty).
	CurrentOffset uint64
	Messages      uint64
}

var (
	// ErrPartitionOwned: another member of the consumer group owns the partition, so its offset
	// cannot be written from here (the connector, or a replica of it, is still consuming).
	ErrPartitionOwned = errors.New("partition is assigned to another member of the consumer group")
	// ErrOffsetOutOfRange: the offset is past the partition's last message, or the partition is
	// empty.
	ErrOffsetOutOfRange = errors.New("offset is beyond the partition's last message")
)
