package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// pointerFetchTimeout bounds one fetch; the boot loop retries, as
// Ignition retries a source it cannot fetch yet.
const pointerFetchTimeout = 30 * time.Second

// fetchPointerIgnition fetches the config a pointer Ignition names, over
// HTTPS trusting only the pointer's CAs, with its headers. A source on the
// host's 127.0.0.1 (a lab service, as the hub names it) is reached at
// serviceHost, the TLS name staying the URL's.
func fetchPointerIgnition(ctx context.Context, raw []byte, serviceHost string) ([]byte, error) {
	var p agentapi.PointerConfig
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("pointer ignition: %w", err)
	}
	if n := len(p.Ignition.Config.Merge); n != 1 {
		return nil, fmt.Errorf("pointer ignition has %d config.merge sources, want 1", n)
	}
	src := p.Ignition.Config.Merge[0]
	roots := x509.NewCertPool()
	var cas []agentapi.IgnitionResource
	if sec := p.Ignition.Security; sec != nil {
		cas = sec.TLS.CertificateAuthorities
	}
	for _, ca := range cas {
		pem, err := decodeDataURL(ca.Source)
		if err != nil {
			return nil, fmt.Errorf("pointer ignition CA: %w", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, errors.New("pointer ignition CA holds no PEM certificate")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, pointerFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.Source, nil)
	if err != nil {
		return nil, fmt.Errorf("pointer ignition source: %w", err)
	}
	for _, h := range src.HTTPHeaders {
		req.Header.Set(h.Name, h.Value)
	}
	// The node trusts only the CAs the pointer names, as Ignition adds
	// them to an image that has no others for the endpoint.
	c := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			return dialLabHost(ctx, serviceHost, network, address)
		},
	}}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch ignition %s: %w", redactedURL(req), err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("fetch ignition %s: %w", redactedURL(req), err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch ignition %s: %s", redactedURL(req), resp.Status)
	}
	return body, nil
}

// redactedURL is the request's URL without query (a token may ride there).
func redactedURL(req *http.Request) string {
	u := *req.URL
	u.RawQuery, u.User = "", nil
	return u.String()
}

// joinThroughPointer fetches a day-2 node's config through the pointer
// Ignition its install left, then bootstraps its identity with the
// credential the config carries. The identity replaces the pointer on the
// disk, so a reboot joins without fetching again.
func joinThroughPointer(ctx context.Context, sys *system, disk string, pointer agentapi.NodeConfig, meta map[string]string) (agentapi.NodeConfig, error) {
	host, err := sys.serviceHost("")
	if err != nil {
		return pointer, err
	}
	body, err := fetchPointerIgnition(ctx, pointer.PointerIgnition, host)
	if err != nil {
		return pointer, err
	}
	ud, err := parseUserData(body)
	if err != nil {
		return pointer, fmt.Errorf("ignition from the endpoint: %w", err)
	}
	if ud.Node == nil {
		return pointer, errors.New("ignition from the endpoint carries no node config")
	}
	cfg := *ud.Node
	if cfg.Name == "" {
		cfg.Name = pointer.Name
	}
	cfg.Report = pointer.Report
	log.Printf("node %s: fetched its config through the pointer ignition", cfg.Name)
	if !cfg.Bootstrap {
		return cfg, nil
	}
	return bootstrapNode(ctx, sys, disk, cfg, sha256Hex(pointer.PointerIgnition), meta)
}
