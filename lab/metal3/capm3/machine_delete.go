package capm3

import (
	"context"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// reconcileDelete deprovisions the Metal3Machine's host, waits for the
// bare-metal operator to finish, releases the host and drops the
// finalizer.
func (r *machineReconciler) reconcileDelete(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	m3m := s.m3m
	m3m.Status.Ready = false
	host, err := r.claimedHost(ctx, m3m)
	if err != nil {
		return ctrl.Result{}, err
	}
	if host != nil {
		done, err := r.releaseHost(ctx, s, host)
		if err != nil || !done {
			setCondition(&m3m.Status.Conditions, falseCondition(capm3v1beta1.AssociateBMHCondition,
				capm3v1beta1.DeletingReason, "deprovisioning BareMetalHost "+host.Name))
			return ctrl.Result{RequeueAfter: r.requeueAfter}, err
		}
	}
	if err := r.deleteUserData(ctx, m3m); err != nil {
		return ctrl.Result{}, err
	}
	delete(m3m.Annotations, hostAnnotation)
	controllerutil.RemoveFinalizer(m3m, capm3v1beta1.MachineFinalizer)
	s.log.Info("Released the host and removed the finalizer")
	return ctrl.Result{}, nil
}

// claimedHost returns the host this Metal3Machine consumes, if any.
func (r *machineReconciler) claimedHost(ctx context.Context, m3m *capm3v1beta1.Metal3Machine) (*bmov1alpha1.BareMetalHost, error) {
	key, ok, err := hostKey(m3m)
	if err != nil {
		return nil, err
	}
	if ok {
		host := &bmov1alpha1.BareMetalHost{}
		if err := r.client.Get(ctx, key, host); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		if isConsumer(host, m3m) {
			return host, nil
		}
		return nil, nil
	}
	// Claimed but not yet annotated: find it by its consumerRef.
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := r.reader.List(ctx, hosts, client.InNamespace(m3m.Namespace)); err != nil {
		return nil, fmt.Errorf("list BareMetalHosts: %w", err)
	}
	return consumedBy(hosts.Items, m3m), nil
}

// releaseHost clears what the host was provisioned with (the bare-metal
// operator deprovisions it and powers it off) and, once it is no longer
// provisioned, drops the consumerRef. It reports whether the host is free.
func (r *machineReconciler) releaseHost(ctx context.Context, s *machineScope, host *bmov1alpha1.BareMetalHost) (bool, error) {
	before := host.DeepCopy()
	if host.Spec.Image != nil || host.Spec.CustomDeploy != nil || host.Spec.UserData != nil || host.Spec.Online {
		host.Spec.Image, host.Spec.CustomDeploy, host.Spec.UserData = nil, nil, nil
		host.Spec.MetaData, host.Spec.NetworkData = nil, nil
		host.Spec.Online = false
		if err := r.client.Patch(ctx, host, client.MergeFrom(before)); err != nil {
			return false, fmt.Errorf("deprovision BareMetalHost %s: %w", host.Name, err)
		}
		s.log.Info("Deprovisioning BareMetalHost", "BareMetalHost", host.Name)
		return false, nil
	}
	switch host.Status.Provisioning.State {
	case bmov1alpha1.StateProvisioning, bmov1alpha1.StateProvisioned, bmov1alpha1.StateDeprovisioning:
		return false, nil
	}
	host.Spec.ConsumerRef = nil
	delete(host.Labels, clusterv1.ClusterNameLabel)
	if err := r.client.Patch(ctx, host, client.MergeFrom(before)); err != nil {
		return false, fmt.Errorf("release BareMetalHost %s: %w", host.Name, err)
	}
	return true, nil
}
