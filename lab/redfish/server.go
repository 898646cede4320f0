package redfish

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// DefaultAddr is where the server listens unless told otherwise: loopback,
// on a port the kernel picks.
const DefaultAddr = "127.0.0.1:0"

// Options configure a Server. Only Backend is required.
type Options struct {
	// Backend holds the systems. Required.
	Backend Backend
	// Addr is the listen address; it must be a loopback IP or
	// "localhost". Default DefaultAddr.
	Addr string
	// HtpasswdPath is an htpasswd file of bcrypt hashes (`htpasswd -B`)
	// whose users may log in. Ignored when Credentials is set.
	HtpasswdPath string
	// Credentials are parsed htpasswd entries, an alternative to
	// HtpasswdPath. With neither, authentication is off: every request
	// is let in (and a warning logged).
	Credentials Credentials
	// TLSCertFile and TLSKeyFile, both set, make the server speak HTTPS.
	TLSCertFile string
	TLSKeyFile  string
	// ImageDir receives the images downloaded for InsertMedia. Default: a
	// temporary directory that Shutdown removes.
	ImageDir string
	// MaxImageBytes bounds one image download. Default 8 GiB.
	MaxImageBytes int64
	// DownloadTimeout bounds one image download. Default 10m.
	DownloadTimeout time.Duration
	// HTTPClient downloads images. Redirects are always checked to stay
	// on loopback. Default: a client that can connect only to loopback
	// addresses and does not verify certificates, like a BMC with
	// VirtualMedia VerifyCertificate false.
	HTTPClient *http.Client
	// UUID is the service root UUID. Default: a random one.
	UUID string
	// Logger receives request logs at V(1) and failures at V(0).
	// Credentials are never logged. Default: discard.
	Logger logr.Logger
}

// Server is a Redfish BMC emulator for the systems of one Backend. It is an
// http.Handler; Start also serves it on a loopback port.
type Server struct {
	backend  Backend
	log      logr.Logger
	uuid     string
	auth     *authenticator
	sessions *sessionStore
	images   *imageStore
	faults   *faultStore
	leds     *ledStore
	ops      *opLog
	routes   []*route

	addr       string
	tlsConfig  *tls.Config
	ownedDir   string // image dir to remove on Shutdown, if we made it
	httpServer *http.Server
	listener   net.Listener
	cancelBase context.CancelFunc
	done       chan struct{}
	serveErr   error
	closeOnce  sync.Once
}

// New makes a Server. It reads the htpasswd file and TLS key pair now, so
// that a bad one fails here rather than on the first request.
func New(opts Options) (_ *Server, retErr error) {
	if opts.Backend == nil {
		return nil, errors.New("redfish server: Backend is required")
	}
	opts.defaults()
	s := &Server{backend: opts.Backend, log: opts.Logger, uuid: opts.UUID, addr: opts.Addr,
		sessions: newSessionStore(), faults: newFaultStore(), leds: newLEDStore(), ops: newOpLog(maxOperations), done: make(chan struct{})}
	if err := s.setupAuth(opts); err != nil {
		return nil, err
	}
	if err := s.setupTLS(opts); err != nil {
		return nil, err
	}
	if err := s.setupImages(opts); err != nil {
		return nil, err
	}
	if s.uuid == "" {
		u, err := newUUID()
		if err != nil {
			return nil, fmt.Errorf("make service UUID: %w", err)
		}
		s.uuid = u
	}
	s.routes = s.makeRoutes()
	return s, nil
}

func (o *Options) defaults() {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.MaxImageBytes <= 0 {
		o.MaxImageBytes = defaultMaxImageBytes
	}
	if o.DownloadTimeout <= 0 {
		o.DownloadTimeout = defaultDownloadTimeout
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
}

func (s *Server) setupAuth(opts Options) error {
	creds := opts.Credentials
	if creds == nil && opts.HtpasswdPath != "" {
		var err error
		if creds, err = LoadHtpasswd(opts.HtpasswdPath); err != nil {
			return err
		}
	}
	if creds == nil {
		s.log.Info("Authentication is off: every request is let in")
	}
	auth, err := newAuthenticator(creds, s.sessions)
	if err != nil {
		return fmt.Errorf("set up authentication: %w", err)
	}
	s.auth = auth
	return nil
}

func (s *Server) setupTLS(opts Options) error {
	if (opts.TLSCertFile == "") != (opts.TLSKeyFile == "") {
		return errors.New("redfish server: TLSCertFile and TLSKeyFile go together")
	}
	if opts.TLSCertFile == "" {
		return nil
	}
	pair, err := tls.LoadX509KeyPair(opts.TLSCertFile, opts.TLSKeyFile)
	if err != nil {
		return fmt.Errorf("load TLS key pair: %w", err)
	}
	s.tlsConfig = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	return nil
}

func (s *Server) setupImages(opts Options) error {
	dir := opts.ImageDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "paritylab-redfish-images-")
		if err != nil {
			return fmt.Errorf("create image dir: %w", err)
		}
		dir, s.ownedDir = tmp, tmp
	}
	// 0755: a hypervisor running as another user reads the images.
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // see above
		return fmt.Errorf("create image dir: %w", err)
	}
	client := opts.HTTPClient
	if client == nil {
		client = defaultDownloadClient()
	}
	s.images = &imageStore{dir: dir, client: withRedirectCheck(client), maxBytes: opts.MaxImageBytes,
		timeout: opts.DownloadTimeout, files: map[string]string{}}
	return nil
}

// Start binds the listen address and serves in the background until
// Shutdown. The bound address is then available from Addr and URL.
func (s *Server) Start() error {
	if s.listener != nil {
		return errors.New("redfish server already started")
	}
	addr, err := loopbackAddr(s.addr)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	if s.tlsConfig != nil {
		l = tls.NewListener(l, s.tlsConfig)
	}
	base, cancel := context.WithCancel(context.Background())
	s.listener, s.cancelBase = l, cancel
	s.httpServer = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          newStdLogger(s.log),
	}
	go s.serve()
	s.log.Info("Redfish emulator listening", "url", s.URL())
	return nil
}

func (s *Server) serve() {
	defer close(s.done)
	if err := s.httpServer.Serve(s.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.serveErr = fmt.Errorf("serve redfish: %w", err)
	}
}

// loopbackAddr checks that addr is on loopback; "localhost" means
// 127.0.0.1 so the answer does not depend on the resolver.
func loopbackAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("parse listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return "", fmt.Errorf("listen address %q is not a loopback IP (127.0.0.0/8 or ::1): the emulator serves the lab only", addr)
	}
	return net.JoinHostPort(host, port), nil
}

// Addr is the bound address once Start returned.
func (s *Server) Addr() *net.TCPAddr {
	if s.listener == nil {
		return nil
	}
	return s.listener.Addr().(*net.TCPAddr)
}

// URL is the base URL of the service (scheme://host:port) once Start
// returned.
func (s *Server) URL() string {
	if s.listener == nil {
		return ""
	}
	scheme := "http"
	if s.tlsConfig != nil {
		scheme = "https"
	}
	return scheme + "://" + s.Addr().String()
}

// Done is closed when the server stopped serving.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is why the server stopped serving, once Done is closed; nil after
// Shutdown.
func (s *Server) Err() error {
	select {
	case <-s.done:
		return s.serveErr
	default:
		return nil
	}
}

// Shutdown stops accepting requests and waits for those in flight until
// ctx ends; then it aborts them (downloads, injected delays). It removes
// the image directory if the server made it. Safe to call twice, and
// without Start.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.closeOnce.Do(func() {
		if s.httpServer != nil {
			err = s.httpServer.Shutdown(ctx)
			if err != nil {
				s.cancelBase()
				_ = s.httpServer.Close()
			}
			s.cancelBase()
			<-s.done
		}
		if s.ownedDir != "" {
			if rmErr := os.RemoveAll(s.ownedDir); rmErr != nil && err == nil {
				err = fmt.Errorf("remove image dir: %w", rmErr)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("shut down redfish server: %w", err)
	}
	return nil
}
