package assisted

import (
	"context"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// A cluster that installs has its no-ingress admin kubeconfig published
// in the ACI's cluster metadata while its hosts still write their disks,
// and the ClusterDeployment learns nothing yet; once installed, the
// password Secret joins it, the ACI reports Completed and Stopped, hive's
// part copies the complete metadata and marks the ClusterDeployment
// installed, and the cluster turns into a day-2 cluster (adding-hosts).
func TestKubeconfigPublishedWhileInstalling(t *testing.T) {
	t.Parallel()
	h := startHubWith(t, &fixedSpokes{})
	ns := h.namespace(t)
	ctx := context.Background()
	cluster(t, h, ns, 1)
	master := installedAgent(ns, "", "master-0", agentv1beta1.HostRoleMaster, agentv1beta1.HostKindHost)
	master.Spec.ClusterDeploymentName = &agentv1beta1.ClusterReference{Name: "sno", Namespace: ns}
	master.Status.Progress.CurrentStage = agentv1beta1.HostStageWritingImageToDisk
	master.Status.DebugInfo.State = agentv1beta1.AgentStateInstallingInProgress
	h.agent(t, master)
	h.setACIState(t, ns, "sno", hiveextv1beta1.ClusterStateInstalling)

	aci := &hiveextv1beta1.AgentClusterInstall{}
	h.eventually(t, "the no-ingress kubeconfig named in the ACI", func() bool {
		_ = h.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, aci)
		return aci.Spec.ClusterMetadata != nil && conditionReason(aci, hiveextv1beta1.ConditionCompleted) != ""
	})
	early := aci.Spec.ClusterMetadata.DeepCopy()
	if early.AdminKubeconfigSecretRef.Name != "sno-admin-kubeconfig" || early.AdminPasswordSecretRef != nil ||
		early.ClusterID == "" || early.InfraID != string(aci.UID) {
		t.Errorf("metadata while installing: %+v", early)
	}
	kc := h.secret(t, ns, "sno-admin-kubeconfig")
	if string(kc.Data["kubeconfig"]) != string(fixedKubeconfig) || kc.Labels[hiveSecretTypeLabel] != "kubeconfig" ||
		kc.Labels[hiveCDNameLabel] != "sno" || !ownedBy(kc, "ClusterDeployment", "sno") {
		t.Errorf("kubeconfig Secret while installing: labels %v, owners %v", kc.Labels, kc.OwnerReferences)
	}
	if aci.Status.DebugInfo.State != hiveextv1beta1.ClusterStateInstalling || conditionReason(aci, hiveextv1beta1.ConditionCompleted) != hiveextv1beta1.ReasonInstallationInProgress {
		t.Errorf("ACI %q, Completed %q while the host writes its disk", aci.Status.DebugInfo.State, conditionReason(aci, hiveextv1beta1.ConditionCompleted))
	}
	cd := &hivev1.ClusterDeployment{}
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, cd); err != nil || cd.Spec.ClusterMetadata != nil || cd.Spec.Installed {
		t.Errorf("ClusterDeployment given metadata %+v or installed %v before the install completed (%v)", cd.Spec.ClusterMetadata, cd.Spec.Installed, err)
	}

	h.setAgentStage(t, ns, "agent-master-0", agentv1beta1.HostStageDone)
	h.eventually(t, "the cluster turned day-2", func() bool {
		_ = h.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, aci)
		return aci.Status.DebugInfo.State == hiveextv1beta1.ClusterStateAddingHosts
	})
	meta := aci.Spec.ClusterMetadata
	if meta.ClusterID != early.ClusterID || meta.AdminPasswordSecretRef == nil || meta.AdminPasswordSecretRef.Name != "sno-admin-password" {
		t.Errorf("metadata once installed: %+v (was %+v)", meta, early)
	}
	for ct, want := range map[hivev1.ClusterInstallConditionType]string{
		hiveextv1beta1.ConditionCompleted: hiveextv1beta1.ReasonInstallationCompleted, hiveextv1beta1.ConditionStopped: hiveextv1beta1.ReasonInstallationCompleted,
		hiveextv1beta1.ConditionRequirementsMet: hiveextv1beta1.ReasonClusterAlreadyInstalling, hiveextv1beta1.ConditionFailed: hiveextv1beta1.ReasonInstallationNotFailed,
	} {
		if got := conditionReason(aci, ct); got != want {
			t.Errorf("%s reason %q, want %q", ct, got, want)
		}
	}
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, cd); err != nil || !cd.Spec.Installed || cd.Spec.ClusterMetadata == nil ||
		cd.Spec.ClusterMetadata.AdminPasswordSecretRef == nil || cd.Spec.ClusterMetadata.ClusterID != meta.ClusterID {
		t.Errorf("ClusterDeployment once installed: installed %v, metadata %+v (%v)", cd.Spec.Installed, cd.Spec.ClusterMetadata, err)
	}
	if pw := h.secret(t, ns, "sno-admin-password"); pw.Labels[hiveSecretTypeLabel] != "kubeadmincreds" || len(pw.Data["password"]) == 0 {
		t.Errorf("password Secret: labels %v", pw.Labels)
	}
	if kc := h.secret(t, ns, "sno-admin-kubeconfig"); kc.Labels[backupLabel] != "true" || kc.Labels[agentv1beta1.WatchResourceLabel] != "true" {
		t.Errorf("installed kubeconfig Secret labels %v, want backup and watch", kc.Labels)
	}
}

// A cluster that is not installing publishes nothing.
func TestNoKubeconfigBeforeInstall(t *testing.T) {
	t.Parallel()
	h := startHubWith(t, &fixedSpokes{})
	ns := h.namespace(t)
	ctx := context.Background()
	cluster(t, h, ns, 1)
	aci := &hiveextv1beta1.AgentClusterInstall{}
	h.eventually(t, "the ACI insufficient without hosts", func() bool {
		_ = h.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, aci)
		return aci.Status.DebugInfo.State == hiveextv1beta1.ClusterStateInsufficient
	})
	if aci.Spec.ClusterMetadata != nil {
		t.Errorf("metadata before install: %+v", aci.Spec.ClusterMetadata)
	}
	for ct, want := range map[hivev1.ClusterInstallConditionType]string{
		hiveextv1beta1.ConditionCompleted: hiveextv1beta1.ReasonInstallationNotStarted, hiveextv1beta1.ConditionStopped: hiveextv1beta1.ReasonInstallationNotStopped,
		hiveextv1beta1.ConditionRequirementsMet: hiveextv1beta1.ReasonClusterNotReady, hiveextv1beta1.ConditionValidated: hiveextv1beta1.ReasonValidationsFailing,
	} {
		if got := conditionReason(aci, ct); got != want {
			t.Errorf("%s reason %q, want %q", ct, got, want)
		}
	}
}

// setACIState moves an ACI to a cluster state, as if the service got it
// there.
func (h *hub) setACIState(t *testing.T, ns, name, state string) {
	t.Helper()
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	h.updateStatus(t, aci, func() { aci.Status.DebugInfo.State = state })
}

func (h *hub) secret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatalf("secret %s: %v", name, err)
	}
	return s
}

func ownedBy(o metav1.Object, kind, name string) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == kind && ref.Name == name && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
			return true
		}
	}
	return false
}

func conditionReason(aci *hiveextv1beta1.AgentClusterInstall, t hivev1.ClusterInstallConditionType) string {
	if c := aciCondition(aci, t); c != nil {
		return c.Reason
	}
	return ""
}

var fixedKubeconfig = []byte("apiVersion: v1\nkind: Config\nclusters: []\n")

// fixedSpokes has one workload cluster for every key, which hands out a
// fixed admin kubeconfig and starts a machine API that does nothing.
type fixedSpokes struct{}

func (fixedSpokes) Create(context.Context, ClusterKey, configv1.Release) (Spoke, error) {
	return fixedSpoke{}, nil
}
func (fixedSpokes) Get(ClusterKey) Spoke                     { return fixedSpoke{} }
func (fixedSpokes) Delete(context.Context, ClusterKey) error { return nil }

type fixedSpoke struct {
	Spoke // the rest is not used by these tests
}

func (fixedSpoke) AdminKubeconfig() []byte                                { return fixedKubeconfig }
func (fixedSpoke) StartMachineAPI(context.Context, []InstalledHost) error { return nil }
func (fixedSpoke) InfrastructureName() string                             { return "sno-x7k2p" }
