package apiproxy

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
)

// Server is the proxy listening on the host's loopback, in plain HTTP: its
// clients run in the lab's process, as the enhancement's sidecar serves
// the containers of its own pod only.
type Server struct {
	srv  *http.Server
	done chan error
	url  string

	stopOnce sync.Once
	stopErr  error
}

// Serve starts a proxy to the hub hub reaches, with hub's credentials, on
// a port the kernel picks on 127.0.0.1 (so no other process can take it
// between a pick and the bind).
func Serve(hub *rest.Config, logger logr.Logger) (*Server, error) {
	upstream, err := url.Parse(hub.Host)
	if err != nil {
		return nil, fmt.Errorf("api proxy: the hub's address %q: %w", hub.Host, err)
	}
	transport, err := rest.TransportFor(hub)
	if err != nil {
		return nil, fmt.Errorf("api proxy: the hub's transport: %w", err)
	}
	h, err := NewHandler(Options{Upstream: upstream, Transport: transport, Logger: logger})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("api proxy: listen: %w", err)
	}
	s := &Server{
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second},
		done: make(chan error, 1),
		url:  "http://" + l.Addr().String(),
	}
	go func() { s.done <- s.srv.Serve(l) }()
	return s, nil
}

// URL is where the proxy listens.
func (s *Server) URL() string { return s.url }

// RESTConfig is a client configuration of the proxy: unmodified clients
// built from it speak cluster.x-k8s.io to the hub's private groups. It
// carries no credential, as the proxy adds the hub's. It asks for JSON:
// controller-runtime otherwise sends Kubernetes' own types (a Secret, a
// Node) as protobuf, which the proxy cannot scan for owner references and
// refuses. A component given only a kubeconfig of the proxy, as the
// enhancement's are, would be refused so; the enhancement does not say how
// its sidecar treats protobuf.
func (s *Server) RESTConfig() *rest.Config {
	return &rest.Config{Host: s.url, UserAgent: rest.DefaultKubernetesUserAgent(), QPS: 50, Burst: 100,
		ContentConfig: rest.ContentConfig{ContentType: "application/json", AcceptContentTypes: "application/json"}}
}

// Stop closes the listener and every connection at once: a graceful
// shutdown would wait for the clients' open watches, which never end.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.stopErr = s.srv.Close()
		if served := <-s.done; !errors.Is(served, http.ErrServerClosed) {
			s.stopErr = errors.Join(s.stopErr, served)
		}
	})
	return s.stopErr
}
