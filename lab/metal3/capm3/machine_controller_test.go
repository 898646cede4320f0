package capm3

import (
	"context"
	"errors"
	"fmt"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/ptr"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

func withLabels(l map[string]string) hostOpt {
	return func(h *bmov1alpha1.BareMetalHost) { h.Labels = l }
}

func withState(s bmov1alpha1.ProvisioningState) hostOpt {
	return func(h *bmov1alpha1.BareMetalHost) { h.Status.Provisioning.State = s }
}

func withAnnotation(k string) hostOpt {
	return func(h *bmov1alpha1.BareMetalHost) { h.Annotations = map[string]string{k: ""} }
}

// TestHostSelection: of hosts that each break one rule, the Metal3Machine
// gets the only eligible one, and provisions it with its image and a copy
// of the Machine's bootstrap data; a second Metal3Machine finds none.
func TestHostSelection(t *testing.T) {
	e := newEnv(t)
	worker := map[string]string{"role": "worker"}
	e.host("consumed", withLabels(worker), func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Name: "other"}
	})
	e.host("erroring", withLabels(worker), func(h *bmov1alpha1.BareMetalHost) {
		h.Status.ErrorMessage, h.Status.ErrorType = "BMC unreachable", bmov1alpha1.RegistrationError
	})
	e.host("external", withLabels(worker), func(h *bmov1alpha1.BareMetalHost) { h.Spec.ExternallyProvisioned = true })
	e.host("paused", withLabels(worker), withAnnotation(pausedAnnotation))
	e.host("unhealthy", withLabels(worker), withAnnotation(capm3v1beta1.UnhealthyAnnotation))
	e.host("inspecting", withLabels(worker), withState(bmov1alpha1.StateInspecting))
	e.host("control-plane", withLabels(map[string]string{"role": "master"}))
	e.host("eligible", withLabels(map[string]string{"role": "worker", "rack": "r1"}))

	sel := capm3v1beta1.HostSelector{MatchLabels: worker, MatchExpressions: []capm3v1beta1.HostSelectorRequirement{
		{Key: "rack", Operator: selection.In, Values: []string{"r1", "r2"}},
	}}
	_, m3m := e.machine("worker-0", capm3v1beta1.Metal3MachineSpec{Image: diskImage(), HostSelector: sel})
	h := e.associatedHost(m3m)
	if h.Name != "eligible" {
		t.Fatalf("Metal3Machine got host %s, want the only eligible one", h.Name)
	}
	ref := h.Spec.ConsumerRef
	if ref == nil || ref.Kind != "Metal3Machine" || ref.Name != m3m.Name || ref.APIVersion != capm3v1beta1.GroupVersion.String() {
		t.Errorf("consumerRef = %+v, want the Metal3Machine", ref)
	}
	if got := m3m.Annotations[hostAnnotation]; got != e.ns+"/eligible" {
		t.Errorf("annotation %s = %q", hostAnnotation, got)
	}
	if h.Labels[clusterv1.ClusterNameLabel] != "lab" {
		t.Errorf("host labels %v lack the cluster name", h.Labels)
	}
	eventually(t, "the host is given image, user data and power", func() error {
		if err := get(h); err != nil {
			return err
		}
		img := h.Spec.Image
		switch {
		case img == nil || img.URL != diskImage().URL || img.Checksum != "0123abcd" || img.ChecksumType != bmov1alpha1.SHA256 ||
			img.DiskFormat == nil || *img.DiskFormat != "raw":
			return fmt.Errorf("image = %+v", img)
		case h.Spec.UserData == nil || h.Spec.UserData.Name != "worker-0-user-data":
			return fmt.Errorf("userData = %+v", h.Spec.UserData)
		case !h.Spec.Online:
			return errors.New("not online")
		}
		return nil
	})
	userData := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "worker-0-user-data", Namespace: e.ns}}
	if err := get(userData); err != nil {
		t.Fatal(err)
	}
	if got := string(userData.Data["userData"]); got != `{"ignition":{"version":"3.1.0"}}worker-0` {
		t.Errorf("user data = %q, want the bootstrap data", got)
	}
	if owner := metav1.GetControllerOf(userData); owner == nil || owner.Kind != "Metal3Machine" {
		t.Errorf("user data Secret owner = %+v, want the Metal3Machine", owner)
	}
	if err := get(m3m); err != nil || m3m.Status.Ready || m3m.Spec.ProviderID != nil {
		t.Errorf("Metal3Machine ready=%v providerID=%v before its host is provisioned (err %v)", m3m.Status.Ready, m3m.Spec.ProviderID, err)
	}

	_, second := e.machine("worker-1", capm3v1beta1.Metal3MachineSpec{Image: diskImage(), HostSelector: sel})
	eventually(t, "a second Metal3Machine reports that no host is free", func() error {
		if err := get(second); err != nil {
			return err
		}
		c := condition(second.Status.Conditions, capm3v1beta1.AssociateBMHCondition)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != capm3v1beta1.AssociateBMHFailedReason {
			return fmt.Errorf("AssociateBMH = %+v", c)
		}
		return nil
	})
	if _, ok := second.Annotations[hostAnnotation]; ok {
		t.Errorf("second Metal3Machine got a host: %v", second.Annotations)
	}
}

// TestWaitsForBootstrapData: no host is claimed before the Machine has its
// bootstrap data Secret; once it has, one is.
func TestWaitsForBootstrapData(t *testing.T) {
	e := newEnv(t)
	h := e.host("only")
	m, m3m := e.machine("early", capm3v1beta1.Metal3MachineSpec{Image: diskImage()}, func(m *clusterv1.Machine) {
		m.Spec.Bootstrap = clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "OpenshiftAssistedConfig", Name: "early"}}
	})
	eventually(t, "the Metal3Machine waits for bootstrap data", func() error {
		if err := get(m3m); err != nil {
			return err
		}
		c := condition(m3m.Status.Conditions, capm3v1beta1.AssociateBMHCondition)
		if c == nil || c.Reason != capm3v1beta1.WaitingForBootstrapReadyReason {
			return fmt.Errorf("AssociateBMH = %+v", c)
		}
		return nil
	})
	if err := get(h); err != nil || h.Spec.ConsumerRef != nil {
		t.Fatalf("host claimed before the bootstrap data exists: %+v (err %v)", h.Spec.ConsumerRef, err)
	}
	if err := retryUpdate(m, func() { m.Spec.Bootstrap.DataSecretName = ptr.To("early-bootstrap") }, false); err != nil {
		t.Fatal(err)
	}
	if got := e.associatedHost(m3m); got.Name != "only" {
		t.Errorf("claimed %s", got.Name)
	}
}

// TestProviderIDAndAddresses: once the operator reports the host
// provisioned, the Metal3Machine has CAPM3's providerID, the host's
// addresses and status.ready, which is what core reads on the v1beta1
// contract.
func TestProviderIDAndAddresses(t *testing.T) {
	e := newEnv(t)
	e.host("node-a")
	_, m3m := e.machine("worker", capm3v1beta1.Metal3MachineSpec{Image: diskImage()})
	h := e.associatedHost(m3m)
	e.setHostStatus(h, func(s *bmov1alpha1.BareMetalHostStatus) {
		s.Provisioning.State = bmov1alpha1.StateProvisioned
		s.PoweredOn = true
		s.HardwareDetails = &bmov1alpha1.HardwareDetails{Hostname: "node-a.lab",
			NIC: []bmov1alpha1.NIC{{Name: "eth0", MAC: "52:54:00:00:00:01", IP: "10.0.2.15"}, {Name: "eth1"}}}
	})
	want := "metal3://" + e.ns + "/node-a/worker"
	eventually(t, "the Metal3Machine is ready with its providerID", func() error {
		if err := get(m3m); err != nil {
			return err
		}
		if !m3m.Status.Ready || m3m.Spec.ProviderID == nil || *m3m.Spec.ProviderID != want {
			return fmt.Errorf("ready=%v providerID=%v", m3m.Status.Ready, m3m.Spec.ProviderID)
		}
		return nil
	})
	wantAddrs := clusterv1beta1.MachineAddresses{
		{Type: clusterv1beta1.MachineInternalIP, Address: "10.0.2.15"},
		{Type: clusterv1beta1.MachineHostName, Address: "node-a.lab"},
		{Type: clusterv1beta1.MachineInternalDNS, Address: "node-a.lab"},
	}
	if fmt.Sprint(m3m.Status.Addresses) != fmt.Sprint(wantAddrs) {
		t.Errorf("addresses = %v, want %v", m3m.Status.Addresses, wantAddrs)
	}
}

// TestDeleteDeprovisions: deleting the Metal3Machine clears the host's
// image and user data and powers it off, keeps the claim until the
// operator has deprovisioned it, then releases it.
func TestDeleteDeprovisions(t *testing.T) {
	e := newEnv(t)
	e.host("node-b")
	_, m3m := e.machine("gone", capm3v1beta1.Metal3MachineSpec{Image: diskImage()})
	h := e.associatedHost(m3m)
	e.setHostStatus(h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateProvisioned })
	eventually(t, "ready", func() error {
		if err := get(m3m); err != nil || !m3m.Status.Ready {
			return fmt.Errorf("not ready (%v)", err)
		}
		return nil
	})
	if err := suite.client.Delete(context.Background(), m3m); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the host is deprovisioned", func() error {
		if err := get(h); err != nil {
			return err
		}
		if h.Spec.Image != nil || h.Spec.UserData != nil || h.Spec.Online {
			return fmt.Errorf("image=%v userData=%v online=%v", h.Spec.Image, h.Spec.UserData, h.Spec.Online)
		}
		return nil
	})
	e.setHostStatus(h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateDeprovisioning })
	if err := get(h); err != nil || h.Spec.ConsumerRef == nil {
		t.Fatalf("host released while still deprovisioning (err %v)", err)
	}
	if err := get(m3m); err != nil {
		t.Fatalf("Metal3Machine gone before its host was deprovisioned: %v", err)
	}
	e.setHostStatus(h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateAvailable })
	eventually(t, "the Metal3Machine is gone and the host released", func() error {
		if err := get(m3m); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Metal3Machine still there (%v)", err)
		}
		if err := get(h); err != nil {
			return err
		}
		if h.Spec.ConsumerRef != nil || h.Labels[clusterv1.ClusterNameLabel] != "" {
			return fmt.Errorf("consumerRef=%v labels=%v", h.Spec.ConsumerRef, h.Labels)
		}
		return nil
	})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gone-user-data", Namespace: e.ns}}
	if err := get(secret); !apierrors.IsNotFound(err) {
		t.Errorf("user data Secret left behind: %v", err)
	}
}

// TestChooseHostFailureDomainAndRandom: the Machine's failure domain
// filters hosts by label, and the pick among the rest is random.
func TestChooseHostFailureDomainAndRandom(t *testing.T) {
	var hosts []bmov1alpha1.BareMetalHost
	for i := range 6 {
		fd := "fd-a"
		if i%2 == 1 {
			fd = "fd-b"
		}
		h := bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("h%d", i), Labels: map[string]string{failureDomainLabel: fd}}}
		h.Status.Provisioning.State = bmov1alpha1.StateReady
		hosts = append(hosts, h)
	}
	m := &clusterv1.Machine{Spec: clusterv1.MachineSpec{FailureDomain: "fd-b"}}
	seen := map[string]bool{}
	for range 200 {
		h, err := chooseHost(hosts, &capm3v1beta1.Metal3Machine{}, m)
		if err != nil || h == nil {
			t.Fatalf("chooseHost = %v, %v", h, err)
		}
		if h.Labels[failureDomainLabel] != "fd-b" {
			t.Fatalf("chose %s in %s, outside the Machine's failure domain", h.Name, h.Labels[failureDomainLabel])
		}
		seen[h.Name] = true
	}
	if len(seen) != 3 {
		t.Errorf("chose among %v, want all three hosts of fd-b", seen)
	}
	m.Spec.FailureDomain = "fd-c"
	if h, _ := chooseHost(hosts, &capm3v1beta1.Metal3Machine{}, m); h != nil {
		t.Errorf("chose %s for a failure domain no host is in", h.Name)
	}
}

// TestPausedCluster: a paused Cluster stops the Metal3Machine at once.
func TestPausedCluster(t *testing.T) {
	e := newEnv(t)
	if err := retryUpdate(e.cluster, func() { e.cluster.Spec.Paused = ptr.To(true) }, false); err != nil {
		t.Fatal(err)
	}
	h := e.host("idle")
	_, m3m := e.machine("paused", capm3v1beta1.Metal3MachineSpec{Image: diskImage()})
	// Give the controller a chance it must not take, then resume.
	if err := get(m3m); err != nil {
		t.Fatal(err)
	}
	consumed := func() bool { return get(h) == nil && h.Spec.ConsumerRef != nil }
	for range 10 {
		if consumed() {
			t.Fatal("a host was claimed for a Metal3Machine of a paused Cluster")
		}
		sleep()
	}
	if err := retryUpdate(e.cluster, func() { e.cluster.Spec.Paused = nil }, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, "resumed", func() error {
		if !consumed() {
			return errors.New("host not claimed after the Cluster was unpaused")
		}
		return nil
	})
}

func condition(list clusterv1beta1.Conditions, t clusterv1beta1.ConditionType) *clusterv1beta1.Condition {
	for i := range list {
		if list[i].Type == t {
			return &list[i]
		}
	}
	return nil
}
