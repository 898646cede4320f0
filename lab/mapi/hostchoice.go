package mapi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// consumerRef kind and API version a Machine's host points back with.
const (
	machineKind       = "Machine"
	machineAPIVersion = "machine.openshift.io/v1beta1"
)

// selector turns a providerSpec's hostSelector into a label selector.
func (h HostSelector) selector() (labels.Selector, error) {
	sel := labels.NewSelector()
	for k, v := range h.MatchLabels {
		r, err := labels.NewRequirement(k, selection.Equals, []string{v})
		if err != nil {
			return nil, fmt.Errorf("hostSelector.matchLabels %s: %w", k, err)
		}
		sel = sel.Add(*r)
	}
	for _, e := range h.MatchExpressions {
		r, err := labels.NewRequirement(e.Key, selection.Operator(strings.ToLower(e.Operator)), e.Values)
		if err != nil {
			return nil, fmt.Errorf("hostSelector.matchExpressions %s: %w", e.Key, err)
		}
		sel = sel.Add(*r)
	}
	return sel, nil
}

// hostAvailable applies the upstream rules: nobody consumes the host, it
// is not being deleted, it is ready or available, it reports no error and
// was not provisioned outside the operator.
func hostAvailable(h *bmov1alpha1.BareMetalHost) bool {
	switch {
	case h.Spec.ConsumerRef != nil, !h.DeletionTimestamp.IsZero(), h.Status.ErrorMessage != "", h.Spec.ExternallyProvisioned:
		return false
	}
	s := h.Status.Provisioning.State
	return s == bmov1alpha1.StateReady || s == bmov1alpha1.StateAvailable
}

// consumedBy says whether the host's consumerRef names the Machine.
func consumedBy(h *bmov1alpha1.BareMetalHost, m *machinev1beta1.Machine) bool {
	ref := h.Spec.ConsumerRef
	return ref != nil && ref.Kind == machineKind && ref.APIVersion == machineAPIVersion &&
		ref.Name == m.Name && ref.Namespace == m.Namespace
}

// chooseHost returns a host of the Machine's namespace that the Machine
// already consumes (an earlier Create got that far) or else a random
// available one matching the selector; nil when there is none.
func chooseHost(ctx context.Context, c client.Reader, m *machinev1beta1.Machine, sel HostSelector) (*bmov1alpha1.BareMetalHost, error) {
	s, err := sel.selector()
	if err != nil {
		return nil, err
	}
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := c.List(ctx, hosts, client.InNamespace(m.Namespace)); err != nil {
		return nil, fmt.Errorf("list BareMetalHosts in %s: %w", m.Namespace, err)
	}
	var candidates []*bmov1alpha1.BareMetalHost
	for i := range hosts.Items {
		h := &hosts.Items[i]
		if consumedBy(h, m) {
			return h, nil
		}
		if hostAvailable(h) && s.Matches(labels.Set(h.Labels)) {
			candidates = append(candidates, h)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	return candidates[rand.IntN(len(candidates))], nil //nolint:gosec // a pick, not a secret
}
