package codec

// What the Avro direct paths made of an input, for the tests that compare them with the slow
// paths (avro_direct_test.go).
const (
	AvroDirectOK       = int(avroDirectOK)
	AvroDirectInvalid  = int(avroDirectInvalid)
	AvroDirectUnproven = int(avroDirectUnproven)
)

// AvroJSONText is the sink's direct path with its verdict: DecodeJSON and AppendJSON in one walk.
func AvroJSONText(s *AvroSchema, dst, b []byte) ([]byte, int) {
	out, res := s.appendJSONText(dst, b)
	return out, int(res)
}

// AvroEncodedJSON is the source's direct path with its verdict: ParseJSON and EncodeJSON in one
// walk.
func AvroEncodedJSON(s *AvroSchema, dst, b []byte) ([]byte, int) {
	out, res := s.appendEncodedJSON(dst, b)
	return out, int(res)
}
