package config

// Helpers for the runner's and the supervisor's own variables, which are
// declared as structs with caarlos0/env tags (env, envDefault) and a help tag.

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/caarlos0/env/v11"
)

// EnvMap indexes "NAME=value" entries (as os.Environ gives them); a later
// entry wins, as in a shell and os/exec.
func EnvMap(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok {
			m[name] = value
		}
	}
	return m
}

// ParseEnvStruct fills the struct target points to from environ by its
// env and envDefault tags. A bad value is reported by its variable name
// ("IGGY_X: invalid time.Duration: ..."), not by the Go field caarlos0/env
// names, and only the first of several problems is returned.
func ParseEnvStruct(target any, environ []string) error {
	if err := env.ParseWithOptions(target, env.Options{Environment: EnvMap(environ)}); err != nil {
		return namedEnvError(reflect.TypeOf(target).Elem(), err)
	}
	return nil
}

func namedEnvError(structType reflect.Type, err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) || len(agg.Errors) == 0 {
		return err
	}
	first := agg.Errors[0]
	var pe env.ParseError
	if errors.As(first, &pe) {
		if f, ok := structType.FieldByName(pe.Name); ok {
			return fmt.Errorf("%s: invalid %s: %w", envTagName(f), pe.Type, pe.Err)
		}
	}
	return first
}

// StructEnvVars lists the variables of an env-tagged struct (pass a zero
// value) in declaration order, with their envDefault and help tags, for --help.
func StructEnvVars(v any) []EnvVar {
	t := reflect.TypeOf(v)
	out := make([]EnvVar, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		out = append(out, EnvVar{Name: envTagName(f), Default: f.Tag.Get("envDefault"), Help: f.Tag.Get("help")})
	}
	return out
}

// envTagName is the variable name of an env tag, without options such as ",required".
func envTagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
	return name
}
