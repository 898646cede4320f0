package redfish_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkGetSystem measures authenticated GETs of a System on the memory
// backend, in process (the handler alone) and over loopback HTTP with
// keep-alive (what a client sees).
func BenchmarkGetSystem(b *testing.B) {
	f := newFixture(b)
	path := f.systemPath(0)
	b.Run("handler", func(b *testing.B) {
		benchHandler(b, f, func(int64) (string, string, string) { return http.MethodGet, path, "" }, http.StatusOK)
	})
	b.Run("http", func(b *testing.B) {
		benchHTTP(b, f, func(int64) (string, string, string) { return http.MethodGet, path, "" }, http.StatusOK)
	})
}

// BenchmarkReset measures authenticated power actions, alternating On and
// ForceOff so that each one changes the state.
func BenchmarkReset(b *testing.B) {
	f := newFixture(b)
	reset := f.systemPath(0) + "/Actions/ComputerSystem.Reset"
	req := func(i int64) (string, string, string) {
		if i%2 == 0 {
			return http.MethodPost, reset, `{"ResetType":"On"}`
		}
		return http.MethodPost, reset, `{"ResetType":"ForceOff"}`
	}
	b.Run("handler", func(b *testing.B) { benchHandler(b, f, req, http.StatusNoContent) })
	b.Run("http", func(b *testing.B) { benchHTTP(b, f, req, http.StatusNoContent) })
}

type benchRequest func(i int64) (method, path, body string)

func benchHandler(b *testing.B, f *fixture, next benchRequest, want int) {
	var n atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			method, path, body := next(n.Add(1))
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.SetBasicAuth(testUser, testPassword)
			rec := httptest.NewRecorder()
			f.srv.ServeHTTP(rec, req)
			if rec.Code != want {
				b.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func benchHTTP(b *testing.B, f *fixture, next benchRequest, want int) {
	srv := httptest.NewServer(f.srv)
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.Cleanup(client.CloseIdleConnections)
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			method, path, body := next(n.Add(1))
			req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			req.SetBasicAuth(testUser, testPassword)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				b.Fatalf("HTTP %d", resp.StatusCode)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
