package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// client talks to the lab's assisted service.
type client struct {
	base  string
	token string
	http  *http.Client
}

func newClient(host string, port int, token string) *client {
	return &client{
		base:  "http://" + net.JoinHostPort(host, strconv.Itoa(port)),
		token: token,
		http:  &http.Client{Timeout: 30 * time.Second},
	}
}

// do sends a JSON request and decodes a JSON answer into out (if not nil).
func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set(agentapi.AuthHeader, "Bearer "+c.token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode >= 300 {
		apiErr := &agentapi.APIError{Code: resp.StatusCode, Reason: string(raw)}
		_ = json.Unmarshal(raw, apiErr)
		return fmt.Errorf("%s %s: %w", method, path, apiErr)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// download streams a file from the service into w.
func (c *client) download(ctx context.Context, path string, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set(agentapi.AuthHeader, "Bearer "+c.token)
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return 0, fmt.Errorf("download %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("download %s: %s", path, resp.Status)
	}
	return io.Copy(w, resp.Body)
}

func (c *client) progress(ctx context.Context, infraEnv, host, stage, info string) error {
	return c.do(ctx, http.MethodPut, agentapi.ProgressPath(infraEnv, host), agentapi.Progress{CurrentStage: stage, ProgressInfo: info}, nil)
}
