package manager

import (
	"context"
	"flag"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Flags are the options every provider manager takes.
type Flags struct {
	MetricsAddr, HealthAddr string
	LeaderElect             bool
	LeaderElectNamespace    string
	WebhookPort             int
	WebhookCertDir          string
	Namespace               string
	WatchFilter             string
	Concurrency             int
}

// Provider describes one provider binary.
type Provider struct {
	// Name is the provider's name, for logs and the leader election ID.
	Name string
	// AddToScheme registers the provider's types.
	AddToScheme func(*runtime.Scheme) error
	// Setup registers controllers and webhooks.
	Setup func(ctx context.Context, mgr ctrl.Manager, f Flags) error
}

// Main parses the flags, runs the manager until a signal, and exits.
func Main(p Provider) {
	var f Flags
	flag.StringVar(&f.MetricsAddr, "metrics-bind-addr", "0", "address the metrics endpoint binds to; 0 disables it")
	flag.StringVar(&f.HealthAddr, "health-addr", ":9440", "address of the /healthz and /readyz probes")
	flag.BoolVar(&f.LeaderElect, "leader-elect", false, "run one active manager among replicas")
	flag.StringVar(&f.LeaderElectNamespace, "leader-elect-namespace", "", "namespace of the leader election lease (default: the pod's)")
	flag.IntVar(&f.WebhookPort, "webhook-port", 9443, "port the webhook server listens on")
	flag.StringVar(&f.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory holding tls.crt and tls.key of the webhook server")
	flag.StringVar(&f.Namespace, "namespace", "", "namespace to watch; empty watches all")
	flag.StringVar(&f.WatchFilter, "watch-filter", "", "reconcile only objects labelled cluster.x-k8s.io/watch-filter with this value")
	flag.IntVar(&f.Concurrency, "concurrency", 10, "concurrent reconciles per controller")
	zopts := zap.Options{}
	zopts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zopts)))
	if err := run(ctrl.SetupSignalHandler(), p, f); err != nil {
		ctrl.Log.Error(err, "Manager failed", "provider", p.Name)
		os.Exit(1)
	}
}

func run(ctx context.Context, p Provider, f Flags) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := p.AddToScheme(scheme); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	opts := ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: f.MetricsAddr},
		HealthProbeBindAddress:  f.HealthAddr,
		LeaderElection:          f.LeaderElect,
		LeaderElectionID:        p.Name + "-leader-election",
		LeaderElectionNamespace: f.LeaderElectNamespace,
		WebhookServer:           webhook.NewServer(webhook.Options{Port: f.WebhookPort, CertDir: f.WebhookCertDir}),
		Client: client.Options{Cache: &client.CacheOptions{
			// As Cluster API's managers do: Secrets and ConfigMaps are read
			// live rather than cached cluster-wide.
			DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}},
		}},
	}
	if f.Namespace != "" {
		opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{f.Namespace: {}}}
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	if err := p.Setup(ctx, mgr, f); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return fmt.Errorf("add ready check: %w", err)
	}
	ctrl.Log.Info("Starting manager", "provider", p.Name)
	return mgr.Start(ctx)
}
