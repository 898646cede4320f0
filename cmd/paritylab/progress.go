package main

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

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
