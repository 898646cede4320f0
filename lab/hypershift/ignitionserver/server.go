package ignitionserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/ports"
)

// DefaultAdvertiseHost is where a lab guest reaches the host: its QEMU
// user-mode gateway.
const DefaultAdvertiseHost = "10.0.2.2"

// Options configure the ignition server of one hosted cluster.
type Options struct {
	// Namespace is the hosted cluster's control-plane namespace: the CA
	// Secret goes there and the token Secrets are read from there.
	// Required.
	Namespace string
	// Client reads the token Secrets and writes the CA Secret. Required.
	Client client.Client
	// Node returns the hosted cluster's bootstrap node config, served to
	// every valid token. It is called per request, so a rotated
	// credential is served at once. Required.
	Node func(context.Context) (agentapi.NodeConfig, error)
	// AdvertiseHost is the host guests reach the server at, in Endpoint
	// and the serving certificate. Defaults to DefaultAdvertiseHost.
	AdvertiseHost string
	// ListenHost is the loopback IP (127.0.0.0/8 or ::1) to listen on; any
	// other address is refused. Defaults to ports.Loopback (127.0.0.1).
	ListenHost string
	// Logger receives the server's messages; the zero value discards them.
	Logger logr.Logger
}

func (o *Options) defaults() {
	if o.AdvertiseHost == "" {
		o.AdvertiseHost = DefaultAdvertiseHost
	}
	if o.ListenHost == "" {
		o.ListenHost = ports.Loopback
	}
}

func (o *Options) validate() error {
	switch {
	case o.Namespace == "":
		return errors.New("start ignition server: Options.Namespace is required")
	case o.Client == nil:
		return errors.New("start ignition server: Options.Client is required")
	case o.Node == nil:
		return errors.New("start ignition server: Options.Node is required")
	}
	if ip, err := netip.ParseAddr(o.ListenHost); err != nil || !ip.IsLoopback() {
		return fmt.Errorf("start ignition server: listen host %q must be a loopback IP (127.0.0.0/8 or ::1): "+
			"lab guests reach the server through QEMU user-mode networking, and nothing else may", o.ListenHost)
	}
	return nil
}

// Server is a running ignition server.
type Server struct {
	endpoint string
	port     int
	caPEM    []byte
	http     *http.Server
	served   chan struct{}
	stopOnce sync.Once
}

// Start makes (or reuses) the CA in the Secret ignition-server-ca-cert,
// issues a serving certificate from it and serves on a free port of
// ListenHost until Stop. ctx bounds only the start-up.
func Start(ctx context.Context, opts Options) (*Server, error) {
	opts.defaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	ca, err := ensureCA(ctx, opts.Client, opts.Namespace)
	if err != nil {
		return nil, err
	}
	cert, err := servingCert(ca, opts.ListenHost, opts.AdvertiseHost)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(opts.ListenHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("start ignition server: listen on %s: %w", opts.ListenHost, err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	log := opts.Logger.WithValues("namespace", opts.Namespace)
	s := &Server{
		endpoint: net.JoinHostPort(opts.AdvertiseHost, strconv.Itoa(port)),
		port:     port,
		caPEM:    ca.CertPEM(),
		served:   make(chan struct{}),
	}
	s.http = newHTTPServer(newHandler(opts, log), cert, log)
	go func() {
		defer close(s.served)
		if err := s.http.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "Ignition server stopped serving")
		}
	}()
	log.Info("Ignition server listening", "endpoint", s.endpoint, "listen", l.Addr().String())
	return s, nil
}

// newHTTPServer is the server of ignition-server/cmd/start.go L288-310:
// its timeouts, TLS 1.2 at least with the TLS 1.2 suites of OpenShift's
// intermediate profile, and no HTTP/2 (an empty TLSNextProto).
func newHTTPServer(h http.Handler, cert tls.Certificate, log logr.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       5 * time.Second,
		WriteTimeout:      10 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
			CipherSuites: []uint16{
				tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
				tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
				tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
				tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
				tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,
				tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305,
			},
		},
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		// net/http's own messages (TLS handshake errors) at debug level.
		ErrorLog: slog.NewLogLogger(logr.ToSlogHandler(log.V(1)), slog.LevelInfo),
	}
}

// Endpoint is <AdvertiseHost>:<port>, what HyperShift publishes in a
// HostedCluster's status.ignitionEndpoint.
func (s *Server) Endpoint() string { return s.endpoint }

// Port is the port the server listens on.
func (s *Server) Port() int { return s.port }

// CACertPEM is the CA that signed the serving certificate (the Secret's
// tls.crt).
func (s *Server) CACertPEM() []byte { return s.caPEM }

// Stop closes the listener and the open connections and waits until the
// server stopped serving. Safe to call twice: the second call returns nil.
func (s *Server) Stop() error {
	var err error
	s.stopOnce.Do(func() {
		if cerr := s.http.Close(); cerr != nil {
			err = fmt.Errorf("stop ignition server: %w", cerr)
		}
		<-s.served
	})
	return err
}
