package nodefence

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/paritylab/paritylab/lab/pki"
	"github.com/paritylab/paritylab/lab/ports"
)

// Mode says in which order the fence lets the restoring write and the
// others land.
type Mode string

const (
	// RestoreFirst: the restoring write is the first to land on the
	// re-registered Node.
	RestoreFirst Mode = "restore-first"
	// WriteBeforeRestore: the fence's own write lands between the
	// restoring client's read and its write.
	WriteBeforeRestore Mode = "write-before-restore"
)

// WriteAnnotation is what the fence's own write adds to the Node (and
// takes away again) in WriteBeforeRestore.
const WriteAnnotation = "paritylab.io/node-fence-write"

// UserAgent is the fence's client's user agent, as audit logs show it.
const UserAgent = "paritylab-node-fence"

// Defaults.
const (
	defaultMaxHold = 20 * time.Second
	// landWait bounds how long a restoring write may take to show on the
	// Node before the held writes go anyway.
	landWait = 10 * time.Second
	// webhookTimeout is the API server's wait for the fence's answer, the
	// most admission allows; longer than any hold.
	webhookTimeout = 30
)

// Options configure a fence.
type Options struct {
	// Config reaches the workload cluster. Required.
	Config *rest.Config
	// Node names the fenced Node. Required.
	Node string
	// Marker is a label key the Node carries before the failure and the
	// restoring write gives back to the Node it recreated. Required.
	Marker string
	// Mode is RestoreFirst or WriteBeforeRestore. Required.
	Mode Mode
	// MaxHold bounds how long a write is held. Default 20 s.
	MaxHold time.Duration
	// Logger receives what the fence does. Default discard.
	Logger logr.Logger
}

func (o *Options) validate() error {
	var errs []error
	if o.Config == nil {
		errs = append(errs, errors.New("Config is required"))
	}
	if o.Node == "" {
		errs = append(errs, errors.New("Node is required"))
	}
	if o.Marker == "" {
		errs = append(errs, errors.New("Marker is required"))
	}
	if o.Mode != RestoreFirst && o.Mode != WriteBeforeRestore {
		errs = append(errs, fmt.Errorf("Mode %q is neither %s nor %s", o.Mode, RestoreFirst, WriteBeforeRestore))
	}
	if o.MaxHold == 0 {
		o.MaxHold = defaultMaxHold
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("node fence options: %w", err)
	}
	return nil
}

// Report is what a fence did.
type Report struct {
	// Restores counts the restoring writes it saw.
	Restores int
	// Held counts the writes it held until a restore landed.
	Held int
	// HoldsRunOut counts the holds that ended at MaxHold, with no
	// restore: the order was not the fence's to choose then.
	HoldsRunOut int
	// WrittenBeforeRestore counts the writes it made before a restore.
	WrittenBeforeRestore int
	// Errors are its own writes and reads that failed.
	Errors []string
}

// Fence is a running fence.
type Fence struct {
	opts      Options
	client    kubernetes.Interface
	server    *http.Server
	listener  net.Listener
	configKey string

	mu sync.Mutex
	// node is the first Node object without the marker, the recreation
	// the fence orders.
	node   *recreated
	report Report
	// dryRuns counts the dry-run writes it saw: Start's proof that the
	// API server calls it.
	dryRuns int
}

// recreated is the fence's state for the recreated Node object.
type recreated struct {
	uid      types.UID
	restored bool
	release  chan struct{}
	once     sync.Once
}

func (r *recreated) open() { r.once.Do(func() { close(r.release) }) }

// Start serves the fence and registers it with the workload cluster; it
// returns once the API server calls it.
func Start(ctx context.Context, opts Options) (_ *Fence, retErr error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(opts.Config)
	cfg.UserAgent = UserAgent
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("node fence client: %w", err)
	}
	f := &Fence{opts: opts, client: cs, configKey: "paritylab-node-fence-" + opts.Node}
	ca, err := f.serve()
	if err != nil {
		return nil, err
	}
	defer func() {
		if retErr != nil {
			_ = f.Stop(context.WithoutCancel(ctx))
		}
	}()
	if err := f.register(ctx, ca); err != nil {
		return nil, err
	}
	if err := f.waitCalled(ctx); err != nil {
		return nil, err
	}
	opts.Logger.Info("Node fence up", "node", opts.Node, "mode", opts.Mode, "url", f.url())
	return f, nil
}

// serve starts the HTTPS server on a loopback port and returns the CA
// that signed its certificate.
func (f *Fence) serve() ([]byte, error) {
	ca, err := pki.NewCA("paritylab-node-fence-ca")
	if err != nil {
		return nil, fmt.Errorf("node fence CA: %w", err)
	}
	kp, err := ca.ServingCert("paritylab-node-fence", ports.Loopback)
	if err != nil {
		return nil, fmt.Errorf("node fence serving certificate: %w", err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ports.Loopback, "0"))
	if err != nil {
		return nil, fmt.Errorf("node fence listen: %w", err)
	}
	f.listener = l
	mux := http.NewServeMux()
	mux.Handle("/validate", &admission.Webhook{Handler: admission.HandlerFunc(f.admit)})
	f.server = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key}}},
	}
	go func() {
		if err := f.server.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			f.opts.Logger.Error(err, "Node fence server stopped")
		}
	}()
	return ca.CertPEM(), nil
}

func (f *Fence) url() string {
	port := f.listener.Addr().(*net.TCPAddr).Port
	return "https://" + net.JoinHostPort(ports.Loopback, strconv.Itoa(port)) + "/validate"
}

// register creates the webhook configuration: updates of the one Node and
// its status, nothing else.
func (f *Fence) register(ctx context.Context, ca []byte) error {
	url := f.url()
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: f.configKey},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "node-fence.paritylab.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: ca},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{"nodes", "nodes/status"}, Scope: ptr.To(admissionregistrationv1.ClusterScope)},
			}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "fenced-node", Expression: "object.metadata.name == " + strconv.Quote(f.opts.Node),
			}},
			// A fence that is gone must stop nothing.
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun),
			TimeoutSeconds:          ptr.To(int32(webhookTimeout)),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	_, err := f.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create webhook configuration %s: %w", f.configKey, err)
	}
	return nil
}

// waitCalled makes dry-run writes to the Node until the fence sees one:
// the API server takes a new webhook configuration up a moment after it
// was created. A dry run leaves nothing on the Node.
func (f *Fence) waitCalled(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"probe-%d"}}}`, WriteAnnotation, i)
		_, err := f.client.CoreV1().Nodes().Patch(ctx, f.opts.Node, types.MergePatchType, []byte(patch), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return fmt.Errorf("probe the node fence with a dry-run write to node %s: %w", f.opts.Node, err)
		}
		f.mu.Lock()
		called := f.dryRuns > 0
		f.mu.Unlock()
		if called {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server did not call the node fence at %s within 30s", f.url())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Report is what the fence did so far.
func (f *Fence) Report() Report {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.report
	r.Errors = append([]string(nil), f.report.Errors...)
	return r
}

// Stop deletes the webhook configuration, lets every held write go and
// stops the server.
func (f *Fence) Stop(ctx context.Context) error {
	err := f.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, f.configKey, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	if err != nil {
		err = fmt.Errorf("delete webhook configuration %s: %w", f.configKey, err)
	}
	f.mu.Lock()
	if f.node != nil {
		f.node.open()
	}
	f.mu.Unlock()
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return errors.Join(err, f.server.Shutdown(shutdown))
}
