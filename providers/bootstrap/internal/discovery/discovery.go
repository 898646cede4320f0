package discovery

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Fetcher fetches discovery ignitions.
type Fetcher interface {
	// Fetch returns the ignition served at url. caBundle, when not empty,
	// is PEM certificates trusted besides the system's.
	Fetch(ctx context.Context, url string, caBundle []byte) ([]byte, error)
}

// HTTP fetches over HTTP(S).
type HTTP struct {
	// Timeout bounds one fetch. Default 30s.
	Timeout time.Duration
}

var _ Fetcher = (*HTTP)(nil)

// maxIgnition bounds what is read: discovery ignitions are tens of KiB.
const maxIgnition = 8 << 20

// Fetch implements Fetcher and checks that the answer is an ignition.
func (h *HTTP) Fetch(ctx context.Context, url string, caBundle []byte) ([]byte, error) {
	timeout := h.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := httpClient(caBundle)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("build discovery ignition request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch discovery ignition: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIgnition))
	if err != nil {
		return nil, fmt.Errorf("read discovery ignition: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch discovery ignition: %s answered %s", url, resp.Status)
	}
	if err := Check(body); err != nil {
		return nil, err
	}
	return body, nil
}

func httpClient(caBundle []byte) (*http.Client, error) {
	if len(caBundle) == 0 {
		return http.DefaultClient, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(caBundle) {
		return nil, errors.New("fetch discovery ignition: the trust bundle holds no PEM certificate")
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t}, nil
}

// Check says whether raw is an ignition config (JSON with ignition.version).
func Check(raw []byte) error {
	var cfg struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("discovery ignition is not JSON: %w", err)
	}
	if cfg.Ignition.Version == "" {
		return errors.New("discovery ignition has no ignition.version")
	}
	return nil
}
