package process

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// StartError says a process did not start or never became ready. It carries
// the command and the end of its log, because the log usually says why.
type StartError struct {
	Name    string
	Path    string
	LogPath string
	LogTail string
	Err     error
}

func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "start %s (%s): %v", e.Name, e.Path, e.Err)
	if e.LogTail != "" {
		fmt.Fprintf(&b, "\n--- last lines of %s ---\n%s", e.LogPath, e.LogTail)
	}
	return b.String()
}

func (e *StartError) Unwrap() error { return e.Err }

// tail returns the last n lines of a file, or "" if it cannot be read.
func tail(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(raw, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
