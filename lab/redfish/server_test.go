package redfish_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"golang.org/x/crypto/bcrypt"

	"github.com/paritylab/paritylab/lab/pki"
	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/lab/redfish/memory"
	"github.com/paritylab/paritylab/lab/redfish/redfishtest"
)

func TestStartServesOnLoopbackAndShutsDown(t *testing.T) {
	backend, err := memory.New(memory.Options{Systems: memory.Generate("n", 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := redfish.New(redfish.Options{Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if srv.Addr().Port == 0 || !srv.Addr().IP.IsLoopback() || !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("bound %v (%s), want a loopback port", srv.Addr(), srv.URL())
	}
	resp, err := http.Get(srv.URL() + "/redfish/v1/Systems")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("without credentials configured, auth is off; got HTTP %d", resp.StatusCode)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-srv.Done()
	if srv.Err() != nil {
		t.Fatalf("Err after Shutdown: %v", srv.Err())
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if _, err := http.Get(srv.URL() + "/redfish/v1/"); err == nil {
		t.Fatal("server still answers after Shutdown")
	}
}

func TestStartRefusesNonLoopback(t *testing.T) {
	backend, _ := memory.New(memory.Options{})
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", ":0", "example.com:0", "nonsense"} {
		srv, err := redfish.New(redfish.Options{Backend: backend, Addr: addr})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err == nil || !strings.Contains(err.Error(), addr) {
			_ = srv.Shutdown(context.Background())
			t.Fatalf("Start on %q: %v, want a refusal naming the address", addr, err)
		}
		_ = srv.Shutdown(context.Background())
	}
}

func TestOwnedImageDirIsRemoved(t *testing.T) {
	backend, _ := memory.New(memory.Options{Systems: memory.Generate("n", 1)})
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "paritylab-redfish-images-*"))
	srv, err := redfish.New(redfish.Options{Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "paritylab-redfish-images-*"))
	if len(after) != len(before)+1 {
		t.Fatalf("New made %d image dirs, want 1", len(after)-len(before))
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if final, _ := filepath.Glob(filepath.Join(os.TempDir(), "paritylab-redfish-images-*")); len(final) != len(before) {
		t.Fatalf("Shutdown left the image dir: %v", final)
	}
}

func TestTLS(t *testing.T) {
	ca, err := pki.NewCA("test CA")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.ServingCert("redfish", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := pair.WriteFiles(cert, key); err != nil {
		t.Fatal(err)
	}
	backend, _ := memory.New(memory.Options{Systems: memory.Generate("n", 1)})
	srv, err := redfish.New(redfish.Options{Backend: backend, TLSCertFile: cert, TLSKeyFile: key, Credentials: mustCreds(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(srv.URL(), "https://") {
		t.Fatalf("URL %s", srv.URL())
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := client.Get(srv.URL() + "/redfish/v1/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTPS service root: %d", resp.StatusCode)
	}
	if _, err := redfish.New(redfish.Options{Backend: backend, TLSCertFile: cert}); err == nil {
		t.Fatal("New accepted a certificate without a key")
	}
}

func mustCreds(t *testing.T) redfish.Credentials {
	t.Helper()
	creds, err := redfish.LoadHtpasswd(redfishtest.WriteHtpasswd(t, map[string]string{testUser: testPassword}))
	if err != nil {
		t.Fatal(err)
	}
	return creds
}

func TestParseHtpasswd(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	// htpasswd -B writes $2y$, which is the same algorithm.
	y := "$2y$" + strings.TrimPrefix(string(hash), "$2a$")
	creds, err := redfish.ParseHtpasswd(strings.NewReader("# users\n\nalice:" + y + "\nbob:" + string(hash) + "\n"))
	if err != nil || len(creds) != 2 {
		t.Fatalf("parse: %v %v", creds, err)
	}
	if bcrypt.CompareHashAndPassword(creds["alice"], []byte("pw")) != nil {
		t.Fatal("$2y$ hash does not verify")
	}
	for content, want := range map[string]string{
		"carol:$apr1$xyz$abc\n":                   "MD5",
		"carol:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=": "SHA-1",
		"carol:secret\n":                          "plain text",
		"carol:$6$salt$hash\n":                    "SHA-crypt",
		"carol:$2y$10$short\n":                    "parse bcrypt",
		"carol\n":                                 "user:hash",
		"alice:" + y + "\nalice:" + y:             "twice",
		"# nobody\n":                              "no users",
	} {
		if _, err := redfish.ParseHtpasswd(strings.NewReader(content)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one mentioning %q", content, err, want)
		}
	}
	if _, err := redfish.New(redfish.Options{Backend: &panicBackend{}, HtpasswdPath: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Fatal("New accepted a missing htpasswd file")
	}
}

// TestCredentialsNeverLogged logs everything while clients log in, use
// Basic auth and insert media with image credentials, then looks for any
// secret in the log.
func TestCredentialsNeverLogged(t *testing.T) {
	var mu sync.Mutex
	var logs strings.Builder
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		logs.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 10})
	f := newFixture(t, func(o *redfish.Options) { o.Logger = logger })
	r := f.send(t, http.MethodPost, "/redfish/v1/SessionService/Sessions", `{"UserName":"admin","Password":"`+testPassword+`"}`, nil)
	token := r.header.Get("X-Auth-Token")
	f.send(t, http.MethodGet, f.systemPath(0), "", func(r *http.Request) { r.Header.Set("X-Auth-Token", token) })
	f.call(t, http.MethodGet, f.systemPath(0), "")
	f.send(t, http.MethodGet, f.systemPath(0), "", func(r *http.Request) { r.SetBasicAuth(testUser, "wrong-password-xyz") })
	image := redfishtest.ServeImage(t, "a.iso", []byte("x"))
	image = strings.Replace(image, "http://", "http://imguser:url-secret-123@", 1)
	f.call(t, http.MethodPost, f.systemPath(0)+"/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia", `{"Image":"`+image+`","UserName":"imguser","Password":"body-secret-456"}`)
	f.call(t, http.MethodGet, "/redfish/v1/Nope?password=query-secret-789", "")
	out := logs.String()
	if !strings.Contains(out, "Media inserted") {
		t.Fatalf("log lacks the insert (the test did not exercise it):\n%s", out)
	}
	for _, secret := range []string{testPassword, token, "wrong-password-xyz", "url-secret-123", "body-secret-456", "query-secret-789"} {
		if strings.Contains(out, secret) {
			t.Fatalf("log contains secret %q:\n%s", secret, out)
		}
	}
	// The password in the URL is not served back either.
	if r = f.call(t, http.MethodGet, f.systemPath(0)+"/VirtualMedia/Cd", ""); strings.Contains(r.raw, "url-secret-123") {
		t.Fatalf("VirtualMedia shows the image password: %s", r.raw)
	}
}

// panicBackend panics or fails on every call, to check that the server
// answers with a Redfish 500 all the same.
type panicBackend struct{ fail bool }

var _ redfish.Backend = (*panicBackend)(nil)

func (p *panicBackend) boom() error {
	if p.fail {
		return errors.New("disk on fire")
	}
	panic("backend bug")
}

func (p *panicBackend) Systems(context.Context) ([]string, error) { return nil, p.boom() }
func (p *panicBackend) System(context.Context, string) (*redfish.System, error) {
	return nil, p.boom()
}
func (p *panicBackend) Resolve(context.Context, string) (string, error) { return "", p.boom() }
func (p *panicBackend) Reset(context.Context, string, redfish.ResetType) error {
	return p.boom()
}
func (p *panicBackend) SetBoot(context.Context, string, redfish.BootPatch) error {
	return p.boom()
}
func (p *panicBackend) InsertMedia(context.Context, string, string, redfish.Image) error {
	return p.boom()
}
func (p *panicBackend) EjectMedia(context.Context, string, string) error { return p.boom() }

func TestPanicAndBackendFailureAnswer500(t *testing.T) {
	for _, fail := range []bool{false, true} {
		var logged []string
		logger := funcr.New(func(_, args string) {
			if strings.Contains(args, `"error"=`) {
				logged = append(logged, args)
			}
		}, funcr.Options{})
		srv, err := redfish.New(redfish.Options{Backend: &panicBackend{fail: fail}, Logger: logger, ImageDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{srv: srv}
		for _, path := range []string{"/redfish/v1/Systems", "/redfish/v1/Systems/x"} {
			r := f.send(t, http.MethodGet, path, "", nil)
			want := "panic: backend bug"
			if fail {
				want = "disk on fire"
			}
			expectError(t, r, http.StatusInternalServerError, "InternalError", want)
		}
		if len(logged) != 2 {
			t.Fatalf("logged %d errors for 2 failures: %v", len(logged), logged)
		}
	}
}
