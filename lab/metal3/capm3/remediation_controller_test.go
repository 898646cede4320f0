package capm3

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

// provisionedMachine is a Machine whose Metal3Machine runs on a powered-on,
// provisioned host.
func (e *env) provisionedMachine(name string) (*clusterv1.Machine, *bmov1alpha1.BareMetalHost) {
	e.t.Helper()
	e.host(name + "-host")
	m, m3m := e.machine(name, capm3v1beta1.Metal3MachineSpec{Image: diskImage()})
	h := e.associatedHost(m3m)
	e.setHostStatus(h, func(s *bmov1alpha1.BareMetalHostStatus) {
		s.Provisioning.State, s.PoweredOn = bmov1alpha1.StateProvisioned, true
	})
	return m, h
}

// remediation creates a Metal3Remediation as a MachineHealthCheck does
// from a template: named after the Machine, owned by it.
func (e *env) remediation(m *clusterv1.Machine, retryLimit int, timeout time.Duration) *capm3v1beta1.Metal3Remediation {
	e.t.Helper()
	rem := &capm3v1beta1.Metal3Remediation{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: e.ns, OwnerReferences: []metav1.OwnerReference{machineOwnerRef(m)}},
		Spec: capm3v1beta1.Metal3RemediationSpec{Strategy: &capm3v1beta1.RemediationStrategy{
			Type: capm3v1beta1.RebootRemediationStrategy, RetryLimit: retryLimit, Timeout: &metav1.Duration{Duration: timeout},
		}},
	}
	e.create(rem)
	return rem
}

// powerCycled plays the bare-metal operator through one reboot: it waits
// for the remediation's reboot annotation, reports the host off, and waits
// for the annotation to go.
func (e *env) powerCycled(h *bmov1alpha1.BareMetalHost, rem *capm3v1beta1.Metal3Remediation) {
	e.t.Helper()
	if err := get(rem); err != nil {
		e.t.Fatal(err)
	}
	key := rebootAnnotation(rem)
	eventually(e.t, "the host gets the remediation's reboot annotation", func() error {
		if err := get(h); err != nil {
			return err
		}
		if v, ok := h.Annotations[key]; !ok || v != `{"mode":"hard"}` {
			return fmt.Errorf("annotations %v lack %s (hard)", h.Annotations, key)
		}
		return nil
	})
	e.setHostStatus(h, func(s *bmov1alpha1.BareMetalHostStatus) { s.PoweredOn = false })
	eventually(e.t, "the reboot annotation is removed once the host is off", func() error {
		if err := get(h); err != nil {
			return err
		}
		if _, ok := h.Annotations[key]; ok {
			return errors.New("annotation still there")
		}
		return nil
	})
	e.setHostStatus(h, func(s *bmov1alpha1.BareMetalHostStatus) { s.PoweredOn = true })
}

// TestRemediationRebootsThenHandsOver: with retryLimit 2 the host is
// power-cycled twice, timeout apart; when the Machine is still unhealthy
// (the remediation still exists), the Machine gets OwnerRemediated=False
// and the host the unhealthy annotation.
func TestRemediationRebootsThenHandsOver(t *testing.T) {
	e := newEnv(t)
	m, h := e.provisionedMachine("sick")
	// The timeout is the test's time, as the operator, to report the host
	// on again after a reboot, before the next one starts.
	rem := e.remediation(m, 2, 5*time.Second)
	for i := 1; i <= 2; i++ {
		e.powerCycled(h, rem)
		eventually(t, "the reboot is counted", func() error {
			if err := get(rem); err != nil {
				return err
			}
			if rem.Status.RetryCount != i || rem.Status.LastRemediated == nil {
				return fmt.Errorf("retryCount=%d lastRemediated=%v phase=%s", rem.Status.RetryCount, rem.Status.LastRemediated, rem.Status.Phase)
			}
			return nil
		})
		if c := conditions.Get(mustGet(t, m), clusterv1.MachineOwnerRemediatedCondition); c != nil {
			t.Fatalf("OwnerRemediated set after reboot %d of 2: %+v", i, c)
		}
	}
	eventually(t, "the Machine is handed to its owner", func() error {
		if err := get(m); err != nil {
			return err
		}
		c := conditions.Get(m, clusterv1.MachineOwnerRemediatedCondition)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1.MachineOwnerRemediatedWaitingForRemediationReason {
			return fmt.Errorf("OwnerRemediated = %+v", c)
		}
		if err := get(rem); err != nil || rem.Status.Phase != capm3v1beta1.PhaseDeleting {
			return fmt.Errorf("phase = %q (err %v), want %q", rem.Status.Phase, err, capm3v1beta1.PhaseDeleting)
		}
		return nil
	})
	if rem.Status.RetryCount != 2 {
		t.Errorf("retryCount = %d after handing over, want 2", rem.Status.RetryCount)
	}
	if err := get(h); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Annotations[capm3v1beta1.UnhealthyAnnotation]; !ok {
		t.Errorf("host annotations %v lack %s", h.Annotations, capm3v1beta1.UnhealthyAnnotation)
	}
}

// TestRemediationDeletedWhenHealthy: the MachineHealthCheck deletes the
// remediation when the Machine is healthy again; a reboot in progress is
// withdrawn and the Machine is left alone.
func TestRemediationDeletedWhenHealthy(t *testing.T) {
	e := newEnv(t)
	m, h := e.provisionedMachine("recovers")
	rem := e.remediation(m, 1, time.Hour)
	if err := get(rem); err != nil {
		t.Fatal(err)
	}
	key := rebootAnnotation(rem)
	eventually(t, "reboot requested", func() error {
		if err := get(h); err != nil {
			return err
		}
		if _, ok := h.Annotations[key]; !ok {
			return errors.New("no reboot annotation")
		}
		return nil
	})
	if err := suite.client.Delete(context.Background(), rem); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the remediation is gone and its reboot withdrawn", func() error {
		if err := get(rem); !apierrors.IsNotFound(err) {
			return fmt.Errorf("remediation still there (%v)", err)
		}
		if err := get(h); err != nil {
			return err
		}
		if _, ok := h.Annotations[key]; ok {
			return errors.New("reboot annotation left on the host")
		}
		return nil
	})
	if c := conditions.Get(mustGet(t, m), clusterv1.MachineOwnerRemediatedCondition); c != nil {
		t.Errorf("OwnerRemediated set on a Machine that recovered: %+v", c)
	}
}

func mustGet(t *testing.T, m *clusterv1.Machine) *clusterv1.Machine {
	t.Helper()
	if err := get(m); err != nil {
		t.Fatal(err)
	}
	return m
}
