package registry

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
)

// Request is one request a registry answered, from its log.
type Request struct {
	Time   time.Time
	Method string
	// URI is the request's path and query.
	URI string
	// Kind is what was asked for: "manifest", "blob", "upload", "tags",
	// "catalog" or "base" (GET /v2/, the API check every client makes
	// first); "other" for anything else.
	Kind string
	// Repository is the repository the request named, empty for base and
	// catalog requests.
	Repository string
	// Reference is the manifest's tag or digest, or the blob's digest.
	Reference string
	// Status is the HTTP status of the answer.
	Status int
	// UserAgent names the client.
	UserAgent string
	// Remote is the client's address.
	Remote string
}

// ByDigest says whether the request named its manifest or blob by digest.
func (r Request) ByDigest() bool { return strings.HasPrefix(r.Reference, "sha256:") }

// Pull says whether the request read content: a GET or HEAD of a manifest
// or blob.
func (r Request) Pull() bool {
	return (r.Method == "GET" || r.Method == "HEAD") && (r.Kind == "manifest" || r.Kind == "blob")
}

// logEntry is the part of a log line that describes a request.
type logEntry struct {
	Msg       string    `json:"msg"`
	Time      time.Time `json:"time"`
	Method    string    `json:"http.request.method"`
	URI       string    `json:"http.request.uri"`
	UserAgent string    `json:"http.request.useragent"`
	Remote    string    `json:"http.request.remoteaddr"`
	Status    int       `json:"http.response.status"`
}

// Requests reads the requests a registry's log (Registry.LogPath) records,
// in order. A log that does not exist holds none.
func Requests(logPath string) ([]Request, error) {
	f, err := os.Open(logPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open registry log: %w", err)
	}
	defer f.Close()
	var out []Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // the process's own lines, e.g. a Go panic
		}
		var e logEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("registry log %s: %w", logPath, err)
		}
		if !strings.HasPrefix(e.Msg, "response completed") {
			continue
		}
		out = append(out, requestOf(e))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read registry log %s: %w", logPath, err)
	}
	return out, nil
}

// requestOf parses the request's path per the distribution API:
// /v2/<name>/manifests/<reference>, /v2/<name>/blobs/<digest>,
// /v2/<name>/blobs/uploads/..., /v2/<name>/tags/list, /v2/_catalog, /v2/.
func requestOf(e logEntry) Request {
	r := Request{Time: e.Time, Method: e.Method, URI: e.URI, Status: e.Status, UserAgent: e.UserAgent, Remote: e.Remote, Kind: "other"}
	path, _, _ := strings.Cut(e.URI, "?")
	rest, ok := strings.CutPrefix(path, "/v2/")
	switch {
	case !ok:
		return r
	case rest == "":
		r.Kind = "base"
		return r
	case rest == "_catalog":
		r.Kind = "catalog"
		return r
	}
	for _, k := range []struct{ sep, kind string }{
		{"/blobs/uploads", "upload"}, {"/manifests/", "manifest"}, {"/blobs/", "blob"}, {"/tags/list", "tags"},
	} {
		if i := strings.LastIndex(rest, k.sep); i > 0 {
			r.Kind, r.Repository = k.kind, rest[:i]
			if k.kind == "manifest" || k.kind == "blob" {
				r.Reference = rest[i+len(k.sep):]
			}
			return r
		}
	}
	return r
}
