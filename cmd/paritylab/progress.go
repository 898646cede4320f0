package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// terminalProgress prints each step as one line: its name when it starts,
// its outcome and duration when it ends.
type terminalProgress struct {
	mu  sync.Mutex
	out io.Writer
}

func (p *terminalProgress) Started(step string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "  • %-66s", step)
}

func (p *terminalProgress) Finished(_ string, took time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		fmt.Fprintf(p.out, " ✗ %s\n", round(took))
		return
	}
	fmt.Fprintf(p.out, " ✓ %s\n", round(took))
}

func round(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// progressEvent is one line of the stream a detached supervisor writes to
// the `lab up` that launched it.
type progressEvent struct {
	Step    string  `json:"step,omitempty"`
	Phase   string  `json:"phase"` // started, finished, ready, failed
	Seconds float64 `json:"seconds,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// streamProgress writes progress events as JSON lines. Write errors are
// ignored: the launcher may have gone away, and the lab carries on.
type streamProgress struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func newStreamProgress(w io.Writer) *streamProgress {
	return &streamProgress{enc: json.NewEncoder(w)}
}

func (p *streamProgress) send(ev progressEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.enc.Encode(ev)
}

func (p *streamProgress) Started(step string) { p.send(progressEvent{Step: step, Phase: "started"}) }

func (p *streamProgress) Finished(step string, took time.Duration, err error) {
	ev := progressEvent{Step: step, Phase: "finished", Seconds: took.Seconds()}
	if err != nil {
		ev.Error = err.Error()
	}
	p.send(ev)
}
