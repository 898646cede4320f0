package hypershift

import (
	"context"
	"errors"
	"fmt"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
)

// PrivateCAPITypesAnnotation, "true" on a HostedCluster, says its Cluster
// API objects are HyperShift's private types (the enhancement's new
// operator reconciles it). The lab's operator then reaches them through
// its API proxy and runs the hosted cluster's own CAPI, agent provider
// and machine approver through the cluster's; without it, the platform's
// CAPI serves the cluster's cluster.x-k8s.io objects.
const PrivateCAPITypesAnnotation = "hypershift.openshift.io/private-capi-types"

func usesPrivateTypes(hc *hypershiftv1beta1.HostedCluster) bool {
	return hc.Annotations[PrivateCAPITypesAnnotation] == "true"
}

// capiAccess is how the operator reaches a hosted cluster's CAPI objects.
type capiAccess struct {
	// Client writes, and reads from the cache where one serves.
	client.Client
	// live reads what the cache may not have caught up with.
	live client.Reader
}

// capiFor is the hub's client for standard types. For private ones it is
// a client through the operator's own API proxy (the enhancement gives
// the operator a proxy sidecar too), uncached: the manager's cache
// watches the hub's cluster.x-k8s.io, which holds none of them.
func (o *Operator) capiFor(hc *hypershiftv1beta1.HostedCluster) (capiAccess, error) {
	if !usesPrivateTypes(hc) {
		return capiAccess{Client: o.client, live: o.apiReader}, nil
	}
	c, err := o.proxiedClient()
	if err != nil {
		return capiAccess{}, err
	}
	return capiAccess{Client: c, live: c}, nil
}

// capiForNodePool is capiFor of the NodePool's HostedCluster; once that
// is gone, the standard types'.
func (o *Operator) capiForNodePool(ctx context.Context, np *hypershiftv1beta1.NodePool) (capiAccess, error) {
	hc := &hypershiftv1beta1.HostedCluster{}
	err := o.client.Get(ctx, client.ObjectKey{Namespace: np.Namespace, Name: np.Spec.ClusterName}, hc)
	if client.IgnoreNotFound(err) != nil {
		return capiAccess{}, fmt.Errorf("HostedCluster %s of NodePool %s: %w", np.Spec.ClusterName, np.Name, err)
	}
	return o.capiFor(hc)
}

// proxiedClient starts the operator's API proxy on first use.
func (o *Operator) proxiedClient() (client.Client, error) {
	o.proxyMu.Lock()
	defer o.proxyMu.Unlock()
	if o.proxied != nil {
		return o.proxied, nil
	}
	p, err := apiproxy.Serve(o.config, o.opts.Logger.WithName("apiproxy"))
	if err != nil {
		return nil, err
	}
	c, err := client.New(p.RESTConfig(), client.Options{Scheme: o.scheme})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("client of the operator's API proxy: %w", err), p.Stop())
	}
	o.proxy, o.proxied = p, c
	return c, nil
}

// stopProxy ends the operator's API proxy, if it runs.
func (o *Operator) stopProxy() error {
	o.proxyMu.Lock()
	defer o.proxyMu.Unlock()
	if o.proxy == nil {
		return nil
	}
	err := o.proxy.Stop()
	o.proxy, o.proxied = nil, nil
	return err
}
