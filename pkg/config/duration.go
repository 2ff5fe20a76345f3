package config

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// ErrInvalidDuration is wrapped by every ParseDuration failure.
var ErrInvalidDuration = errors.New("invalid duration")

// durationUnits maps each unit spelling upstream's parser (humantime) accepts
// to its length in nanoseconds. Month and year are the astronomical averages
// humantime uses, not calendar lengths.
var durationUnits = map[string]int64{
	"ns": 1, "nsec": 1, "nanos": 1,
	"us": 1e3, "usec": 1e3, "µs": 1e3,
	"ms": 1e6, "msec": 1e6, "millis": 1e6,
	"s": 1e9, "sec": 1e9, "secs": 1e9, "second": 1e9, "seconds": 1e9,
	"m": 60e9, "min": 60e9, "mins": 60e9, "minute": 60e9, "minutes": 60e9,
	"h": 3600e9, "hr": 3600e9, "hrs": 3600e9, "hour": 3600e9, "hours": 3600e9,
	"d": 86400e9, "day": 86400e9, "days": 86400e9,
	"w": 604800e9, "wk": 604800e9, "wks": 604800e9, "week": 604800e9, "weeks": 604800e9,
	"month": 2630016e9, "months": 2630016e9,
	"y": 31557600e9, "yr": 31557600e9, "yrs": 31557600e9, "year": 31557600e9, "years": 31557600e9,
}

// ParseDuration parses a duration the way upstream's runtime does: the text is
// lower-cased, "0", "unlimited", "disabled" and "none" mean zero, and anything
// else is one or more `<number><unit>` items ("1m 30s", "1.5s", "500 ms").
// A bare non-zero number is rejected because a unit is needed.
func ParseDuration(text string) (time.Duration, error) {
	s := strings.ToLower(strings.TrimSpace(text))
	switch s {
	case "0", "unlimited", "disabled", "none":
		return 0, nil
	case "":
		return 0, fmt.Errorf("%w: empty value", ErrInvalidDuration)
	}
	total := new(big.Int)
	rest := s
	for rest != "" {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		num, afterNum := splitNumber(rest)
		if num == "" {
			return 0, fmt.Errorf("%w %q: expected a number at %q", ErrInvalidDuration, text, rest)
		}
		afterNum = strings.TrimLeft(afterNum, " \t")
		unit, afterUnit := splitUnit(afterNum)
		if unit == "" {
			return 0, fmt.Errorf("%w %q: time unit needed after %q (for example %ss or %sms)", ErrInvalidDuration, text, num, num, num)
		}
		nanosPerUnit, ok := durationUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%w %q: unknown time unit %q", ErrInvalidDuration, text, unit)
		}
		item, err := scaleNumber(num, nanosPerUnit)
		if err != nil {
			return 0, fmt.Errorf("%w %q: %v", ErrInvalidDuration, text, err)
		}
		total.Add(total, item)
		rest = afterUnit
	}
	if !total.IsInt64() || total.Int64() > math.MaxInt64 {
		return 0, fmt.Errorf("%w %q: value too large", ErrInvalidDuration, text)
	}
	return time.Duration(total.Int64()), nil
}

// FormatDuration renders d so that ParseDuration reads back exactly d.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

func splitNumber(s string) (num, rest string) {
	i := 0
	seenDot := false
	for i < len(s) {
		c := s[i]
		if c >= '0' && c <= '9' {
			i++
			continue
		}
		if c == '.' && !seenDot {
			seenDot = true
			i++
			continue
		}
		break
	}
	num = s[:i]
	if num == "." {
		return "", s
	}
	return num, s[i:]
}

func splitUnit(s string) (unit, rest string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if (c >= 'a' && c <= 'z') || c >= 0x80 {
			i++
			continue
		}
		break
	}
	return s[:i], s[i:]
}

// scaleNumber multiplies a decimal number (maybe with a fraction) by a unit
// exactly, truncating below one nanosecond.
func scaleNumber(num string, nanosPerUnit int64) (*big.Int, error) {
	intPart, fracPart, _ := strings.Cut(num, ".")
	if intPart == "" {
		intPart = "0"
	}
	whole, ok := new(big.Int).SetString(intPart+fracPart, 10)
	if !ok {
		return nil, fmt.Errorf("bad number %q", num)
	}
	whole.Mul(whole, big.NewInt(nanosPerUnit))
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(fracPart))), nil)
	return whole.Quo(whole, scale), nil
}
