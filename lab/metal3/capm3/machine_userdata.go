package capm3

import (
	"context"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// reconcileUserData sets status.userData: the Metal3Machine's own
// spec.userData when given, else a copy of the Machine's bootstrap data
// Secret, <metal3machine>-user-data with key userData, owned by the
// Metal3Machine, which is where the bare-metal operator reads it.
func (r *machineReconciler) reconcileUserData(ctx context.Context, s *machineScope) error {
	m3m := s.m3m
	if m3m.Spec.UserData != nil {
		ref := *m3m.Spec.UserData
		if ref.Namespace == "" {
			ref.Namespace = m3m.Namespace
		}
		m3m.Status.UserData = &ref
		return nil
	}
	source := &corev1.Secret{}
	key := client.ObjectKey{Namespace: s.machine.Namespace, Name: *s.machine.Spec.Bootstrap.DataSecretName}
	if err := r.client.Get(ctx, key, source); err != nil {
		return fmt.Errorf("get the Machine's bootstrap data Secret %s: %w", key, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: m3m.Name + userDataSuffix, Namespace: m3m.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.client, secret, func() error {
		if secret.Labels == nil {
			secret.Labels = map[string]string{}
		}
		secret.Labels[clusterv1.ClusterNameLabel] = s.machine.Spec.ClusterName
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = map[string][]byte{"userData": source.Data["value"]}
		if f, ok := source.Data["format"]; ok {
			secret.Data["format"] = f
		}
		return controllerutil.SetControllerReference(m3m, secret, r.client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("write user data Secret %s: %w", secret.Name, err)
	}
	m3m.Status.UserData = &corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace}
	return nil
}

// deleteUserData removes the copy reconcileUserData made, if it did.
func (r *machineReconciler) deleteUserData(ctx context.Context, m3m *capm3v1beta1.Metal3Machine) error {
	if m3m.Spec.UserData != nil {
		return nil
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: m3m.Name + userDataSuffix, Namespace: m3m.Namespace}}
	if err := client.IgnoreNotFound(r.client.Delete(ctx, secret)); err != nil {
		return fmt.Errorf("delete user data Secret %s: %w", secret.Name, err)
	}
	return nil
}

// hostAddresses are what CAPM3 reports of a host: each NIC's IP as an
// internal IP, and its hostname as hostname and internal DNS name.
func hostAddresses(h *bmov1alpha1.BareMetalHost) clusterv1beta1.MachineAddresses {
	hw := h.Status.HardwareDetails
	if hw == nil {
		return nil
	}
	var out clusterv1beta1.MachineAddresses
	for _, nic := range hw.NIC {
		if nic.IP != "" {
			out = append(out, clusterv1beta1.MachineAddress{Type: clusterv1beta1.MachineInternalIP, Address: nic.IP})
		}
	}
	if name := hw.Hostname; name != "" {
		out = append(out,
			clusterv1beta1.MachineAddress{Type: clusterv1beta1.MachineHostName, Address: name},
			clusterv1beta1.MachineAddress{Type: clusterv1beta1.MachineInternalDNS, Address: name})
	}
	return out
}
