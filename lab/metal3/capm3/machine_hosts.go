package capm3

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// associate returns the Metal3Machine's host: the annotated one, one whose
// consumerRef already names it (an earlier reconcile claimed it but did
// not get to annotate), or a newly claimed one. Nil when none is free.
func (r *machineReconciler) associate(ctx context.Context, s *machineScope) (*bmov1alpha1.BareMetalHost, error) {
	key, ok, err := hostKey(s.m3m)
	if err != nil {
		return nil, err
	}
	if ok {
		host := &bmov1alpha1.BareMetalHost{}
		if err := r.client.Get(ctx, key, host); err != nil {
			return nil, fmt.Errorf("get the Metal3Machine's BareMetalHost %s: %w", key, err)
		}
		return host, nil
	}
	// Read live: a cached list may not show a claim this Metal3Machine
	// made a moment ago, and it would claim a second host.
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := r.reader.List(ctx, hosts, client.InNamespace(s.m3m.Namespace)); err != nil {
		return nil, fmt.Errorf("list BareMetalHosts: %w", err)
	}
	host := consumedBy(hosts.Items, s.m3m)
	if host == nil {
		if host, err = chooseHost(hosts.Items, s.m3m, s.machine); err != nil || host == nil {
			return nil, err
		}
		if err := r.claim(ctx, s, host); err != nil {
			return nil, err
		}
		s.log.Info("Claimed BareMetalHost", "BareMetalHost", host.Name)
	}
	if s.m3m.Annotations == nil {
		s.m3m.Annotations = map[string]string{}
	}
	s.m3m.Annotations[hostAnnotation] = host.Namespace + "/" + host.Name
	return host, nil
}

// consumedBy finds the host whose consumerRef names m3m.
func consumedBy(hosts []bmov1alpha1.BareMetalHost, m3m *capm3v1beta1.Metal3Machine) *bmov1alpha1.BareMetalHost {
	for i := range hosts {
		if isConsumer(&hosts[i], m3m) {
			return &hosts[i]
		}
	}
	return nil
}

func isConsumer(h *bmov1alpha1.BareMetalHost, m3m *capm3v1beta1.Metal3Machine) bool {
	ref := h.Spec.ConsumerRef
	return ref != nil && ref.Kind == "Metal3Machine" && ref.Name == m3m.Name &&
		(ref.Namespace == "" || ref.Namespace == m3m.Namespace)
}

// chooseHost picks, at random, one of the hosts CAPM3 considers free:
// no consumer, not being deleted, available or ready, no error, not
// externally provisioned, not paused or marked unhealthy, matching the
// hostSelector and, when the Machine has one, its failure domain.
func chooseHost(hosts []bmov1alpha1.BareMetalHost, m3m *capm3v1beta1.Metal3Machine, m *clusterv1.Machine) (*bmov1alpha1.BareMetalHost, error) {
	sel, err := hostSelector(m3m.Spec.HostSelector)
	if err != nil {
		return nil, err
	}
	var free []*bmov1alpha1.BareMetalHost
	for i := range hosts {
		h := &hosts[i]
		if !eligible(h) || !sel.Matches(labels.Set(h.Labels)) {
			continue
		}
		if fd := m.Spec.FailureDomain; fd != "" && h.Labels[failureDomainLabel] != fd {
			continue
		}
		free = append(free, h)
	}
	if len(free) == 0 {
		return nil, nil
	}
	return free[rand.IntN(len(free))], nil
}

func eligible(h *bmov1alpha1.BareMetalHost) bool {
	_, paused := h.Annotations[pausedAnnotation]
	_, unhealthy := h.Annotations[capm3v1beta1.UnhealthyAnnotation]
	state := h.Status.Provisioning.State
	return h.Spec.ConsumerRef == nil && h.DeletionTimestamp.IsZero() &&
		(state == bmov1alpha1.StateAvailable || state == bmov1alpha1.StateReady) &&
		h.Status.ErrorMessage == "" && !h.Spec.ExternallyProvisioned && !paused && !unhealthy
}

// hostSelector turns CAPM3's HostSelector into a label selector.
func hostSelector(hs capm3v1beta1.HostSelector) (labels.Selector, error) {
	sel := labels.NewSelector()
	for k, v := range hs.MatchLabels {
		req, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return nil, fmt.Errorf("hostSelector.matchLabels %s: %w", k, err)
		}
		sel = sel.Add(*req)
	}
	for _, e := range hs.MatchExpressions {
		req, err := labels.NewRequirement(e.Key, e.Operator, e.Values)
		if err != nil {
			return nil, fmt.Errorf("hostSelector.matchExpressions %s: %w", e.Key, err)
		}
		sel = sel.Add(*req)
	}
	return sel, nil
}

// claim sets the host's consumerRef, with optimistic locking so two
// Metal3Machines cannot claim one host.
func (r *machineReconciler) claim(ctx context.Context, s *machineScope, host *bmov1alpha1.BareMetalHost) error {
	before := host.DeepCopy()
	host.Spec.ConsumerRef = &corev1.ObjectReference{
		APIVersion: capm3v1beta1.GroupVersion.String(), Kind: "Metal3Machine",
		Namespace: s.m3m.Namespace, Name: s.m3m.Name, UID: s.m3m.UID,
	}
	if host.Labels == nil {
		host.Labels = map[string]string{}
	}
	host.Labels[clusterv1.ClusterNameLabel] = s.machine.Spec.ClusterName
	if err := r.client.Patch(ctx, host, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("claim BareMetalHost %s: %w", host.Name, err)
	}
	return nil
}

// provisionHost gives a claimed host the Metal3Machine's image, user
// data and metadata, and powers it on; once only, so a later template
// change does not reprovision a running host.
func (r *machineReconciler) provisionHost(ctx context.Context, s *machineScope, host *bmov1alpha1.BareMetalHost) error {
	if !isConsumer(host, s.m3m) {
		return fmt.Errorf("BareMetalHost %s is consumed by %v, not by this Metal3Machine", host.Name, host.Spec.ConsumerRef)
	}
	if host.Spec.Image != nil || host.Spec.CustomDeploy != nil {
		return nil
	}
	before := host.DeepCopy()
	spec := s.m3m.Spec
	if spec.Image.URL != "" {
		host.Spec.Image = &bmov1alpha1.Image{URL: spec.Image.URL, Checksum: spec.Image.Checksum, DiskFormat: spec.Image.DiskFormat}
		if spec.Image.ChecksumType != nil {
			host.Spec.Image.ChecksumType = bmov1alpha1.ChecksumType(*spec.Image.ChecksumType)
		}
	}
	if spec.CustomDeploy != nil {
		host.Spec.CustomDeploy = &bmov1alpha1.CustomDeploy{Method: spec.CustomDeploy.Method}
	}
	host.Spec.UserData = s.m3m.Status.UserData
	host.Spec.MetaData, host.Spec.NetworkData = spec.MetaData, spec.NetworkData
	if spec.AutomatedCleaningMode != nil {
		host.Spec.AutomatedCleaningMode = bmov1alpha1.AutomatedCleaningMode(*spec.AutomatedCleaningMode)
	}
	host.Spec.Online = true
	if err := r.client.Patch(ctx, host, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("provision BareMetalHost %s: %w", host.Name, err)
	}
	s.log.Info("Provisioning BareMetalHost", "BareMetalHost", host.Name, "image", spec.Image.URL)
	return nil
}

// reportHost makes the Metal3Machine ready once its host is provisioned:
// the providerID and the host's addresses.
func reportHost(s *machineScope, host *bmov1alpha1.BareMetalHost) {
	m3m := s.m3m
	if msg := host.Status.ErrorMessage; msg != "" {
		setCondition(&m3m.Status.Conditions, falseCondition(clusterv1beta1.ReadyCondition, "HostError", host.Name+": "+msg))
	}
	state := host.Status.Provisioning.State
	if state != bmov1alpha1.StateProvisioned && state != bmov1alpha1.StateExternallyProvisioned {
		m3m.Status.Ready = false
		setCondition(&m3m.Status.Conditions, falseCondition(clusterv1beta1.ReadyCondition, "WaitingForHost",
			fmt.Sprintf("BareMetalHost %s is %s", host.Name, orNone(state))))
		return
	}
	id := providerID(host.Namespace, host.Name, m3m.Name)
	m3m.Spec.ProviderID = &id
	m3m.Status.Addresses = hostAddresses(host)
	m3m.Status.Ready = true
	now := metaNow()
	m3m.Status.LastUpdated = &now
	setCondition(&m3m.Status.Conditions, trueCondition(clusterv1beta1.ReadyCondition))
}

func orNone(s bmov1alpha1.ProvisioningState) string {
	if s == "" {
		return "not registered yet"
	}
	return string(s)
}

// cutKey splits <namespace>/<name>.
func cutKey(v string) (string, string, bool) {
	ns, name, ok := strings.Cut(v, "/")
	return ns, name, ok && ns != "" && name != ""
}
