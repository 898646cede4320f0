package kind

import (
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	kindlog "sigs.k8s.io/kind/pkg/log"
)

// logAdapter makes a logr.Logger a kind log.Logger. kind's V(n) maps to
// logr's V(n); warnings are info at V(0) tagged level=warning; errors go to
// logr's Error with a nil error.
type logAdapter struct {
	l logr.Logger
}

var _ kindlog.Logger = logAdapter{}

func newLogAdapter(l logr.Logger) kindlog.Logger {
	return logAdapter{l: l.WithName("kind")}
}

func (a logAdapter) Warn(message string) {
	a.l.Info(clean(message), "level", "warning")
}

func (a logAdapter) Warnf(format string, args ...any) {
	a.Warn(fmt.Sprintf(format, args...))
}

func (a logAdapter) Error(message string) {
	a.l.Error(nil, clean(message))
}

func (a logAdapter) Errorf(format string, args ...any) {
	a.Error(fmt.Sprintf(format, args...))
}

func (a logAdapter) V(level kindlog.Level) kindlog.InfoLogger {
	return infoAdapter{l: a.l.V(int(level))}
}

type infoAdapter struct {
	l logr.Logger
}

func (a infoAdapter) Info(message string) {
	a.l.Info(clean(message))
}

func (a infoAdapter) Infof(format string, args ...any) {
	a.Info(fmt.Sprintf(format, args...))
}

func (a infoAdapter) Enabled() bool { return a.l.Enabled() }

// clean drops the trailing newlines kind puts on some terminal messages.
func clean(message string) string {
	return strings.TrimRight(message, "\n")
}
