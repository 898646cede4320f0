package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// How much of a stopped supervisor's log `lab up` shows.
const (
	supervisorTailLines = 20
	// supervisorTailBytes bounds what is read: a crash can leave a
	// goroutine dump of megabytes, of which a terminal needs the end.
	supervisorTailBytes = 64 << 10
	supervisorLineChars = 300
)

// secretLine matches log lines that might carry a credential. The
// supervisor's log holds its stdout and stderr: its final error, a panic,
// and what libraries print before the lab routes their logs to files;
// none should hold a secret, but the BMC password and kubeconfigs exist in
// that process, so such lines are withheld rather than trusted.
var secretLine = regexp.MustCompile(`(?i)passw|secret|token|bearer|authorization|private key|client-key|credential`)

// supervisorLog is the file a detached supervisor's stdout and stderr go
// to, and where this run's part of it starts: the file is appended to by
// every run of the lab.
type supervisorLog struct {
	path  string
	start int64
}

// openSupervisorLog opens the log for the supervisor to append to and
// notes where this run starts.
func openSupervisorLog(path string) (*os.File, supervisorLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, supervisorLog{}, fmt.Errorf("open supervisor log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, supervisorLog{}, fmt.Errorf("stat supervisor log: %w", err)
	}
	return f, supervisorLog{path: path, start: st.Size()}, nil
}

// stoppedError explains a supervisor that stopped before the lab was
// ready with the last lines it wrote.
func (l supervisorLog) stoppedError() error {
	lines, err := l.tail()
	switch {
	case err != nil:
		return fmt.Errorf("%w; see %s (cannot show it: %v)", errSupervisorStopped, l.path, err)
	case len(lines) == 0:
		return fmt.Errorf("%w and wrote nothing to %s", errSupervisorStopped, l.path)
	}
	return fmt.Errorf("%w; last lines of %s:\n  %s", errSupervisorStopped, l.path, strings.Join(lines, "\n  "))
}

// tail returns the last lines this run wrote, shortened, with those that
// may carry a secret withheld.
func (l supervisorLog) tail() ([]string, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	from := max(l.start, st.Size()-supervisorTailBytes)
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil, err
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), supervisorTailBytes+1)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if from > l.start && len(lines) > 0 {
		lines = lines[1:] // the first may be cut
	}
	lines = lines[max(0, len(lines)-supervisorTailLines):]
	for i, line := range lines {
		lines[i] = showable(line)
	}
	return lines, nil
}

func showable(line string) string {
	if secretLine.MatchString(line) {
		return "[line withheld: it may hold a credential]"
	}
	if len(line) > supervisorLineChars {
		return line[:supervisorLineChars] + "…"
	}
	return line
}
