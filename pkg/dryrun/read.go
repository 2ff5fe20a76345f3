package dryrun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes bounds one sample line: Iggy's largest payload (64 MB) as base64, with room for
// the other fields.
const MaxLineBytes = 96 << 20

// maxProblems is how many problems ReadSamples reports before it stops reading.
const maxProblems = 20

// ReadSamples reads samples, one JSON object per line (JSON lines, as `iggy-connectors tap` and
// a dry run print them); blank lines are skipped. It returns the samples of the good lines and a
// Problem for every bad one (at most 20, then it stops); an error reading r is one more Problem
// without a line.
func ReadSamples(r io.Reader) ([]Sample, []*Problem) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		samples  []Sample
		problems []*Problem
		long     []byte
	)
	for line := 1; len(problems) < maxProblems; line++ {
		text, err := br.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) && len(long)+len(text) <= MaxLineBytes {
			long = append(long, text...)
			text, err = br.ReadSlice('\n')
		}
		if long != nil {
			text, long = append(long, text...), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			problems = append(problems, &Problem{Input: InputSamples, Line: line, Message: fmt.Sprintf("longer than %d bytes", MaxLineBytes)})
			return samples, problems
		}
		if err != nil && !errors.Is(err, io.EOF) {
			problems = append(problems, &Problem{Input: InputSamples, Line: line, Message: "cannot read: " + err.Error()})
			return samples, problems
		}
		if trimmed := bytes.TrimSpace(text); len(trimmed) > 0 {
			s, perr := ParseSample(trimmed, line)
			if perr != nil {
				var p *Problem
				if !errors.As(perr, &p) {
					p = &Problem{Input: InputSamples, Line: line, Message: perr.Error()}
				}
				problems = append(problems, p)
			} else {
				samples = append(samples, s)
			}
		}
		if err != nil { // io.EOF
			break
		}
	}
	return samples, problems
}
