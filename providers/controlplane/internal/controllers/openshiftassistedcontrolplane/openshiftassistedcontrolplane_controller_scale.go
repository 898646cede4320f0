package openshiftassistedcontrolplane

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/storage/names"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/cluster-api/util/conditions"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
)

// haMembers is the etcd member count of a highly available control plane:
// below it, one failure loses quorum.
const haMembers = 3

// reconcileMachines creates or deletes at most one control-plane Machine
// per reconcile, waiting while one is being deleted.
func (r *Reconciler) reconcileMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	if err := r.syncMachines(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			setMachinesWaiting(s.cp, controlplanev1.WaitingForMachineDeletionReason,
				fmt.Sprintf("Machine %s is being deleted; no Machine is created or deleted until it is gone", m.Name))
			return ctrl.Result{RequeueAfter: r.RetryAfter}, nil
		}
	}
	if done, err := r.remediate(ctx, s); err != nil || done {
		return ctrl.Result{}, err
	}
	want, have := int(replicas(s.cp)), len(s.machines)
	switch {
	case have < want:
		return ctrl.Result{}, r.scaleUp(ctx, s, have, want)
	case have > want:
		return ctrl.Result{}, r.scaleDown(ctx, s, have, want)
	}
	setMachinesCreated(s.cp, want)
	return ctrl.Result{}, nil
}

// scaleUp creates one Machine, with a clone of the infrastructure template
// and an OpenshiftAssistedConfig of its name.
func (r *Reconciler) scaleUp(ctx context.Context, s *scope, have, want int) error {
	name := names.SimpleNameGenerator.GenerateName(s.cp.Name + "-")
	if err := r.createMachine(ctx, s, name); err != nil {
		setMachinesWaiting(s.cp, controlplanev1.MachineCreateFailedReason, err.Error())
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Created control-plane Machine", "Machine", name, "replicas", fmt.Sprintf("%d/%d", have+1, want))
	setMachinesWaiting(s.cp, controlplanev1.ScalingUpReason, fmt.Sprintf("%d of %d control-plane Machines created", have+1, want))
	return nil
}

// scaleDown deletes one Machine, the delete-annotated first, unless that
// would leave a highly available control plane with fewer than three etcd
// members.
func (r *Reconciler) scaleDown(ctx context.Context, s *scope, have, want int) error {
	if want < haMembers && have <= haMembers {
		setMachinesWaiting(s.cp, controlplanev1.ScaleDownBlockedReason, fmt.Sprintf(
			"refusing to scale from %d to %d control-plane Machines: fewer than %d etcd members lose quorum when one fails; "+
				"set replicas to %d or more (a cluster installed highly available cannot become single-node)", have, want, haMembers, haMembers))
		return nil
	}
	victim := machineToDelete(s.machines)
	if err := r.Client.Delete(ctx, victim); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete Machine %s: %w", victim.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted control-plane Machine", "Machine", victim.Name, "replicas", fmt.Sprintf("%d/%d", have-1, want))
	setMachinesWaiting(s.cp, controlplanev1.ScalingDownReason, fmt.Sprintf(
		"deleting Machine %s: %d control-plane Machines, %d wanted", victim.Name, have, want))
	return nil
}

// machineToDelete picks the Machine a scale-down removes: one marked with
// the cluster.x-k8s.io/delete-machine annotation, else one that never
// became a node (it holds no etcd member), else the oldest; among equals,
// the oldest, then by name.
func machineToDelete(machines []*clusterv1.Machine) *clusterv1.Machine {
	sorted := append([]*clusterv1.Machine(nil), machines...)
	rank := func(m *clusterv1.Machine) int {
		if _, ok := m.Annotations[clusterv1.DeleteMachineAnnotation]; ok {
			return 0
		}
		if !m.Status.NodeRef.IsDefined() {
			return 1
		}
		return 2
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra < rb
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return sorted[0]
}

// remediate deletes one Machine a MachineHealthCheck asked its owner to
// remediate (OwnerRemediated=False), if the others keep etcd quorum; the
// scale-up that follows replaces it. It reports whether it acted.
func (r *Reconciler) remediate(ctx context.Context, s *scope) (bool, error) {
	var unhealthy []*clusterv1.Machine
	for _, m := range s.machines {
		if conditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition) {
			unhealthy = append(unhealthy, m)
		}
	}
	if len(unhealthy) == 0 {
		return false, nil
	}
	want := int(replicas(s.cp))
	healthy := len(s.machines) - len(unhealthy)
	if want == 1 || healthy < want/2+1 {
		setMachinesWaiting(s.cp, controlplanev1.RemediationBlockedReason, fmt.Sprintf(
			"%d of %d control-plane Machines need remediation; replacing one would leave %d healthy etcd members, fewer than the quorum of %d: fix the hosts by hand",
			len(unhealthy), len(s.machines), healthy, want/2+1))
		return true, nil
	}
	victim := machineToDelete(unhealthy)
	if err := r.Client.Delete(ctx, victim); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("delete unhealthy Machine %s: %w", victim.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted unhealthy control-plane Machine to replace it", "Machine", victim.Name)
	setMachinesWaiting(s.cp, controlplanev1.RemediatingReason, fmt.Sprintf(
		"deleting Machine %s, which a MachineHealthCheck marked unhealthy; a new Machine replaces it", victim.Name))
	return true, nil
}

// createMachine creates the infrastructure clone, the bootstrap config and
// the Machine, all owned by the control plane until Cluster API makes the
// Machine their owner; on failure it removes what it made.
func (r *Reconciler) createMachine(ctx context.Context, s *scope, name string) (retErr error) {
	owner := metav1.NewControllerRef(s.cp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))
	tpl := s.cp.Spec.MachineTemplate
	var created []client.Object
	defer func() {
		if retErr == nil {
			return
		}
		for _, obj := range created {
			if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				retErr = errors.Join(retErr, fmt.Errorf("clean up %s: %w", obj.GetName(), err))
			}
		}
	}()

	infra, err := r.cloneInfrastructure(ctx, s, name, owner)
	if err != nil {
		return err
	}
	created = append(created, infra)

	labels := machineLabels(s.cp, s.cluster.Name)
	config := &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: s.cp.Namespace, Labels: maps.Clone(labels),
			OwnerReferences: []metav1.OwnerReference{*owner},
		},
		Spec: *s.cp.Spec.OpenshiftAssistedConfigSpec.DeepCopy(),
	}
	if err := r.Client.Create(ctx, config); err != nil {
		return fmt.Errorf("create OpenshiftAssistedConfig %s: %w", name, err)
	}
	created = append(created, config)

	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: s.cp.Namespace,
			Labels:          mergeLabels(tpl.ObjectMeta.Labels, labels),
			Annotations:     mergeLabels(tpl.ObjectMeta.Annotations, machineRoleAnnotations),
			OwnerReferences: []metav1.OwnerReference{*owner},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName: s.cluster.Name,
			Version:     s.cp.Status.Version,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name,
			}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infra.GroupVersionKind().Group, Kind: infra.GetKind(), Name: infra.GetName(),
			},
			Deletion: clusterv1.MachineDeletionSpec{
				NodeDrainTimeoutSeconds:        tpl.Spec.Deletion.NodeDrainTimeoutSeconds,
				NodeVolumeDetachTimeoutSeconds: tpl.Spec.Deletion.NodeVolumeDetachTimeoutSeconds,
				NodeDeletionTimeoutSeconds:     tpl.Spec.Deletion.NodeDeletionTimeoutSeconds,
			},
			ReadinessGates: tpl.Spec.ReadinessGates,
		},
	}
	if err := r.Client.Create(ctx, machine); err != nil {
		return fmt.Errorf("create Machine %s: %w", name, err)
	}
	return nil
}

// cloneInfrastructure creates the Machine's infrastructure object from the
// template spec.machineTemplate.spec.infrastructureRef names.
func (r *Reconciler) cloneInfrastructure(ctx context.Context, s *scope, name string, owner *metav1.OwnerReference) (*unstructured.Unstructured, error) {
	ref := s.cp.Spec.MachineTemplate.Spec.InfrastructureRef
	template, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, ref, s.cp.Namespace)
	if err != nil {
		return nil, fmt.Errorf("get infrastructure template %s %s: %w", ref.Kind, ref.Name, err)
	}
	infra, err := external.GenerateTemplate(&external.GenerateTemplateInput{
		Template: template,
		TemplateRef: &corev1.ObjectReference{
			APIVersion: template.GetAPIVersion(), Kind: template.GetKind(), Name: template.GetName(), Namespace: template.GetNamespace(),
		},
		Namespace:   s.cp.Namespace,
		Name:        name,
		ClusterName: s.cluster.Name,
		OwnerRef:    owner,
		Labels:      mergeLabels(s.cp.Spec.MachineTemplate.ObjectMeta.Labels, machineLabels(s.cp, s.cluster.Name)),
		Annotations: s.cp.Spec.MachineTemplate.ObjectMeta.Annotations,
	})
	if err != nil {
		return nil, fmt.Errorf("clone infrastructure template %s: %w", ref.Name, err)
	}
	if err := r.Client.Create(ctx, infra); err != nil {
		return nil, fmt.Errorf("create %s %s: %w", infra.GetKind(), name, err)
	}
	return infra, nil
}

// syncMachines propagates the template's labels and annotations to the
// Machines in place (no rollout) and sets their UpToDate condition, which
// the contract leaves to the control plane.
func (r *Reconciler) syncMachines(ctx context.Context, s *scope) error {
	tpl := s.cp.Spec.MachineTemplate.ObjectMeta
	var errs []error
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		before := m.DeepCopy()
		m.Labels = mergeLabels(m.Labels, tpl.Labels)
		m.Annotations = mergeLabels(m.Annotations, tpl.Annotations)
		if !maps.Equal(before.Labels, m.Labels) || !maps.Equal(before.Annotations, m.Annotations) {
			if err := r.Client.Patch(ctx, m, client.MergeFrom(before)); err != nil {
				errs = append(errs, fmt.Errorf("propagate metadata to Machine %s: %w", m.Name, err))
				continue
			}
		}
		from, err := r.clonedFrom(ctx, m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		before = m.DeepCopy()
		conditions.Set(m, upToDate(s, from))
		if !conditionsEqual(before, m, clusterv1.MachineUpToDateCondition) {
			if err := r.Client.Status().Patch(ctx, m, client.MergeFrom(before)); err != nil {
				errs = append(errs, fmt.Errorf("set UpToDate of Machine %s: %w", m.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// upToDate says whether a Machine matches the spec: cloned from the current
// infrastructure template and running the desired release. Out-of-date
// Machines are reported, not rolled: OpenShift updates nodes in place.
func upToDate(s *scope, from string) metav1.Condition {
	c := metav1.Condition{Type: clusterv1.MachineUpToDateCondition, Status: metav1.ConditionTrue, Reason: clusterv1.MachineUpToDateReason}
	ref := s.cp.Spec.MachineTemplate.Spec.InfrastructureRef
	if from != "" && from != ref.Name {
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineNotUpToDateReason
		c.Message = fmt.Sprintf("cloned from %s %s, the spec now names %s; replace the Machine to apply it", ref.Kind, from, ref.Name)
		return c
	}
	if s.upgrading {
		c.Status, c.Reason = metav1.ConditionFalse, clusterv1.MachineNotUpToDateReason
		c.Message = fmt.Sprintf("OpenShift %s is being updated to %s in place", s.cp.Status.DistributionVersion, s.cp.Spec.DistributionVersion)
		if s.target.Image == "" {
			c.Message = fmt.Sprintf("runs OpenShift %s; the spec names %s, whose release image cannot be read", s.cp.Status.DistributionVersion, s.cp.Spec.DistributionVersion)
		}
	}
	return c
}

// clonedFrom is the infrastructure template a Machine's infrastructure
// was cloned from: Cluster API's cloned-from-name annotation on the clone,
// read as the kubeadm control plane reads it (the Machine itself carries
// no record, as CAPOA's Machines carry none). Empty when the clone is gone
// or says nothing.
func (r *Reconciler) clonedFrom(ctx context.Context, m *clusterv1.Machine) (string, error) {
	infra, err := external.GetObjectFromContractVersionedRef(ctx, r.Client, m.Spec.InfrastructureRef, m.Namespace)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("get the infrastructure of Machine %s: %w", m.Name, err)
	}
	return infra.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation], nil
}

func conditionsEqual(a, b *clusterv1.Machine, t string) bool {
	ca, cb := conditions.Get(a, t), conditions.Get(b, t)
	if ca == nil || cb == nil {
		return ca == cb
	}
	return ca.Status == cb.Status && ca.Reason == cb.Reason && ca.Message == cb.Message
}

// mergeLabels returns base with extra's entries added (extra wins).
func mergeLabels(base, extra map[string]string) map[string]string {
	if len(base) == 0 && len(extra) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, extra)
	return out
}
