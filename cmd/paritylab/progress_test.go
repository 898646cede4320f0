package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab"
	"github.com/paritylab/paritylab/lab/state"
)

// recordingProgress is a lab.Progress that remembers what it heard.
type recordingProgress struct {
	mu     sync.Mutex
	events []string
}

var _ lab.Progress = (*recordingProgress)(nil)

func (r *recordingProgress) Started(step string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, "started "+step)
}

func (r *recordingProgress) Finished(step string, took time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := fmt.Sprintf("finished %s %s", step, took)
	if err != nil {
		e += " error: " + err.Error()
	}
	r.events = append(r.events, e)
}

func (r *recordingProgress) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestRelayProgress(t *testing.T) {
	cases := []struct {
		name       string
		stream     string
		wantEvents []string
		wantErr    string // "" means nil
	}{
		{
			name: "ready",
			stream: lines(
				`{"step":"Recording the run","phase":"started"}`,
				`{"step":"Recording the run","phase":"finished","seconds":0.25}`,
				`{"step":"Starting the hub","phase":"started"}`,
				`{"step":"Starting the hub","phase":"finished","seconds":2}`,
				`{"phase":"ready"}`,
				`{"step":"after ready","phase":"started"}`,
			),
			wantEvents: []string{
				"started Recording the run",
				"finished Recording the run 250ms",
				"started Starting the hub",
				"finished Starting the hub 2s",
			},
		},
		{
			name: "non-JSON lines ignored",
			stream: lines(
				`garbage before`,
				`{"step":"A","phase":"started"}`,
				`{not json`,
				``,
				`{"step":"A","phase":"finished","seconds":1.5}`,
				`{"phase":"ready"}`,
			),
			wantEvents: []string{"started A", "finished A 1.5s"},
		},
		{
			name: "failed step then end",
			stream: lines(
				`{"step":"A","phase":"started"}`,
				`{"step":"A","phase":"finished","seconds":1,"error":"first failure"}`,
				`{"step":"Undo: A","phase":"started"}`,
				`{"step":"Undo: A","phase":"finished","seconds":0.5,"error":"etcd would not start: port 2379 in use"}`,
			),
			wantEvents: []string{
				"started A",
				"finished A 1s error: first failure",
				"started Undo: A",
				"finished Undo: A 500ms error: etcd would not start: port 2379 in use",
			},
			wantErr: "etcd would not start: port 2379 in use",
		},
		{
			name: "ends without ready or error",
			stream: lines(
				`{"step":"A","phase":"started"}`,
				`{"step":"A","phase":"finished","seconds":1}`,
			),
			wantEvents: []string{"started A", "finished A 1s"},
			wantErr:    errSupervisorStopped.Error(),
		},
		{
			name:    "empty stream",
			stream:  "",
			wantErr: errSupervisorStopped.Error(),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := &recordingProgress{}
			err := relayProgress(strings.NewReader(c.stream), rec)
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("relayProgress = %v, want nil", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("relayProgress = %v, want an error containing %q", err, c.wantErr)
			}
			if got := rec.get(); strings.Join(got, "|") != strings.Join(c.wantEvents, "|") {
				t.Errorf("events = %q, want %q", got, c.wantEvents)
			}
		})
	}
}

func TestRelayProgressFailureIsTheStepError(t *testing.T) {
	// With a step error the message is the error, not the dead-supervisor one.
	err := relayProgress(strings.NewReader(`{"step":"A","phase":"finished","error":"boom"}`+"\n"), &recordingProgress{})
	if err == nil || !strings.Contains(err.Error(), "boom") || errors.Is(err, errSupervisorStopped) {
		t.Fatalf("relayProgress = %v", err)
	}
}

func TestStreamProgressRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	sp := newStreamProgress(&buf)
	sp.Started("Recording the run")
	sp.Finished("Recording the run", 1500*time.Millisecond, nil)
	sp.Started("Starting the hub")
	sp.Finished("Starting the hub", 3*time.Second, errors.New("no etcd"))
	sp.send(progressEvent{Phase: "ready"})

	if n := strings.Count(buf.String(), "\n"); n != 5 {
		t.Fatalf("stream holds %d lines, want 5:\n%s", n, buf.String())
	}
	rec := &recordingProgress{}
	if err := relayProgress(&buf, rec); err != nil {
		t.Fatalf("relayProgress: %v", err)
	}
	want := []string{
		"started Recording the run",
		"finished Recording the run 1.5s",
		"started Starting the hub",
		"finished Starting the hub 3s error: no etcd",
	}
	if got := rec.get(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events = %q, want %q", got, want)
	}
}

func TestSummarizeResources(t *testing.T) {
	cases := []struct {
		resources []state.Resource
		want      string
	}{
		{want: "0 ()"},
		{
			resources: []state.Resource{
				{Kind: "process", ID: "1"},
				{Kind: "dir", ID: "/a"},
				{Kind: "process", ID: "2"},
				{Kind: "process", ID: "3"},
			},
			want: "4 (1 dir, 3 process)",
		},
		{
			resources: []state.Resource{{Kind: "libvirt-domain", ID: "vm-0"}},
			want:      "1 (1 libvirt-domain)",
		},
	}
	for _, c := range cases {
		if got := summarizeResources(&lab.Status{Resources: c.resources}); got != c.want {
			t.Errorf("summarizeResources(%v) = %q, want %q", c.resources, got, c.want)
		}
	}
}
