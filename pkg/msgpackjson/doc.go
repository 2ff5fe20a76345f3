// Package msgpackjson converts MessagePack documents to JSON text and back, losslessly for
// everything a connector's state holds, so an operator can read and edit a source's state (the
// plugin SDK encodes it as MessagePack) through the supervisor's JSON API.
//
// Mapping (MessagePack → JSON; FromJSON reverses it):
//   - nil, bool, str, array: null, true/false, a string, an array. A str that is not valid UTF-8
//     has its bad bytes replaced by U+FFFD, as encoding/json does.
//   - integers: JSON integers, exact over the whole int64 and uint64 range.
//   - float32 and float64: JSON numbers that always carry a fraction or an exponent ("2.0"), so
//     they come back as float64 rather than as integers. NaN and infinities have no JSON form:
//     ToJSON refuses them (ErrNotJSON).
//   - a map whose keys are all strings: a JSON object, members in the document's order.
//   - any other map (integer, binary, array keys ...): {"$map": [[key, value], ...]}.
//   - bin: {"$bin": "<standard base64>"}; ext: {"$ext": {"type": n, "data": "<base64>"}}.
//   - a string-keyed map that would read as one of these tagged objects (exactly one member,
//     named "$map", "$bin" or "$ext") is written in the "$map" form, so nothing is ambiguous.
//
// Files: tojson.go (MessagePack to JSON), fromjson.go (JSON to MessagePack).
package msgpackjson
