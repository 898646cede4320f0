package ignitionserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// k8s is a client of the API server every test shares; each test works
// in a namespace of its own.
var k8s client.WithWatch

func TestMain(m *testing.M) {
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start API server: %v\n", err)
		os.Exit(1)
	}
	k8s, err = client.NewWithWatch(cfg, client.Options{})
	code := 1
	if err != nil {
		fmt.Fprintf(os.Stderr, "API client: %v\n", err)
	} else {
		code = m.Run()
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop API server: %v\n", err)
	}
	os.Exit(code)
}

var namespaces atomic.Int32

func newNamespace(t *testing.T) string {
	t.Helper()
	name := "ignition-" + strconv.Itoa(int(namespaces.Add(1)))
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

// bootstrapNode is a hosted cluster's bootstrap node config as the lab
// builds a worker's (lab/spokes.go startMachineAPI).
func bootstrapNode(apiPort int) agentapi.NodeConfig {
	return agentapi.NodeConfig{
		APIPort: apiPort, TLSServerName: "api.hc.lab.test", CACert: "-----BEGIN CERTIFICATE-----\nCA\n",
		ClientCert: "-----BEGIN CERTIFICATE-----\nbootstrap\n", ClientKey: "-----BEGIN PRIVATE KEY-----\nkey\n",
		Bootstrap: true, KubeletVersion: "v1.34.4",
	}
}

// start starts a server and stops it when the test ends.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}

func createTokenSecret(t *testing.T, namespace, name, token string) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string][]byte{TokenKey: []byte(token)},
	}
	if err := k8s.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// bearer is the Authorization header HyperShift's user data sends for
// token (nodepool/token.go L409, L465).
func bearer(token string) string {
	return "Bearer " + base64.StdEncoding.EncodeToString([]byte(token))
}

// logBuffer keeps every line a logger writes, at every verbosity.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.b.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 10})
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// httpsClient trusts only caPEM and checks the certificate for serverName.
func httpsClient(t *testing.T, caPEM []byte, serverName string) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA holds no PEM certificate")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

type response struct {
	status      int
	contentType string
	body        []byte
}

// get requests path from the server on 127.0.0.1 with the given headers.
func get(t *testing.T, c *http.Client, s *Server, path string, headers map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://127.0.0.1:"+strconv.Itoa(s.Port())+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body}
}

// agentNodeConfig reads a payload by cmd/lab-agent's rules (ignition.go
// parseUserData): an Ignition config, the file at agentapi.UserDataFile,
// its data URL (the base64 form, the one the server writes), a UserData
// with a node config.
func agentNodeConfig(t *testing.T, body []byte) agentapi.NodeConfig {
	t.Helper()
	// Files as the server writes them; the agent reads path and contents.source.
	var ign struct {
		Ignition *struct{ Version string }      `json:"ignition"`
		Storage  struct{ Files []ignitionFile } `json:"storage"`
	}
	if err := json.Unmarshal(body, &ign); err != nil || ign.Ignition == nil {
		t.Fatalf("payload is not an Ignition config (%v): %s", err, body)
	}
	if ign.Ignition.Version != "3.2.0" {
		t.Errorf("Ignition version %q, want 3.2.0", ign.Ignition.Version)
	}
	for _, f := range ign.Storage.Files {
		if f.Path != agentapi.UserDataFile {
			continue
		}
		encoded, ok := strings.CutPrefix(f.Contents.Source, "data:;base64,")
		if !ok {
			t.Fatalf("%s source %.40q is not a base64 data URL", f.Path, f.Contents.Source)
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			t.Fatal(err)
		}
		var ud agentapi.UserData
		if err := json.Unmarshal(raw, &ud); err != nil || ud.Node == nil {
			t.Fatalf("%s holds no node config (%v): %s", f.Path, err, raw)
		}
		return *ud.Node
	}
	t.Fatalf("payload carries no %s: %s", agentapi.UserDataFile, body)
	return agentapi.NodeConfig{}
}
