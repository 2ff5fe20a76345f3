package supervisor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// checkTimeout bounds one validation's child process (it may wait for Iggy up to the runner's
// own 10 s bound).
const checkTimeout = 30 * time.Second

// validateRoutes registers POST /{sinks|sources}/{key}/configs/validate.
func (s *Supervisor) validateRoutes(mux router, base string, kind config.ConnectorKind) {
	mux.HandleFunc("POST "+base+"/{key}/configs/validate", s.validations.admit("validate", s.withBudget(s.slowBudget()+checkTimeout, s.withKind(kind, s.handleValidate))))
}

// validationProblem is one element of the validate answer's "errors".
type validationProblem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// validation is the validate answer.
type validation struct {
	Valid  bool                `json:"valid"`
	Errors []validationProblem `json:"errors"`
}

// handleValidate answers whether the body of a POST .../configs would start: the same parse as
// that route, then every start-time check by the runner binary's --check in a child process (the
// supervisor never loads a plugin). Nothing is stored. A body that is not JSON at all is refused
// as POST .../configs refuses it.
func (s *Supervisor) handleValidate(w http.ResponseWriter, r *http.Request, kind config.ConnectorKind) {
	key := r.PathValue("key")
	body, ok := readJSONBody(w, r)
	if !ok {
		return
	}
	problems := s.validate(r.Context(), kind, key, body)
	out, _ := json.Marshal(validation{Valid: len(problems) == 0, Errors: append([]validationProblem{}, problems...)})
	writeJSON(w, http.StatusOK, out)
}

func (s *Supervisor) validate(ctx context.Context, kind config.ConnectorKind, key string, body []byte) []validationProblem {
	if err := config.ValidKey(key); err != nil {
		_, msg := config.ErrorField(err.Error())
		return []validationProblem{{Field: "key", Message: msg}}
	}
	cfg, err := config.ParseCreateBody(kind, key, body)
	if err != nil {
		return []validationProblem{problemOf(err)}
	}
	if cfg.PluginConfig, err = s.unmaskSecrets(ctx, cfg); err != nil {
		return []validationProblem{{Field: "plugin_config", Message: err.Error()}}
	}
	problems, err := s.checkInChild(ctx, cfg)
	if err != nil {
		return []validationProblem{{Field: "config", Message: err.Error()}}
	}
	return problems
}

// problemOf is a config error as the problem of the field it names ("config" when none).
func problemOf(err error) validationProblem {
	field, msg := config.ErrorField(err.Error())
	if field == "" {
		field = "config"
	}
	return validationProblem{Field: field, Message: msg}
}

// checkInChild runs `iggy-connector-runner --check` with the environment a runner of cfg would
// get and returns the problems it prints. An error means the check itself did not run to its end.
func (s *Supervisor) checkInChild(ctx context.Context, cfg config.Connector) ([]validationProblem, error) {
	doc, err := cfg.MarshalDocumentWithin("json", s.bodyLimit())
	if errors.Is(err, config.ErrOverLimit) {
		return []validationProblem{problemOf(err)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("render the config for the check: %w", err)
	}
	handover, err := s.writeHandover("check", doc)
	if err != nil {
		return nil, err
	}
	defer os.Remove(handover)
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.runnerBin, runnerproc.ArgCheck)
	// The check serves nothing; the address only has to parse.
	env, secrets, err := s.runnerBaseEnv("unix:"+filepath.Join(s.sockDir, "check.sock"), "check")
	if err != nil {
		return nil, err
	}
	defer removeAll(secrets)
	cmd.Env = append(env, runnerproc.EnvConfigPath+"="+handover)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil, nil
	case errors.As(err, &exit) && exit.ExitCode() == runnerproc.ExitConfig && stdout.Len() > 0:
		var problems []validationProblem
		sc := bufio.NewScanner(&stdout)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			if line := sc.Text(); line != "" {
				field, msg := runnerproc.ParseCheckLine(line)
				problems = append(problems, validationProblem{Field: field, Message: msg})
			}
		}
		return problems, nil
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the check (%s %s) did not finish within %s", s.runnerBin, runnerproc.ArgCheck, checkTimeout)
	}
	return nil, fmt.Errorf("the check (%s %s) failed: %v: %s", s.runnerBin, runnerproc.ArgCheck, err, strings.TrimSpace(stderr.String()))
}
