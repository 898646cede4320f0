// Command standin-machine-controller stands in for the upstream bare-metal
// machine controller (cluster-api-provider-baremetal's cmd/manager) in
// tests of how the lab runs it: it takes the upstream command's flags
// (an unknown flag fails, as there), reads the cluster from KUBECONFIG,
// waits for the metal3.io API, serves /healthz and /readyz on
// --health-addr, and marks every Machine of --namespace it sees with
// SeenAnnotation until SIGTERM. PARITYLAB_STANDIN_EXIT=<code> makes it
// exit at once with that code instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// SeenAnnotation is what the stand-in writes on Machines.
const SeenAnnotation = "test.paritylab.io/standin-machine-controller"

func main() {
	namespace := flag.String("namespace", "", "namespace of machine-api objects")
	health := flag.String("health-addr", ":9440", "health probe address")
	flag.String("metrics-addr", ":8081", "metrics address")
	flag.String("leader-elect-resource-namespace", "", "leader election namespace")
	flag.Bool("leader-elect", false, "leader election")
	flag.Duration("leader-elect-lease-duration", 120*time.Second, "lease duration")
	flag.Bool("webhook-enabled", true, "webhook server")
	flag.Int("webhook-port", 8440, "webhook port")
	flag.String("webhook-cert-dir", "/etc/machine-api-operator/tls", "webhook cert dir")
	flag.String("tls-cipher-suites", "", "TLS cipher suites")
	flag.String("tls-min-version", "", "TLS minimum version")
	flag.String("feature-gates", "", "feature gates")
	flag.Parse()
	if code := os.Getenv("PARITYLAB_STANDIN_EXIT"); code != "" {
		fmt.Fprintln(os.Stderr, "stand-in told to exit with", code)
		n, _ := strconv.Atoi(code)
		os.Exit(n)
	}
	if err := run(*namespace, *health); err != nil {
		fmt.Fprintln(os.Stderr, "stand-in:", err)
		os.Exit(1)
	}
}

func run(namespace, health string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return fmt.Errorf("kubeconfig from KUBECONFIG: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if err := discovery.ServerSupportsVersion(disc, schema.GroupVersion{Group: "metal3.io", Version: "v1alpha1"}); err != nil {
		return fmt.Errorf("metal3.io API: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", health)
	if err != nil {
		return err
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	mux := http.NewServeMux()
	mux.Handle("/healthz", ok)
	mux.Handle("/readyz", ok)
	go func() { _ = http.Serve(ln, mux) }()
	fmt.Fprintf(os.Stderr, "stand-in machine controller watching namespace %q, health on %s\n", namespace, health)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	machines := dyn.Resource(schema.GroupVersionResource{Group: "machine.openshift.io", Version: "v1beta1", Resource: "machines"}).Namespace(namespace)
	patch := []byte(`{"metadata":{"annotations":{"` + SeenAnnotation + `":"seen"}}}`)
	for {
		list, err := machines.List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, m := range list.Items {
				markSeen(ctx, machines, m, patch)
			}
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "stand-in machine controller stopping")
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func markSeen(ctx context.Context, machines dynamic.ResourceInterface, m unstructured.Unstructured, patch []byte) {
	if _, done := m.GetAnnotations()[SeenAnnotation]; done {
		return
	}
	_, _ = machines.Patch(ctx, m.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
}
