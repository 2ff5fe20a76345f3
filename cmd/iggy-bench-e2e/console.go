package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/iggy-connectors-go/runtime/pkg/testkit/browser"
)

// The console case: 50 idle null sinks under a real supervisor (as idle-sinks-50, with the idle
// back-off), and the supervisor's CPU share over -console-window with, in turn, no page open (A),
// the console's overview open in a real headless Chromium (B) and one connector's page open (C),
// interleaved A B C per round. The page polls at its default interval (5 s); what the supervisor
// spends on it is B - A and C - A.

const consoleCaseName = "console-50"

// consoleView is one side of the case: what the browser shows ("" none).
type consoleView struct {
	label string
	hash  string // the page's route; "-" for no page
	ready string // a CSS selector shown once the page has rendered its first poll
}

var consoleViews = [3]consoleView{
	{"A no page", "-", ""},
	{"B overview", "", `#overview tbody tr:nth-child(50) .badge[data-status="running"]`},
	{"C connector", "#/sinks/" + idleKey(0), `#status .badge[data-status="running"]`},
}

// consoleSample is one round: the supervisor's % of a core and the requests the page sent in the
// window, per view.
type consoleSample struct {
	supervisorCPU [3]float64
	requests      [3]int
}

func runConsoleCase(o options, work string) ([]consoleSample, error) {
	e, err := newIdleEnv(o, work, idleCase{consoleCaseName, 50, "0.8"})
	if err != nil {
		return nil, err
	}
	defer e.broker.stop()
	br, err := browser.Start()
	if err != nil {
		return nil, err
	}
	defer br.Stop()
	var out []consoleSample
	for round := 1; round <= o.rounds; round++ {
		s, err := e.measureConsole(br, round)
		if err != nil {
			return out, fmt.Errorf("round %d: %w", round, err)
		}
		out = append(out, s)
		if o.verbose {
			fmt.Printf("  %s round %d: supervisor %.3f%% / %.3f%% / %.3f%% (none / overview / connector), page requests %d / %d\n",
				consoleCaseName, round, s.supervisorCPU[0], s.supervisorCPU[1], s.supervisorCPU[2], s.requests[1], s.requests[2])
		}
	}
	return out, nil
}

// measureConsole starts the supervisor with the 50 sinks and measures each view in turn.
func (e *idleEnv) measureConsole(br *browser.Browser, round int) (consoleSample, error) {
	var s consoleSample
	sup, api, err := e.startSupervisor(filepath.Join(e.dir, fmt.Sprintf("round-%d", round)), idleSides[1])
	if err != nil {
		return s, err
	}
	defer sup.stop()
	if _, err := waitSinksRunning(sup, api, e.c.sinks); err != nil {
		return s, err
	}
	time.Sleep(idleWarmUp)
	pid := sup.cmd.Process.Pid
	for i, view := range consoleViews {
		var tab *browser.Tab
		if view.hash != "-" {
			if tab, err = br.NewTab(); err != nil {
				return s, err
			}
			if err := tab.Do(startLimit, chromedp.Navigate("http://"+api+"/ui/"+view.hash)); err != nil {
				tab.Close()
				return s, err
			}
			if err := tab.WaitVisible(startLimit, view.ready); err != nil {
				tab.Close()
				return s, fmt.Errorf("%s: %w", view.label, err)
			}
			time.Sleep(idleWarmUp) // the page's first loads (assets, configs, offsets) are not its steady cost
		}
		before := len(requests(tab))
		cpu0, start := processCPU(pid), time.Now()
		time.Sleep(e.opts.consoleWindow)
		s.supervisorCPU[i] = 100 * float64(processCPU(pid)-cpu0) / float64(time.Since(start))
		s.requests[i] = len(requests(tab)) - before
		if tab != nil {
			for _, m := range tab.Errors() {
				tab.Close()
				return s, fmt.Errorf("%s: the browser reported: %s", view.label, m)
			}
			tab.Close()
		}
	}
	return s, nil
}

func requests(tab *browser.Tab) []string {
	if tab == nil {
		return nil
	}
	return tab.Requests()
}

// printConsoleTable prints the supervisor's CPU share per view (min / median / max over rounds)
// and what the page adds to it (median of the per-round differences).
func printConsoleTable(samples []consoleSample, window time.Duration) {
	if len(samples) == 0 {
		return
	}
	fmt.Printf("\n%-12s %-14s %-26s %-22s %s\n", "console case", "view", "supervisor %core min/med/max", "added by the page", fmt.Sprintf("page requests per %s", window))
	fmt.Println(strings.Repeat("-", 110))
	for i, view := range consoleViews {
		var cpu, added, reqs []float64
		for _, s := range samples {
			cpu = append(cpu, s.supervisorCPU[i])
			added = append(added, s.supervisorCPU[i]-s.supervisorCPU[0])
			reqs = append(reqs, float64(s.requests[i]))
		}
		lo, mid, hi := spread(cpu)
		name := consoleCaseName
		if i > 0 {
			name = ""
		}
		addedText, reqText := "-", "-"
		if i > 0 {
			addedText, reqText = fmt.Sprintf("%+.3f%% of a core", median(added)), fmt.Sprintf("%.0f", median(reqs))
		}
		fmt.Printf("%-12s %-14s %-26s %-22s %s\n", name, view.label, fmt.Sprintf("%.3f / %.3f / %.3f", lo, mid, hi), addedText, reqText)
	}
}
