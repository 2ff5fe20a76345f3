package config

import (
	"regexp"
	"strings"
)

// The credentials a URL can carry, and how MaskURLs finds them in any text (docs/security.md,
// "What is masked"):
//
//   - userinfo: "mongodb://u:p@h" becomes "mongodb://u:******@h"; a userinfo without a password
//     ("https://tok@h", a token as user name) is masked whole.
//   - query and fragment parameters: the value of a parameter whose name matches the secret keys
//     (as a plugin_config key would: "access_token", "client_secret", "X-Amz-Credential") or is
//     one of urlTokenParams ("sig", "key", "code", "auth") or contains "signature".
//   - path segments that look like a credential: 16 characters or more with a digit in them, or
//     24 characters or more of any kind ("/services/T0/B0/<24 letters>" of a chat webhook,
//     a hex key, a UUID). Shorter or digit-free segments ("IncomingWebhook", "v1") stay.
//
// Masked parts become MaskedValue; the scheme, host, port, the other segments and parameter names
// stay, so an operator still sees where a URL points.

// urlPattern finds a URL in a text: a scheme, "://", then everything up to a space, a quote or
// an angle bracket.
var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s"'<>` + "`" + `]+`)

// urlTokenParams are query parameter names that carry a credential although they match no
// secret key: signed-URL signatures, API keys and OAuth codes.
var urlTokenParams = []string{"sig", "key", "code", "auth"}

// Path segments at least pathTokenMin long holding a digit, or pathTokenAny long whatever they
// hold, are masked.
const (
	pathTokenMin = 16
	pathTokenAny = 24
)

// MaskURLs masks the credentials of every URL in s with the default secret keys
// (DefaultSecretKeys): userinfo, secret query parameters and token-like path segments. Text
// without "://" comes back as it is.
func MaskURLs(s string) string { return SecretKeys(DefaultSecretKeys).MaskURLs(s) }

// MaskURLUserinfo is MaskURLs, kept under the name it had when it masked the userinfo only.
func MaskURLUserinfo(s string) string { return MaskURLs(s) }

// MaskURLs masks the credentials of every URL in s: userinfo, the query and fragment parameters
// whose names match k or name a token, and token-like path segments.
func (k SecretKeys) MaskURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlPattern.ReplaceAllStringFunc(s, k.maskURL)
}

// maskURL masks one URL as urlPattern found it.
func (k SecretKeys) maskURL(u string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		if user, _, hasPassword := strings.Cut(authority[:at], ":"); hasPassword {
			authority = user + ":" + MaskedValue + authority[at:]
		} else {
			authority = MaskedValue + authority[at:]
		}
	}
	path, query, fragment := tail, "", ""
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path, fragment = path[:i], path[i:]
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i:]
	}
	var b strings.Builder
	b.Grow(len(u))
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(authority)
	for i, seg := range strings.Split(path, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if pathToken(seg) {
			seg = MaskedValue
		}
		b.WriteString(seg)
	}
	if query != "" {
		b.WriteByte('?')
		b.WriteString(k.maskParams(query[1:]))
	}
	if fragment != "" {
		b.WriteByte('#')
		b.WriteString(k.maskParams(fragment[1:]))
	}
	return b.String()
}

// pathToken reports whether a path segment looks like a credential.
func pathToken(seg string) bool {
	if len(seg) >= pathTokenAny {
		return true
	}
	return len(seg) >= pathTokenMin && strings.ContainsAny(seg, "0123456789")
}

// maskParams masks the values of the secret parameters of a query or fragment ("a=1&b=2", ";"
// separating too); anything that is no name=value pair stays as it is.
func (k SecretKeys) maskParams(q string) string {
	var b strings.Builder
	b.Grow(len(q))
	start := 0
	for i := 0; i <= len(q); i++ {
		if i < len(q) && q[i] != '&' && q[i] != ';' {
			continue
		}
		pair := q[start:i]
		if name, value, ok := strings.Cut(pair, "="); ok && value != "" && k.secretParam(name) {
			pair = name + "=" + MaskedValue
		}
		b.WriteString(pair)
		if i < len(q) {
			b.WriteByte(q[i])
		}
		start = i + 1
	}
	return b.String()
}

// secretParam reports whether a query parameter of that name carries a credential.
func (k SecretKeys) secretParam(name string) bool {
	lower := strings.ToLower(name)
	for _, p := range urlTokenParams {
		if lower == p {
			return true
		}
	}
	return strings.Contains(lower, "signature") || k.Match(lower)
}
