package config

import (
	"regexp"
	"strings"
)

// MaskText masks the secrets a free text may quote (an error page, a log line, a document cut
// short that no longer parses as JSON): the value of every key=value, key: value or
// "key": "value" pair whose key matches k (Match), and the credentials of every URL (MaskURLs).
//
// A value in quotes is masked up to its closing quote. An unquoted value after '=' runs up to a
// blank or one of & ; , " ' < > ( ) [ ] { }; after ':' up to the end of its line or one of those
// characters but the blank (a header's value: "Authorization: Basic dXNl..."). An
// authentication scheme (Bearer, Basic, Token, Digest, Negotiate) takes the word after it along.
// null, empty and already masked values stay.
func (k SecretKeys) MaskText(s string) string {
	if len(k) > 0 && strings.ContainsAny(s, ":=") {
		s = k.maskPairs(s)
	}
	return k.MaskURLs(s)
}

// pairKey finds a key, quoted or not, and the '=' or ':' after it (blanks around).
var pairKey = regexp.MustCompile(`(["']?)([A-Za-z0-9_.\-]+)(["']?)[ \t]*([:=])[ \t]*`)

// authSchemes are the HTTP authentication schemes whose token follows after a blank.
var authSchemes = []string{"bearer", "basic", "token", "digest", "negotiate"}

// valueStops end an unquoted value.
const valueStops = "&;,\"'<>(){}[]\r\n"

func (k SecretKeys) maskPairs(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range pairKey.FindAllStringSubmatchIndex(s, -1) {
		if m[0] < last || (m[0] > 0 && s[m[0]-1] == '/') || !k.Match(s[m[4]:m[5]]) {
			continue // inside a value masked already, a URL's userinfo (MaskURLs masks it), or no secret
		}
		start := m[1]
		end := valueEnd(s, start, s[m[8]])
		value := strings.Trim(s[start:end], `"'`)
		if value == "" || value == "null" || value == MaskedValue {
			continue
		}
		b.WriteString(s[last:start])
		if q := s[start]; q == '"' || q == '\'' {
			b.WriteString(string(q) + MaskedValue + string(q))
		} else {
			b.WriteString(MaskedValue)
		}
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// valueEnd is where the value starting at start ends, after the separator sep.
func valueEnd(s string, start int, sep byte) int {
	if start >= len(s) {
		return start
	}
	if q := s[start]; q == '"' || q == '\'' {
		for i := start + 1; i < len(s); i++ {
			switch {
			case s[i] == '\\' && q == '"':
				i++
			case s[i] == q:
				return i + 1
			case s[i] == '\n':
				return i
			}
		}
		return len(s)
	}
	word := func(from int) int {
		i := from
		for i < len(s) && !strings.ContainsRune(valueStops+" \t", rune(s[i])) {
			i++
		}
		return i
	}
	end := word(start)
	for _, scheme := range authSchemes {
		if strings.EqualFold(s[start:end], scheme) {
			next := end
			for next < len(s) && (s[next] == ' ' || s[next] == '\t') {
				next++
			}
			if next > end {
				if tokenEnd := word(next); tokenEnd > next {
					return tokenEnd
				}
			}
			return end
		}
	}
	if sep == '=' {
		return end
	}
	i := start
	for i < len(s) && !strings.ContainsRune(valueStops, rune(s[i])) {
		i++
	}
	for i > start && (s[i-1] == ' ' || s[i-1] == '\t') {
		i--
	}
	return i
}
