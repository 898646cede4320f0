package capi

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	"sigs.k8s.io/cluster-api/controllers"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/controllers/remote"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/webhooks"
)

const userAgent = "paritylab-capi-core"

func setupClusterCache(ctx context.Context, mgr ctrl.Manager, opts controller.Options) (clustercache.ClusterCache, error) {
	secretClient, err := client.New(mgr.GetConfig(), client.Options{
		HTTPClient: mgr.GetHTTPClient(),
		Scheme:     mgr.GetScheme(),
		Cache:      &client.CacheOptions{Reader: mgr.GetCache()},
	})
	if err != nil {
		return nil, fmt.Errorf("create secret caching client: %w", err)
	}
	cache, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretClient,
		Cache: clustercache.CacheOptions{
			Indexes: []clustercache.CacheOptionsIndex{clustercache.NodeProviderIDIndex},
		},
		Client: clustercache.ClientOptions{
			UserAgent: remote.DefaultClusterAPIUserAgent(userAgent),
			Cache: clustercache.ClientCacheOptions{
				DisableFor: []client.Object{
					&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Pod{},
					&appsv1.DaemonSet{}, &storagev1.VolumeAttachment{}, &corev1.PersistentVolume{},
				},
			},
		},
	}, opts)
	if err != nil {
		return nil, fmt.Errorf("set up CAPI cluster cache: %w", err)
	}
	return cache, nil
}

func (c *Core) setupReconcilers(ctx context.Context, mgr ctrl.Manager, cache clustercache.ClusterCache) error {
	cl, reader, opts := mgr.GetClient(), mgr.GetAPIReader(), c.controllerOptions()
	type reconciler interface {
		SetupWithManager(context.Context, ctrl.Manager, controller.Options) error
	}
	all := map[string]reconciler{
		"Cluster": &controllers.ClusterReconciler{Client: cl, APIReader: reader, ClusterCache: cache,
			RemoteConnectionGracePeriod: c.opts.RemoteConnectionGracePeriod},
		"Machine": &controllers.MachineReconciler{Client: cl, APIReader: reader, ClusterCache: cache,
			RemoteConditionsGracePeriod: c.opts.RemoteConditionsGracePeriod},
		"MachineSet": &controllers.MachineSetReconciler{Client: cl, APIReader: reader, ClusterCache: cache,
			PreflightChecks: defaultPreflightChecks()},
		"MachineDeployment":  &controllers.MachineDeploymentReconciler{Client: cl, APIReader: reader},
		"MachineHealthCheck": &controllers.MachineHealthCheckReconciler{Client: cl, ClusterCache: cache},
	}
	if feature.Gates.Enabled(feature.MachinePool) {
		all["MachinePool"] = &controllers.MachinePoolReconciler{Client: cl, APIReader: reader, ClusterCache: cache}
	}
	for name, r := range all {
		if err := r.SetupWithManager(ctx, mgr, opts); err != nil {
			return fmt.Errorf("set up CAPI %s controller: %w", name, err)
		}
	}
	return nil
}

// setupWebhooks registers every webhook CAPI's manager serves, as upstream
// does regardless of feature gates (the webhooks enforce the gates).
func setupWebhooks(ctx context.Context, mgr ctrl.Manager, cache clustercache.ClusterCache) error {
	clusterv1beta1.SetAPIVersionGetter(apiVersionGetter(ctx, mgr.GetAPIReader()))
	type webhook interface{ SetupWebhookWithManager(ctrl.Manager) error }
	all := map[string]webhook{
		"ClusterClass":              &webhooks.ClusterClass{Client: mgr.GetClient()},
		"Cluster":                   &webhooks.Cluster{Client: mgr.GetClient(), ClusterCacheReader: cache},
		"Machine":                   &webhooks.Machine{},
		"MachineSet":                &webhooks.MachineSet{},
		"MachineDeployment":         &webhooks.MachineDeployment{},
		"MachineDrainRule":          &webhooks.MachineDrainRule{},
		"MachinePool":               &webhooks.MachinePool{},
		"ClusterResourceSet":        &webhooks.ClusterResourceSet{},
		"ClusterResourceSetBinding": &webhooks.ClusterResourceSetBinding{},
		"MachineHealthCheck":        &webhooks.MachineHealthCheck{},
		"ExtensionConfig":           &webhooks.ExtensionConfig{},
		"IPAddress":                 &webhooks.IPAddress{Client: mgr.GetAPIReader()},
		"IPAddressClaim":            &webhooks.IPAddressClaim{},
	}
	for name, w := range all {
		if err := w.SetupWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("set up CAPI %s webhook: %w", name, err)
		}
	}
	return nil
}
