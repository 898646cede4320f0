package redfish_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/paritylab/paritylab/lab/redfish"
)

// TestOperationsConcurrent has goroutines power both systems on and off
// while others read the logs; run with -race it shows the log is safe,
// and the counts show it is complete.
func TestOperationsConcurrent(t *testing.T) {
	const workers, perWorker = 8, 40
	f := newFixture(t)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			path := f.systemPath(w%2) + "/Actions/ComputerSystem.Reset"
			for i := range perWorker {
				rt := []string{"On", "ForceOff"}[i%2]
				if status := serve(f, http.MethodPost, path, `{"ResetType":"`+rt+`"}`); status != http.StatusNoContent {
					t.Errorf("reset %s: HTTP %d", rt, status)
					return
				}
			}
		})
		wg.Go(func() {
			for range perWorker / 4 {
				if status := serve(f, http.MethodGet, operationsPath(f.ids[w%2]), ""); status != http.StatusOK {
					t.Errorf("read log: HTTP %d", status)
					return
				}
			}
		})
	}
	wg.Wait()
	for i, id := range f.ids {
		ops, err := f.srv.Operations(context.Background(), id, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for j, o := range ops {
			counts[o.Operation]++
			if j > 0 && o.At.Before(ops[j-1].At) {
				t.Fatalf("system %d: operation %d earlier than the one before", i, j)
			}
		}
		half := workers / 2 * perWorker / 2
		if len(ops) != 2*half || counts["power:On"] != half || counts["power:ForceOff"] != half {
			t.Fatalf("system %d: %d operations %v, want %d On and %d ForceOff", i, len(ops), counts, half, half)
		}
	}
}

// serve sends one request with credentials and returns the status; safe
// to call from any goroutine.
func serve(f *fixture, method, path, body string) int {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.SetBasicAuth(testUser, testPassword)
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return rec.Code
}

// TestOperationsLogged checks the structured log line of an operation, at
// the default verbosity, and that no line carries the password.
func TestOperationsLogged(t *testing.T) {
	var (
		mu    sync.Mutex
		lines []string
	)
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, args)
	}, funcr.Options{Verbosity: 0})
	f := newFixture(t, func(o *redfish.Options) { o.Logger = logger })
	expectStatus(t, f.call(t, http.MethodPost, f.systemPath(1)+"/Actions/ComputerSystem.Reset", `{"ResetType":"ForceRestart"}`), http.StatusNoContent)
	mu.Lock()
	defer mu.Unlock()
	want := `"msg"="BMC operation" "system"="` + f.ids[1] + `" "operation"="power:ForceRestart"`
	found := false
	for _, l := range lines {
		found = found || strings.Contains(l, want)
		if strings.Contains(l, testPassword) {
			t.Fatalf("log line carries the password: %s", l)
		}
	}
	if !found {
		t.Fatalf("no line %s among %q", want, lines)
	}
}
