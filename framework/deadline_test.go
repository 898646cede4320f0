package framework

import (
	"strings"
	"testing"
	"time"
)

func TestCheckRunTime(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	need := 90 * time.Minute
	if err := CheckRunTime(time.Time{}, false, need, now); err != nil {
		t.Errorf("no deadline (ginkgo): %v", err)
	}
	if err := CheckRunTime(now.Add(3*time.Hour), true, need, now); err != nil {
		t.Errorf("go test -timeout 3h: %v", err)
	}
	err := CheckRunTime(now.Add(10*time.Minute), true, need, now)
	if err == nil {
		t.Fatal("go test's default 10m timeout accepted")
	}
	for _, want := range []string{"10m0s", "1h30m0s", "ginkgo", "-timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
