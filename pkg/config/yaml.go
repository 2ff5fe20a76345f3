package config

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MarshalYAML writes a JSON-like value (this package's types) the way upstream's GET
// .../configs/plugin?format=yaml does: serde_json's value through serde_yaml_ng 0.10 (serde_yaml
// 0.9 with libyaml's emitter). That is block style with 2-space indents, sequence items in a
// mapping not indented (`key:\n- 1`), empty collections as [] and {}, map keys sorted, floats as
// ryu writes them (1.0, 1e20), and strings plain unless YAML would read them as something else
// (then 'single quoted'), with escapes needed ("double quoted") or line breaks (| literal).
func MarshalYAML(v any) []byte {
	e := &yamlEmitter{indent: -1, whitespace: true, indention: true}
	e.node(v, false, false)
	// The implicit document end. serde_yaml's to_string never emits the stream end, so the
	// "..." libyaml would write there after a |+ block never comes.
	e.writeIndent()
	return e.buf
}

// yamlEmitter is libyaml's emitter state for the subset serde_yaml uses: no tags, anchors or
// flow collections beyond empty ones, unlimited line width.
type yamlEmitter struct {
	buf        []byte
	column     int
	indent     int
	indents    []int
	whitespace bool // the last character written is a space or a line start
	indention  bool // only indentation written on this line so far
	flowLevel  int
	mapping    bool // the node being written is a mapping value or key
	simpleKey  bool // the node being written is a simple mapping key
}

type yamlStyle int

const (
	yamlAny yamlStyle = iota
	yamlPlain
	yamlSingle
	yamlDouble
	yamlLiteral
)

func (e *yamlEmitter) node(v any, mapping, simpleKey bool) {
	e.mapping, e.simpleKey = mapping, simpleKey
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 || e.flowLevel > 0 {
			e.emptyFlow("{", "}")
			return
		}
		e.increaseIndent(false, false)
		for _, k := range sortedKeys(t) {
			e.writeIndent()
			if e.simpleKeyOK(k) {
				e.node(k, true, true)
				e.writeIndicator(":", false, false, false)
			} else {
				e.writeIndicator("?", true, false, true)
				e.node(k, true, false)
				e.writeIndent()
				e.writeIndicator(":", true, false, true)
			}
			e.node(t[k], true, false)
		}
		e.popIndent()
	case []any:
		if len(t) == 0 || e.flowLevel > 0 {
			e.emptyFlow("[", "]")
			return
		}
		e.increaseIndent(false, e.mapping && !e.indention)
		for _, item := range t {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			e.node(item, false, false)
		}
		e.popIndent()
	case string:
		e.scalar(t, serdeStringStyle(t))
	case bool:
		e.scalar(strconv.FormatBool(t), yamlPlain)
	case int64:
		e.scalar(strconv.FormatInt(t, 10), yamlPlain)
	case uint64:
		e.scalar(strconv.FormatUint(t, 10), yamlPlain)
	case int:
		e.scalar(strconv.Itoa(t), yamlPlain)
	case float64:
		e.scalar(ryuFloat(t), yamlPlain)
	case nil:
		e.scalar("null", yamlPlain)
	default:
		e.scalar(strings.TrimSpace(string(appendJSON(nil, t))), yamlPlain)
	}
}

func (e *yamlEmitter) emptyFlow(open, closing string) {
	e.writeIndicator(open, true, true, false)
	e.increaseIndent(true, false)
	e.popIndent()
	e.writeIndicator(closing, false, false, false)
}

// serdeStringStyle is the style serde_yaml asks for a string: literal when it holds a newline,
// single-quoted when a plain scalar would read as null, a bool, a number or a zero-padded
// number, else whatever the emitter finds fitting.
func serdeStringStyle(s string) yamlStyle {
	if strings.Contains(s, "\n") {
		return yamlLiteral
	}
	if yamlNonString(s) || yaml11NonString(s) {
		return yamlSingle
	}
	return yamlAny
}

// yaml11Timestamps are the timestamp forms YAML 1.1 readers (go.yaml.in/yaml/v3) recognise.
var yaml11Timestamps = []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"}

// yaml11Implicit matches the plain scalars YAML 1.1's implicit types read as something other
// than a string: the regular expressions of the type pages at yaml.org/type (bool, int, float,
// null, merge, value, timestamp), joined with PyYAML's resolver where it reads more (a space before
// a timestamp's zone, underscores in a float's fraction).
var yaml11Implicit = regexp.MustCompile(`^(?:` + strings.Join([]string{
	// bool
	`y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF`,
	// int: base 2, 8, 10, 16 and 60
	`[-+]?0b[0-1_]+`, `[-+]?0[0-7_]+`, `[-+]?(?:0|[1-9][0-9_]*)`, `[-+]?0x[0-9a-fA-F_]+`, `[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+`,
	// float: base 10 (the spec's and PyYAML's), base 60, infinity, not a number
	`[-+]?(?:[0-9][0-9_]*)?\.[0-9.]*(?:[eE][-+][0-9]+)?`, `[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?`,
	`\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?`, `[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*`, `[-+]?\.(?:inf|Inf|INF)`, `\.(?:nan|NaN|NAN)`,
	// null, merge, value
	`~|null|Null|NULL`, `<<`, `=`,
	// timestamp
	`[0-9]{4}-[0-9]{2}-[0-9]{2}`,
	`[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?`,
}, "|") + `)$`)

// yaml11NonString reports whether a YAML 1.1 reader would read s, plain, as something other than
// a string although serde_yaml reads a string: yaml11Implicit (PyYAML, yaml.v2 and the spec: yes,
// no, on, off, y, n, sexagesimal numbers such as 1:20, =, ...), and what go.yaml.in/yaml/v2 and v3
// read beyond it (0o octals, exponents without a dot, underscores anywhere in a number).
// Upstream writes those plain; we quote them, which every reader reads back as the same string.
func yaml11NonString(s string) bool {
	switch s {
	case "":
		return false // quoted by yamlNonString already
	case "<<":
		return true
	}
	if yaml11Implicit.MatchString(s) {
		return true
	}
	switch c := s[0]; {
	case c == '.':
		_, err := strconv.ParseFloat(s, 64)
		return err == nil
	case c != '+' && c != '-' && (c < '0' || c > '9'):
		return false
	}
	if len(s) > 4 && s[4] == '-' {
		for _, layout := range yaml11Timestamps {
			if _, err := time.Parse(layout, s); err == nil {
				return true
			}
		}
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if yaml11Float.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	digits, base := strings.TrimPrefix(plain, "-"), 0
	switch {
	case strings.HasPrefix(digits, "0b"):
		base = 2
	case strings.HasPrefix(digits, "0o"):
		base = 8
	default:
		return false
	}
	_, err := strconv.ParseUint(digits[2:], base, 64)
	return err == nil
}

var (
	// rustFloat is the syntax of Rust's f64 from_str (after an optional sign).
	rustFloat = regexp.MustCompile(`^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)
	hexDigits = regexp.MustCompile(`^[0-9a-fA-F]+$`)
	octDigits = regexp.MustCompile(`^[0-7]+$`)
	binDigits = regexp.MustCompile(`^[01]+$`)
	// yaml11Float is go.yaml.in/yaml/v3's float syntax.
	yaml11Float = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// yamlNonString reports whether serde_yaml would read s, unquoted, as something other than a
// string (its visit_untagged_scalar).
func yamlNonString(s string) bool {
	switch s {
	case "", "null", "Null", "NULL", "~", "true", "True", "TRUE", "false", "False", "FALSE":
		return true
	}
	if digitsButNotNumber(s) {
		return true // a string to YAML 1.2, but quoted so older readers agree
	}
	if yamlRadixInt(s) {
		return true
	}
	unsigned := s
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		if strings.HasPrefix(rest, "+") || strings.HasPrefix(rest, "-") {
			return false
		}
		unsigned = rest
	}
	switch {
	case unsigned == ".inf" || unsigned == ".Inf" || unsigned == ".INF",
		s == "-.inf" || s == "-.Inf" || s == "-.INF",
		s == ".nan" || s == ".NaN" || s == ".NAN":
		return true
	}
	body := strings.TrimPrefix(unsigned, "-")
	if !rustFloat.MatchString(body) {
		return false
	}
	f, _ := strconv.ParseFloat(unsigned, 64) // the syntax is checked; out of range is ±Inf
	return !math.IsInf(f, 0)
}

// digitsButNotNumber: one optional sign, then 0 and more digits ("0123").
func digitsButNotNumber(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if len(s) < 2 || s[0] != '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// yamlRadixInt: 0x, 0o or 0b integers (a '+' or '-' first) that fit u128 (i128 when negative),
// as serde_yaml parses them.
func yamlRadixInt(s string) bool {
	neg := false
	switch {
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	case strings.HasPrefix(s, "-"):
		s, neg = s[1:], true
	}
	if len(s) < 3 || s[0] != '0' {
		return false
	}
	base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[s[1]]
	digits := s[2:]
	if base == 0 || strings.ContainsAny(digits[:1], "+-_") {
		return false
	}
	n, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return false
	}
	if neg {
		return n.Cmp(new(big.Int).Lsh(big.NewInt(1), 127)) <= 0
	}
	return n.BitLen() <= 128
}

// ryuFloat writes a finite float as Rust's ryu crate does (serde_yaml's f64 format), except that
// an exponent comes after a dot and with its sign (see below).
func ryuFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	sign := ""
	if math.Signbit(f) {
		sign, f = "-", -f
	}
	if f == 0 {
		return sign + "0.0"
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mant, ".", "", 1)
	e10, _ := strconv.Atoi(exp)
	length := len(digits)
	kk := e10 + 1 // the decimal point sits after kk digits
	k := kk - length
	switch {
	case k >= 0 && kk <= 16:
		return sign + digits + strings.Repeat("0", k) + ".0"
	case kk > 0 && kk <= 16:
		return sign + digits[:kk] + "." + digits[kk:]
	case kk > -5 && kk <= 0:
		return sign + "0." + strings.Repeat("0", -kk) + digits
	}
	// ryu writes 1e20 and 1.5e-7; YAML 1.1 reads an exponent only after a dot and with its sign,
	// so 1e20 would be the string "1e20" to PyYAML: we write 1.0e+20 and 1.5e-7, which YAML 1.2
	// readers (serde_yaml among them) read as the same float.
	mantissa := digits[:1] + "." + digits[1:]
	if length == 1 {
		mantissa = digits + ".0"
	}
	exp10 := strconv.Itoa(kk - 1)
	if kk-1 >= 0 {
		exp10 = "+" + exp10
	}
	return sign + mantissa + "e" + exp10
}

// yamlAnalysis is what libyaml's analyze_scalar finds about a scalar.
type yamlAnalysis struct {
	multiline                     bool
	flowPlain, blockPlain, single bool
	block                         bool
	empty                         bool
}

func isYAMLBreak(r rune) bool {
	return r == '\r' || r == '\n' || r == 0x85 || r == 0x2028 || r == 0x2029
}

func isYAMLPrintable(r rune) bool {
	return r == 0x0A || r >= 0x20 && r <= 0x7E || r >= 0xA0 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD && r != 0xFEFF || r >= 0x10000 && r <= 0x10FFFF
}

// isYAMLBlankZ: a space, tab, line break, or the end (-1).
func isYAMLBlankZ(r rune) bool { return r == -1 || r == ' ' || r == '\t' || isYAMLBreak(r) }

func analyzeYAMLScalar(s string) yamlAnalysis {
	if s == "" {
		return yamlAnalysis{blockPlain: true, single: true, empty: true}
	}
	runes := []rune(s)
	at := func(i int) rune {
		if i >= len(runes) {
			return -1
		}
		return runes[i]
	}
	var blockInd, flowInd, lineBreaks, special bool
	var leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	var prevSpace, prevBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	precededByWS := true
	for i, r := range runes {
		followedByWS := isYAMLBlankZ(at(i + 1))
		first, last := i == 0, i == len(runes)-1
		if first {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", r) {
				flowInd, blockInd = true, true
			}
			if r == '?' || r == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if r == '-' && followedByWS {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", r) {
				flowInd = true
			}
			if r == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if r == '#' && precededByWS {
				flowInd, blockInd = true, true
			}
		}
		if !isYAMLPrintable(r) {
			special = true
		}
		if isYAMLBreak(r) {
			lineBreaks = true
		}
		switch {
		case r == ' ':
			leadingSpace = leadingSpace || first
			trailingSpace = trailingSpace || last
			breakSpace = breakSpace || prevBreak
			prevSpace, prevBreak = true, false
		case isYAMLBreak(r):
			leadingBreak = leadingBreak || first
			trailingBreak = trailingBreak || last
			spaceBreak = spaceBreak || prevSpace
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		precededByWS = isYAMLBlankZ(r)
	}
	a := yamlAnalysis{multiline: lineBreaks, flowPlain: true, blockPlain: true, single: true, block: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.flowPlain, a.blockPlain = false, false
	}
	if trailingSpace {
		a.block = false
	}
	if breakSpace {
		a.flowPlain, a.blockPlain, a.single = false, false, false
	}
	if spaceBreak || special {
		a.flowPlain, a.blockPlain, a.single, a.block = false, false, false, false
	}
	if lineBreaks {
		a.flowPlain, a.blockPlain = false, false
	}
	if flowInd {
		a.flowPlain = false
	}
	if blockInd {
		a.blockPlain = false
	}
	return a
}

// simpleKeyOK is libyaml's check_simple_key for a string key.
func (e *yamlEmitter) simpleKeyOK(key string) bool {
	return !analyzeYAMLScalar(key).multiline && len(key) <= 128
}

func (e *yamlEmitter) scalar(value string, style yamlStyle) {
	a := analyzeYAMLScalar(value)
	if style == yamlAny {
		style = yamlPlain
	}
	if e.simpleKey && a.multiline {
		style = yamlDouble
	}
	if style == yamlPlain {
		if e.flowLevel != 0 && !a.flowPlain || e.flowLevel == 0 && !a.blockPlain {
			style = yamlSingle
		}
		if a.empty && (e.flowLevel != 0 || e.simpleKey) {
			style = yamlSingle
		}
	}
	if style == yamlSingle && !a.single {
		style = yamlDouble
	}
	if style == yamlLiteral && (!a.block || e.flowLevel != 0 || e.simpleKey) {
		style = yamlDouble
	}
	e.increaseIndent(true, false)
	switch style {
	case yamlPlain:
		e.writePlain(value)
	case yamlSingle:
		e.writeSingle(value)
	case yamlDouble:
		e.writeDouble(value)
	case yamlLiteral:
		e.writeLiteral(value)
	}
	e.popIndent()
}

func (e *yamlEmitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = 2
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += 2
	}
}

func (e *yamlEmitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yamlEmitter) put(b byte) {
	e.buf = append(e.buf, b)
	e.column++
}

func (e *yamlEmitter) write(r rune) {
	e.buf = utf8.AppendRune(e.buf, r)
	e.column++
}

func (e *yamlEmitter) putBreak() {
	e.buf = append(e.buf, '\n')
	e.column = 0
}

// writeBreak copies a line break: '\n' as the configured break, others as they are.
func (e *yamlEmitter) writeBreak(r rune) {
	if r == '\n' {
		e.putBreak()
		return
	}
	e.buf = utf8.AppendRune(e.buf, r)
	e.column = 0
}

func (e *yamlEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || e.column == indent && !e.whitespace {
		e.putBreak()
	}
	for e.column < indent {
		e.put(' ')
	}
	e.whitespace, e.indention = true, true
}

func (e *yamlEmitter) writeIndicator(indicator string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	for _, r := range indicator {
		e.write(r)
	}
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

func (e *yamlEmitter) writePlain(value string) {
	if !e.whitespace && (value != "" || e.flowLevel != 0) {
		e.put(' ')
	}
	for _, r := range value {
		e.write(r)
	}
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) writeSingle(value string) {
	e.writeIndicator("'", true, false, false)
	breaks := false
	for _, r := range value {
		switch {
		case r == ' ':
			e.write(r)
		case isYAMLBreak(r):
			if !breaks && r == '\n' {
				e.putBreak()
			}
			e.writeBreak(r)
			e.indention, breaks = true, true
		default:
			if breaks {
				e.writeIndent()
			}
			if r == '\'' {
				e.put('\'')
			}
			e.write(r)
			e.indention, breaks = false, false
		}
	}
	if breaks {
		e.writeIndent()
	}
	e.writeIndicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

var yamlEscapes = map[rune]byte{0: '0', 7: 'a', 8: 'b', 9: 't', 0x0A: 'n', 0x0B: 'v', 0x0C: 'f', 0x0D: 'r',
	0x1B: 'e', '"': '"', '\\': '\\', 0x85: 'N', 0xA0: '_', 0x2028: 'L', 0x2029: 'P'}

func (e *yamlEmitter) writeDouble(value string) {
	e.writeIndicator("\"", true, false, false)
	for _, r := range value {
		if !isYAMLPrintable(r) || r == 0xFEFF || isYAMLBreak(r) || r == '"' || r == '\\' {
			e.put('\\')
			if c, ok := yamlEscapes[r]; ok {
				e.put(c)
				continue
			}
			// libyaml's form: a lower-case letter (x, u or U, by width), upper-case hex digits.
			letter, width := byte('x'), 2
			switch {
			case r > 0xFFFF:
				letter, width = 'U', 8
			case r > 0xFF:
				letter, width = 'u', 4
			}
			e.put(letter)
			for _, d := range []byte(strings.ToUpper(pad(strconv.FormatUint(uint64(r), 16), width))) {
				e.put(d)
			}
			continue
		}
		e.write(r)
	}
	e.writeIndicator("\"", false, false, false)
	e.whitespace, e.indention = false, false
}

func pad(hex string, width int) string {
	return strings.Repeat("0", max(0, width-len(hex))) + hex
}

func (e *yamlEmitter) writeLiteral(value string) {
	e.writeIndicator("|", true, false, false)
	runes := []rune(value)
	if r := runes[0]; r == ' ' || isYAMLBreak(r) {
		e.writeIndicator("2", false, false, false)
	}
	last := runes[len(runes)-1]
	switch {
	case !isYAMLBreak(last):
		e.writeIndicator("-", false, false, false)
	case len(runes) == 1 || isYAMLBreak(runes[len(runes)-2]):
		e.writeIndicator("+", false, false, false)
	}
	e.putBreak()
	e.indention, e.whitespace = true, true
	breaks := true
	for _, r := range runes {
		if isYAMLBreak(r) {
			e.writeBreak(r)
			e.indention, breaks = true, true
			continue
		}
		if breaks {
			e.writeIndent()
		}
		e.write(r)
		e.indention, breaks = false, false
	}
}
