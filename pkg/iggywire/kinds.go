package iggywire

// Kinds of user-header and option values (and of their keys), the same in 0.8 and 0.9.
const (
	KindRaw     uint8 = 1
	KindString  uint8 = 2
	KindBool    uint8 = 3
	KindInt8    uint8 = 4
	KindInt16   uint8 = 5
	KindInt32   uint8 = 6
	KindInt64   uint8 = 7
	KindInt128  uint8 = 8
	KindUint8   uint8 = 9
	KindUint16  uint8 = 10
	KindUint32  uint8 = 11
	KindUint64  uint8 = 12
	KindUint128 uint8 = 13
	KindFloat32 uint8 = 14
	KindFloat64 uint8 = 15
)

// KindSize is the exact value size of a fixed-size kind, 0 for the variable ones (raw, string)
// and for values that are no kind.
func KindSize(kind uint8) int {
	switch kind {
	case KindBool, KindInt8, KindUint8:
		return 1
	case KindInt16, KindUint16:
		return 2
	case KindInt32, KindUint32, KindFloat32:
		return 4
	case KindInt64, KindUint64, KindFloat64:
		return 8
	case KindInt128, KindUint128:
		return 16
	}
	return 0
}
