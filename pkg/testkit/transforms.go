package testkit

// Connector-file fragments for the format-converting transforms, shared by
// the transform package's tests and the runner's end-to-end format tests.

// ProtoConvertTOML is a complete [transforms.proto_convert] table converting
// source to target format; extra lines (schema_path, message_type, ...) are
// added to the table before its conversion_options.
func ProtoConvertTOML(source, target, extra string) string {
	return `[transforms.proto_convert]
enabled = true
source_format = "` + source + `"
target_format = "` + target + `"
include_paths = []
preserve_unknown_fields = false
` + extra + `
[transforms.proto_convert.conversion_options]
validate_messages = true
pretty_json = false
include_metadata = false
type_url_prefix = "type.googleapis.com"
strict_mode = true
`
}

// AvroConvertTOML is a complete [transforms.avro_convert] table converting
// source to target format; extra lines (schema_path, ...) are added to the
// table before its conversion_options.
func AvroConvertTOML(source, target, extra string) string {
	return `[transforms.avro_convert]
enabled = true
source_format = "` + source + `"
target_format = "` + target + `"
` + extra + `
[transforms.avro_convert.conversion_options]
pretty_json = false
include_metadata = false
strict_mode = false
`
}
