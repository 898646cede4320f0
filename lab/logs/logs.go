// Package logs makes the structured loggers lab components write to files:
// controller logs are too verbose for a terminal and must survive for
// artifact collection.
package logs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// File opens (appends to) a log file and returns a JSON logr.Logger writing
// to it, at verbosity v (0 = info only), and the file to close.
func File(path string, v int) (logr.Logger, io.Closer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return logr.Discard(), nil, fmt.Errorf("create log dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return logr.Discard(), nil, fmt.Errorf("open log %s: %w", path, err)
	}
	logger := zap.New(zap.WriteTo(f), zap.Level(zapcore.Level(-v)), zap.UseDevMode(false))
	return logger, f, nil
}

// SetGlobal makes logger the destination of controller-runtime's and klog's
// global loggers, which upstream controllers use besides the one they are
// given. Call it once per process, before starting controllers.
func SetGlobal(logger logr.Logger) {
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
}
