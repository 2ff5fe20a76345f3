package codec

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// protobuf-go (v1.36) panics ("cannot convert nil to map key") on a map entry
// that carries its key and then field 1 again with another wire type: it
// reads the second one as an unknown field but has already overwritten the
// key with nothing. checkMapEntries runs before proto.Unmarshal and rejects
// every map entry whose key or value has the wrong wire type, as upstream's
// decoder (prost) does. It walks only the parts of a message that can hold a
// map; for a schema without maps it does nothing.

// maxProtoMapWalkDepth matches protobuf-go's default recursion limit; deeper
// input is left to proto.Unmarshal, which rejects it.
const maxProtoMapWalkDepth = 10000

// typesHoldingMaps returns the message types reachable from md from which a
// map field is reachable (md itself included).
func typesHoldingMaps(md protoreflect.MessageDescriptor) map[protoreflect.FullName]bool {
	var all []protoreflect.MessageDescriptor
	seen := map[protoreflect.FullName]bool{}
	var collect func(md protoreflect.MessageDescriptor)
	collect = func(md protoreflect.MessageDescriptor) {
		if md == nil || seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		all = append(all, md)
		for i := range md.Fields().Len() {
			fd := md.Fields().Get(i)
			if fd.IsMap() {
				collect(fd.MapValue().Message())
			} else {
				collect(fd.Message())
			}
		}
	}
	collect(md)
	holds := map[protoreflect.FullName]bool{}
	for changed := true; changed; { // until a fixed point: types may be recursive
		changed = false
		for _, m := range all {
			if holds[m.FullName()] {
				continue
			}
			for i := range m.Fields().Len() {
				fd := m.Fields().Get(i)
				if fd.IsMap() || (fd.Message() != nil && holds[fd.Message().FullName()]) {
					holds[m.FullName()], changed = true, true
					break
				}
			}
		}
	}
	return holds
}

// checkMapEntries walks b as a message of type md. Malformed wire data it
// cannot walk is left for proto.Unmarshal to report.
func checkMapEntries(b []byte, md protoreflect.MessageDescriptor, holds map[protoreflect.FullName]bool, depth int) error {
	if depth > maxProtoMapWalkDepth || !holds[md.FullName()] {
		return nil
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		fd := md.Fields().ByNumber(num)
		var inner []byte
		nested := fd != nil && holdsMaps(fd, holds)
		switch {
		case nested && typ == protowire.BytesType && fd.Kind() == protoreflect.MessageKind:
			inner, n = protowire.ConsumeBytes(b)
		case nested && typ == protowire.StartGroupType && fd.Kind() == protoreflect.GroupKind:
			inner, n = protowire.ConsumeGroup(num, b)
		default:
			nested = false
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil
		}
		b = b[n:]
		switch {
		case !nested:
		case fd.IsMap():
			if err := checkMapEntry(inner, fd, holds, depth+1); err != nil {
				return err
			}
		default:
			if err := checkMapEntries(inner, fd.Message(), holds, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// holdsMaps: fd is a map, or a message or group field of a type that can hold one.
func holdsMaps(fd protoreflect.FieldDescriptor, holds map[protoreflect.FullName]bool) bool {
	return fd.IsMap() || (fd.Message() != nil && holds[fd.Message().FullName()])
}

func checkMapEntry(b []byte, fd protoreflect.FieldDescriptor, holds map[protoreflect.FullName]bool, depth int) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		var part protoreflect.FieldDescriptor
		switch num {
		case 1:
			part = fd.MapKey()
		case 2:
			part = fd.MapValue()
		}
		if part != nil && typ != wireTypeOf(part.Kind()) {
			return fmt.Errorf("map field %s: an entry's %s has wire type %d, want %d", fd.Name(), part.Name(), typ, wireTypeOf(part.Kind()))
		}
		if part != nil && part.Kind() == protoreflect.MessageKind {
			value, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return nil
			}
			if err := checkMapEntries(value, part.Message(), holds, depth+1); err != nil {
				return err
			}
			b = b[m:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return nil
		}
		b = b[n:]
	}
	return nil
}

// wireTypeOf is the wire type a field of kind k is written with (packed
// repeated fields aside, which a map key or value never is).
func wireTypeOf(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	default: // bool, enum and the varint integers
		return protowire.VarintType
	}
}
