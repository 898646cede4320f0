package framework

import (
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/results"
)

func TestMilestoneClockKeepsFirstReachAndThePlan(t *testing.T) {
	c := NewMilestoneClock([]results.Milestone{{Name: "agents", Description: "agents registered"}, {Name: "installed"}, {Name: "joined"}})
	ticks := []time.Time{time.Unix(10, 0), time.Unix(30, 0), time.Unix(99, 0)}
	c.now = func() time.Time { tick := ticks[0]; ticks = ticks[1:]; return tick }
	c.Reach("agents")
	c.Reach("joined")
	c.Reach("agents") // a second reach keeps the first time
	got := c.Milestones()
	if len(got) != 3 || got[0].Description != "agents registered" || !got[0].ReachedAt.Equal(time.Unix(10, 0)) ||
		got[1].ReachedAt != nil || !got[2].ReachedAt.Equal(time.Unix(30, 0)) {
		t.Fatalf("milestones = %+v", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("reaching an undeclared milestone did not panic")
		}
	}()
	c.Reach("undeclared")
}

func TestBuildObservationValidates(t *testing.T) {
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0", Labels: map[string]string{"node-role.kubernetes.io/worker": ""}},
		Spec: corev1.NodeSpec{ProviderID: "metal3://ns/host-0/m3m-0", Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.2.15"}}}}
	host := bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "host-0", Namespace: "ns"},
		Spec:   bmov1alpha1.BareMetalHostSpec{Online: true, ConsumerRef: &corev1.ObjectReference{Kind: "Metal3Machine", Name: "m3m-0"}},
		Status: bmov1alpha1.BareMetalHostStatus{PoweredOn: true, Provisioning: bmov1alpha1.ProvisionStatus{State: bmov1alpha1.StateProvisioned}}}
	start := time.Now()
	o := BuildObservation(ObservationInput{Scenario: "day1", Flow: results.FlowCAPI, Outcome: results.OutcomeSucceeded,
		Started: start, Finished: start.Add(time.Minute), Backends: map[string]string{"hub": "local"},
		Fixture: results.Fixture{Name: "f"}, Nodes: []corev1.Node{node}, Hosts: []bmov1alpha1.BareMetalHost{host}})
	if err := o.Validate(); err != nil {
		t.Fatalf("observation does not validate: %v", err)
	}
	if !o.Nodes[0].Ready || o.Nodes[0].ProviderID != node.Spec.ProviderID || len(o.Nodes[0].Taints) != 1 {
		t.Fatalf("node = %+v", o.Nodes[0])
	}
	if o.Hosts[0].ProvisioningState != "provisioned" || o.Hosts[0].ConsumerRef.Kind != "Metal3Machine" {
		t.Fatalf("host = %+v", o.Hosts[0])
	}
}

func TestScenarioAnnotationsDropBookkeeping(t *testing.T) {
	got := scenarioAnnotations(map[string]string{
		"machine.openshift.io/machine":             "openshift-machine-api/m-0",
		agentapi.DesiredKubeletAnnotation:          "v1.35.0",
		"baremetalhost.metal3.io/status":           "{}",
		"control-plane.alpha.kubernetes.io/leader": "x",
	})
	if len(got) != 1 || got["machine.openshift.io/machine"] != "openshift-machine-api/m-0" {
		t.Errorf("annotations kept %v, want only the machine annotation", got)
	}
}
