package hypershift

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"

	configv1 "github.com/openshift/api/config/v1"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/binaries"
	"github.com/paritylab/paritylab/lab/hypershift/ignitionserver"
	"github.com/paritylab/paritylab/lab/workload"
	"github.com/paritylab/paritylab/providers/agent"
)

// hostedRuntime is what runs for one hosted cluster: its control plane
// (HyperShift runs it as pods in the control-plane namespace; the lab as
// local processes recorded in its ledger), its ignition server, its agent
// provider (HyperShift's capi-provider Deployment) and its machine
// approver.
type hostedRuntime struct {
	cluster  *workload.Cluster
	ignition *ignitionserver.Server
	// apiPort is the hosted API server's port on the host's loopback,
	// which guests reach at their gateway.
	apiPort int

	// privateCAPI is the hosted cluster's own Cluster API when it uses
	// private types; the agent provider and the approver then reach the
	// hub through its proxy.
	privateCAPI *PrivateCAPI

	// managers run the agent provider and the machine approver.
	managers []runningManager
}

// capiConfig is how the hosted cluster's CAPI clients reach the hub.
func (h *hostedRuntime) capiConfig(hub *rest.Config) *rest.Config {
	if h.privateCAPI != nil {
		return h.privateCAPI.ProxyConfig()
	}
	return hub
}

type runningManager struct {
	cancel context.CancelFunc
	done   chan error
}

// run starts a manager until the runtime stops.
func (h *hostedRuntime) run(ctx context.Context, mgr ctrl.Manager) {
	mctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	h.managers = append(h.managers, runningManager{cancel: cancel, done: done})
}

// stop ends the CAPI components, the ignition server and the control
// plane, in that order.
func (h *hostedRuntime) stop() error {
	errs := []error{h.stopCAPIComponents()}
	if h.ignition != nil {
		errs = append(errs, h.ignition.Stop())
	}
	if h.cluster != nil {
		errs = append(errs, h.cluster.Stop())
	}
	return errors.Join(errs...)
}

// stopCAPIComponents ends the managers (agent provider, approver) and the
// cluster's own CAPI, if it has one; the control plane and the ignition
// server keep running, so the nodes notice nothing.
func (h *hostedRuntime) stopCAPIComponents() error {
	var errs []error
	for i := len(h.managers) - 1; i >= 0; i-- {
		h.managers[i].cancel()
		errs = append(errs, <-h.managers[i].done)
	}
	h.managers = nil
	if h.privateCAPI != nil {
		errs = append(errs, h.privateCAPI.Stop())
		h.privateCAPI = nil
	}
	return errors.Join(errs...)
}

// capiComponentsRunning says whether every CAPI component still runs.
func (h *hostedRuntime) capiComponentsRunning() bool {
	for _, m := range h.managers {
		select {
		case err := <-m.done:
			m.done <- err // leave it for stop
			return false
		default:
		}
	}
	return len(h.managers) > 0 && (h.privateCAPI == nil || h.privateCAPI.Running())
}

// startCAPIComponents starts the cluster's own CAPI when it uses private
// types, then its agent provider and approver, through that CAPI's proxy
// or straight to the hub.
func (o *Operator) startCAPIComponents(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, h *hostedRuntime, private bool) error {
	if private {
		p, err := StartPrivateCAPI(ctx, PrivateCAPIOptions{Hub: o.config, Namespace: ControlPlaneNamespace(hc),
			Logger: o.opts.Logger.WithValues("clusterAPI", ControlPlaneNamespace(hc))})
		if err != nil {
			return err
		}
		h.privateCAPI = p
	}
	if err := o.startAgentProvider(ctx, hc, h); err != nil {
		return err
	}
	return o.startApprover(ctx, hc, h)
}

// runtimeOf is a hosted cluster's running runtime, or nil.
func (o *Operator) runtimeOf(hc *hypershiftv1beta1.HostedCluster) *hostedRuntime {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hosted[types.NamespacedName{Namespace: hc.Namespace, Name: hc.Name}]
}

// stopRuntime ends a hosted cluster's processes, if they run.
func (o *Operator) stopRuntime(key types.NamespacedName) error {
	o.mu.Lock()
	h := o.hosted[key]
	delete(o.hosted, key)
	o.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.stop()
}

// ensureRuntime starts a hosted cluster's processes unless they run. A
// start that fails part way stops what it started.
func (o *Operator) ensureRuntime(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) (_ *hostedRuntime, retErr error) {
	key := types.NamespacedName{Namespace: hc.Namespace, Name: hc.Name}
	o.mu.Lock()
	defer o.mu.Unlock()
	if h := o.hosted[key]; h != nil {
		return h, nil
	}
	h := &hostedRuntime{}
	defer func() {
		if retErr != nil {
			retErr = errors.Join(retErr, h.stop())
		}
	}()
	if err := o.startControlPlane(ctx, hc, h); err != nil {
		return nil, err
	}
	if err := o.startIgnitionServer(ctx, hc, h); err != nil {
		return nil, err
	}
	if err := o.startCAPIComponents(ctx, hc, h, usesPrivateTypes(hc)); err != nil {
		return nil, err
	}
	o.hosted[key] = h
	o.opts.Logger.Info("Hosted cluster running", "hostedCluster", key.String(), "api", h.cluster.Server(),
		"ignitionEndpoint", h.ignition.Endpoint())
	return h, nil
}

// startControlPlane starts the hosted control plane, a lab workload
// cluster named after the control-plane namespace, at the HostedCluster's
// release, cluster ID and infraID, and lets the node-bootstrapper
// identity create CSRs in it (HyperShift's hosted cluster config
// operator binds it so, create-csrs-for-bootstrapping).
func (o *Operator) startControlPlane(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, h *hostedRuntime) error {
	name := ControlPlaneNamespace(hc)
	opts := workload.Options{
		Name: name, Dir: filepath.Join(o.opts.StateDir, "hosted", name),
		Release: o.release(hc.Spec.Release.Image), ClusterID: hc.Spec.ClusterID, InfrastructureName: hc.Spec.InfraID,
		Tracker: o.opts.Tracker, Logger: o.opts.Logger.WithValues("hostedCluster", name),
	}
	if o.opts.LogDir != "" {
		opts.LogDir = filepath.Join(o.opts.LogDir, "hosted", name)
	}
	c, err := workload.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("start the hosted control plane %s: %w", name, err)
	}
	h.cluster = c
	u, err := url.Parse(c.Server())
	if err != nil {
		return err
	}
	if h.apiPort, err = strconv.Atoi(u.Port()); err != nil {
		return fmt.Errorf("hosted API port of %s: %w", name, err)
	}
	return bindNodeBootstrapper(ctx, c)
}

// release is the release a HostedCluster's image stands for.
func (o *Operator) release(image string) configv1.Release {
	for _, r := range o.opts.Releases {
		if r.Image == image {
			return r
		}
	}
	return configv1.Release{Version: workload.DefaultVersion, Image: image}
}

// nodeBootstrapperBinding is the ClusterRoleBinding that lets the
// node-bootstrapper identity create CSRs (HyperShift's name).
const nodeBootstrapperBinding = "create-csrs-for-bootstrapping"

func bindNodeBootstrapper(ctx context.Context, c *workload.Cluster) error {
	cl, err := client.New(c.RESTConfig(), client.Options{})
	if err != nil {
		return err
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: nodeBootstrapperBinding},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: workload.NodeBootstrapperUser}},
	}
	if err := cl.Create(ctx, crb); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("bind the node bootstrapper in %s: %w", c.Name(), err)
	}
	return nil
}

// startIgnitionServer serves the hosted cluster's bootstrap node config
// to the NodePools' tokens.
func (o *Operator) startIgnitionServer(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, h *hostedRuntime) error {
	node, err := o.bootstrapNode(h)
	if err != nil {
		return err
	}
	s, err := ignitionserver.Start(ctx, ignitionserver.Options{
		Namespace: ControlPlaneNamespace(hc), Client: o.client, AdvertiseHost: o.opts.AdvertiseHost,
		Node:   func(context.Context) (agentapi.NodeConfig, error) { return node, nil },
		Logger: o.opts.Logger.WithValues("hostedCluster", hc.Name),
	})
	if err != nil {
		return err
	}
	h.ignition = s
	return nil
}

// bootstrapNode is what a new node of the hosted cluster starts from, as
// the machine config a NodePool's Ignition carries: the API server's port
// (a guest reaches the host at its gateway, the lab agent's default) and
// the node-bootstrapper credential, with which the node asks for its own
// identity by CSR.
func (o *Operator) bootstrapNode(h *hostedRuntime) (agentapi.NodeConfig, error) {
	raw, err := h.cluster.IssueNodeBootstrapperKubeconfig("")
	if err != nil {
		return agentapi.NodeConfig{}, err
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		return agentapi.NodeConfig{}, fmt.Errorf("read the node-bootstrapper kubeconfig: %w", err)
	}
	node := agentapi.NodeConfig{
		APIPort: h.apiPort, TLSServerName: "kubernetes",
		Bootstrap: true, KubeletVersion: binaries.KubernetesVersion, ReadyBeforeProviderID: true,
	}
	for _, c := range cfg.Clusters {
		node.CACert = string(c.CertificateAuthorityData)
	}
	for _, u := range cfg.AuthInfos {
		node.ClientCert, node.ClientKey = string(u.ClientCertificateData), string(u.ClientKeyData)
	}
	if node.CACert == "" || node.ClientCert == "" {
		return agentapi.NodeConfig{}, errors.New("the node-bootstrapper kubeconfig has no CA or no credential")
	}
	return node, nil
}

// startAgentProvider runs the agent infrastructure provider for the
// hosted cluster, as HyperShift's capi-provider Deployment does:
// restricted to the control-plane namespace, its Agents read from the
// platform's agentNamespace, without webhooks.
func (o *Operator) startAgentProvider(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, h *hostedRuntime) error {
	cpns := ControlPlaneNamespace(hc)
	mgr, err := ctrl.NewManager(h.capiConfig(o.config), ctrl.Options{
		Scheme:                 o.scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{cpns: {}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Every hosted cluster runs the same controllers in this process.
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)},
		Logger:     o.opts.Logger.WithValues("capiProvider", cpns),
	})
	if err != nil {
		return fmt.Errorf("agent provider of %s: %w", cpns, err)
	}
	opts := agent.Options{AgentNamespace: hc.Spec.Platform.Agent.AgentNamespace, SkipWebhooks: true}
	if err := agent.SetupWithManager(ctx, mgr, opts); err != nil {
		return fmt.Errorf("agent provider of %s: %w", cpns, err)
	}
	h.run(ctx, mgr)
	return nil
}

// startApprover runs cluster-machine-approver's client CSR rules on the
// hosted cluster, with the control-plane namespace's Machines, as
// HyperShift's control-plane operator deploys it.
func (o *Operator) startApprover(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, h *hostedRuntime) error {
	cpns := ControlPlaneNamespace(hc)
	cfg := h.cluster.RESTConfig()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: crconfig.Controller{SkipNameValidation: ptr.To(true)},
		Logger:     o.opts.Logger.WithValues("machineApprover", cpns),
	})
	if err != nil {
		return fmt.Errorf("machine approver of %s: %w", cpns, err)
	}
	certs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	machines := client.Reader(o.client)
	if h.privateCAPI != nil {
		if machines, err = client.New(h.privateCAPI.ProxyConfig(), client.Options{Scheme: o.scheme}); err != nil {
			return fmt.Errorf("machine approver of %s: %w", cpns, err)
		}
	}
	r := &approver{hosted: mgr.GetClient(), certs: certs, machines: machines, namespace: cpns,
		log: o.opts.Logger.WithValues("machineApprover", cpns)}
	if err := r.setupWithManager(mgr); err != nil {
		return fmt.Errorf("machine approver of %s: %w", cpns, err)
	}
	h.run(ctx, mgr)
	return nil
}
