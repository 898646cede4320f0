package assisted

import (
	"context"
	"fmt"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// An Agent being deleted leaves its cluster first, as upstream's agent
// controller has it (handleAgentFinalizer, removeSpokeResources in
// internal/controller/controllers/agent_controller.go): every Agent holds
// the finalizer agentFinalizer; when one bound to a cluster that is
// live, with its InfraEnv, and that has spoke resources is deleted, its
// Node leaves the cluster through its Machine, and only then is the host
// deregistered and the finalizer removed.
const (
	agentFinalizer = "agent.agent-install.openshift.io/ai-deprovision"
	// skipSpokeCleanupAnnotation on an Agent leaves its cluster alone when
	// the Agent is deleted.
	skipSpokeCleanupAnnotation = "agent.agent-install.openshift.io/skip-spoke-cleanup"

	// What removeSpokeResources writes and reads in the cluster.
	nodeMachineAnnotation         = "machine.openshift.io/machine"
	deleteMachineAnnotation       = "machine.openshift.io/delete-machine"
	excludeNodeDrainingAnnotation = "machine.openshift.io/exclude-node-draining"
	machineSetLabel               = "machine.openshift.io/cluster-api-machineset"
	machineHostAnnotation         = "metal3.io/BareMetalHost"
	autoscaleToHostsAnnotation    = "metal3.io/autoscale-to-hosts"
)

// handleAgentDeletion deregisters a deleted Agent's host, through the
// finalizer when the service runs it (Options.AgentDeprovision), else at
// once. done says the reconcile ends here.
func (s *Service) handleAgentDeletion(ctx context.Context, a *agentv1beta1.Agent) (done bool, err error) {
	if s.opts.AgentDeprovision {
		return s.handleAgentFinalizer(ctx, a)
	}
	if a.DeletionTimestamp.IsZero() {
		return false, nil
	}
	s.registry.forget(a.Name)
	return true, nil
}

// handleAgentFinalizer adds the finalizer to a live Agent and runs the
// deletion of one being deleted. done says the reconcile ends here.
func (s *Service) handleAgentFinalizer(ctx context.Context, a *agentv1beta1.Agent) (done bool, err error) {
	if a.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(a, agentFinalizer) {
			return false, nil
		}
		patch := client.MergeFromWithOptions(a.DeepCopy(), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(a, agentFinalizer)
		if err := s.client.Patch(ctx, a, patch); err != nil {
			return true, fmt.Errorf("add finalizer to Agent %s: %w", a.Name, err)
		}
		return true, nil // the update triggers another reconcile
	}
	if !controllerutil.ContainsFinalizer(a, agentFinalizer) {
		s.registry.forget(a.Name)
		return true, nil
	}
	if err := s.leaveCluster(ctx, a); err != nil {
		return true, err
	}
	s.registry.forget(a.Name)
	patch := client.MergeFrom(a.DeepCopy())
	controllerutil.RemoveFinalizer(a, agentFinalizer)
	if err := s.client.Patch(ctx, a, patch); err != nil {
		return true, fmt.Errorf("remove finalizer from Agent %s: %w", a.Name, err)
	}
	s.events.add(a.Namespace, a.Name, "Host %s: deregistered and its Agent deleted", hostname(a))
	return true, nil
}

// leaveCluster removes a deleted Agent's host from its cluster when
// upstream does: not skipped by annotation, bound, with spoke resources,
// and its ClusterDeployment, AgentClusterInstall and InfraEnv all live
// (clusterAndInfraEnvLive: a cluster being torn down as a whole, or a
// Machine's Agents collected after their InfraEnv, are left alone).
func (s *Service) leaveCluster(ctx context.Context, a *agentv1beta1.Agent) error {
	ref := a.Spec.ClusterDeploymentName
	if _, skip := a.Annotations[skipSpokeCleanupAnnotation]; skip || ref == nil {
		return nil
	}
	exist, err := s.spokeResourcesExist(ctx, a)
	if err != nil || !exist {
		return err
	}
	there, err := s.clusterAndInfraEnvLive(ctx, a)
	if err != nil || !there {
		return err
	}
	c, err := s.spokeClient(ctx, ClusterKey{Namespace: ref.Namespace, Name: ref.Name})
	if err != nil {
		return fmt.Errorf("workload cluster of Agent %s: %w", a.Name, err)
	}
	if err := s.removeSpokeResources(ctx, c, hostname(a)); err != nil {
		return fmt.Errorf("clean the cluster resources of Agent %s: %w", a.Name, err)
	}
	return nil
}

// spokeResourcesExist says whether the host got as far as writing
// anything into its cluster: its install done, its spoke BareMetalHost
// and Machine written, or a CSR of it approved.
func (s *Service) spokeResourcesExist(ctx context.Context, a *agentv1beta1.Agent) (bool, error) {
	if a.Status.Progress.CurrentStage == agentv1beta1.HostStageDone || len(a.Status.CSRStatus.ApprovedCSRs) > 0 {
		return true, nil
	}
	name := a.Labels[agentv1beta1.BareMetalHostLabel]
	if name == "" {
		return false, nil
	}
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, bmh); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	_, created := bmh.Annotations[spokeCreatedAnnotation]
	return created, nil
}

// clusterAndInfraEnvLive says whether the Agent's ClusterDeployment,
// the AgentClusterInstall it refers to and the Agent's InfraEnv all
// exist and none is being deleted; an Agent with no InfraEnv label, or a
// ClusterDeployment with no install reference, is an error.
func (s *Service) clusterAndInfraEnvLive(ctx context.Context, a *agentv1beta1.Agent) (bool, error) {
	ref := a.Spec.ClusterDeploymentName
	cd := &hivev1.ClusterDeployment{}
	if live, err := s.live(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cd); err != nil || !live {
		return false, err
	}
	if cd.Spec.ClusterInstallRef == nil {
		return false, fmt.Errorf("ClusterDeployment %s/%s has no cluster install reference", cd.Namespace, cd.Name)
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if live, err := s.live(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: cd.Spec.ClusterInstallRef.Name}, aci); err != nil || !live {
		return false, err
	}
	ie, ok := a.Labels[agentv1beta1.InfraEnvNameLabel]
	if !ok {
		return false, fmt.Errorf("Agent %s has no label %s naming its InfraEnv", a.Name, agentv1beta1.InfraEnvNameLabel)
	}
	return s.live(ctx, client.ObjectKey{Namespace: a.Namespace, Name: ie}, &agentv1beta1.InfraEnv{})
}

// live says whether the object exists and is not being deleted.
func (s *Service) live(ctx context.Context, key client.ObjectKey, obj client.Object) (bool, error) {
	if err := s.client.Get(ctx, key, obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return obj.GetDeletionTimestamp().IsZero(), nil
}

// removeSpokeResources takes a node out of its cluster the way its
// machine API would: a node without a Machine is deleted; its Machine is
// marked for deletion with no drain (the BMAC drained already); a Machine
// of a MachineSet leaves by the set autoscaling to hosts as its
// BareMetalHost is deleted, any other is deleted with its BareMetalHost
// (the cluster's machine controller then deletes the Node).
func (s *Service) removeSpokeResources(ctx context.Context, c client.Client, nodeName string) error {
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: nodeName}, node); err != nil {
		return client.IgnoreNotFound(err)
	}
	machine, err := machineOfNode(ctx, c, node)
	if err != nil || machine == nil {
		if err != nil {
			return err
		}
		return deleteIgnoringGone(ctx, c, node, "Node")
	}
	patch := client.MergeFrom(machine.DeepCopy())
	if machine.Annotations == nil {
		machine.Annotations = map[string]string{}
	}
	machine.Annotations[deleteMachineAnnotation] = "true"
	machine.Annotations[excludeNodeDrainingAnnotation] = "true"
	if err := c.Patch(ctx, machine, patch); err != nil {
		return fmt.Errorf("mark Machine %s for deletion: %w", machine.Name, err)
	}
	set := &machinev1beta1.MachineSet{}
	setName, inSet := machine.Labels[machineSetLabel]
	if inSet {
		if err := c.Get(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: setName}, set); err != nil {
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("MachineSet %s: %w", setName, err)
			}
			inSet = false
		}
	}
	if !inSet {
		if err := deleteHostOfMachine(ctx, c, machine); client.IgnoreNotFound(err) != nil {
			return err
		}
		return deleteIgnoringGone(ctx, c, machine, "Machine")
	}
	patch = client.MergeFrom(set.DeepCopy())
	if set.Annotations == nil {
		set.Annotations = map[string]string{}
	}
	set.Annotations[autoscaleToHostsAnnotation] = "true"
	if err := c.Patch(ctx, set, patch); err != nil {
		return fmt.Errorf("set MachineSet %s to autoscale to hosts: %w", set.Name, err)
	}
	return client.IgnoreNotFound(deleteHostOfMachine(ctx, c, machine))
}

// machineOfNode is the Machine the node's annotation names, or nil when
// it names none that exists (upstream then deletes the node alone).
func machineOfNode(ctx context.Context, c client.Client, node *corev1.Node) (*machinev1beta1.Machine, error) {
	ns, name, ok := strings.Cut(node.Annotations[nodeMachineAnnotation], "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, nil
	}
	m := &machinev1beta1.Machine{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("Machine %s/%s of node %s: %w", ns, name, node.Name, err)
	}
	return m, nil
}

// deleteHostOfMachine deletes the BareMetalHost the Machine's annotation
// names, if it has one.
func deleteHostOfMachine(ctx context.Context, c client.Client, m *machinev1beta1.Machine) error {
	ref, ok := m.Annotations[machineHostAnnotation]
	if !ok {
		return nil
	}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || strings.Contains(name, "/") {
		return fmt.Errorf("Machine %s names BareMetalHost %q, not <namespace>/<name>", m.Name, ref)
	}
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, bmh); err != nil {
		return fmt.Errorf("BareMetalHost %s of Machine %s: %w", ref, m.Name, err)
	}
	if err := c.Delete(ctx, bmh); err != nil {
		return fmt.Errorf("delete BareMetalHost %s of Machine %s: %w", ref, m.Name, err)
	}
	return nil
}

func deleteIgnoringGone(ctx context.Context, c client.Client, obj client.Object, kind string) error {
	if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete %s %s: %w", kind, obj.GetName(), err)
	}
	return nil
}
