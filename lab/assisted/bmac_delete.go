package assisted

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubectl/pkg/drain"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// A ZTP host is removed from its cluster the documented way by annotating
// its hub BareMetalHost removeAgentOnDeleteAnnotation and deleting it.
// In the converged flow the BMAC then does what upstream's
// handleBMHFinalizer and handleDrain do (bmh_agent_controller.go): it
// drains the host's Node (with the node-drain annotations below and an
// optional timeout), hands the host back to the bare-metal operator to
// clean (no longer detached or paused, automated cleaning "metadata"),
// waits for it to reach "deleting", deletes its Agent (whose finalizer
// takes the Node out of the cluster) and only then lets the host go.
const (
	removeAgentOnDeleteAnnotation = "bmac.agent-install.openshift.io/remove-agent-and-node-on-delete"
	drainStartAnnotation          = "bmac.agent-install.openshift.io/drain-started-at"
	// drainTimeoutAnnotation is a time.Duration after which the drain is
	// given up and the host deprovisioned all the same.
	drainTimeoutAnnotation = "bmac.agent-install.openshift.io/drain-timeout"
	drainStatusAnnotation  = "bmac.agent-install.openshift.io/drain-status"

	drainSucceeded  = "drain succeeded"
	drainInProgress = "draining in progress"
	drainTimedOut   = "drain timed out"

	// drainRecheck and deprovisionRecheck are upstream's requeue delays
	// while a drain runs and while the host deprovisions.
	drainRecheck       = 20 * time.Second
	deprovisionRecheck = 10 * time.Second
	// drainWait is how long one drain attempt waits for pods to go.
	drainWait = 20 * time.Second
)

// handleBMHDelete runs the BMAC's part of a host's deletion.
func (s *Service) handleBMHDelete(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) (ctrl.Result, error) {
	_, annotated := bmh.Annotations[removeAgentOnDeleteAnnotation]
	removeAgent := annotated && s.opts.ConvergedFlow
	agent, err := s.agentOfHost(ctx, bmh)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !removeAgent || agent == nil || !controllerutil.ContainsFinalizer(bmh, bmacFinalizer) {
		return ctrl.Result{}, s.releaseHost(ctx, bmh, removeAgent)
	}
	before := bmh.DeepCopy()
	patch := client.MergeFrom(before)
	if agent.Spec.ClusterDeploymentName != nil {
		res, stop, err := s.handleDrain(ctx, bmh, agent)
		if stop || err != nil {
			return res, s.patchDrain(ctx, bmh, patch, err)
		}
		configureForCleaning(bmh)
		if bmh.Status.Provisioning.State != bmov1alpha1.StateDeleting {
			return ctrl.Result{RequeueAfter: deprovisionRecheck}, s.patchBMH(ctx, bmh, patch, before)
		}
	}
	if err := s.client.Delete(ctx, agent); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, fmt.Errorf("delete Agent %s of deleted BareMetalHost %s: %w", agent.Name, bmh.Name, err)
	}
	controllerutil.RemoveFinalizer(bmh, bmacFinalizer)
	return ctrl.Result{}, s.patchBMH(ctx, bmh, patch, before)
}

// patchDrain writes the drain annotations, then returns the drain's
// error, if any.
func (s *Service) patchDrain(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, patch client.Patch, drainErr error) error {
	if err := s.client.Patch(ctx, bmh, patch); err != nil {
		return fmt.Errorf("update BareMetalHost %s drain status: %w", bmh.Name, err)
	}
	return drainErr
}

// configureForCleaning gives the host back to the bare-metal operator,
// which deprovisions it (a detached host would be deleted untouched).
func configureForCleaning(bmh *bmov1alpha1.BareMetalHost) {
	delete(bmh.Annotations, detachedAnnotation)
	delete(bmh.Annotations, bmov1alpha1.PausedAnnotation)
	bmh.Spec.AutomatedCleaningMode = bmov1alpha1.CleaningModeMetadata
}

// handleDrain drains the Agent's Node once, recording on the host when it
// started and how it went; stop says the deletion waits here.
func (s *Service) handleDrain(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, agent *agentv1beta1.Agent) (ctrl.Result, bool, error) {
	status := bmh.Annotations[drainStatusAnnotation]
	if status == drainSucceeded || status == drainTimedOut {
		return ctrl.Result{}, false, nil
	}
	timedOut, err := drainTimeoutPassed(bmh, time.Now())
	if err != nil {
		metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, drainStatusAnnotation, "failed to check node drain timeout: "+err.Error())
		return ctrl.Result{}, true, nil // until the annotation is fixed
	}
	if timedOut {
		s.opts.Logger.Info("Timed out waiting to drain node, continuing with deprovisioning", "host", bmh.Name)
		metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, drainStatusAnnotation, drainTimedOut)
		return ctrl.Result{}, false, nil
	}
	if _, started := bmh.Annotations[drainStartAnnotation]; !started {
		metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, drainStartAnnotation, time.Now().UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	pending, err := s.drainNode(ctx, agent)
	if err != nil {
		metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, drainStatusAnnotation, "failed to drain node: "+err.Error())
		return ctrl.Result{}, true, err
	}
	if pending {
		metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, drainStatusAnnotation, drainInProgress)
		return ctrl.Result{RequeueAfter: drainRecheck}, true, nil
	}
	metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, drainStatusAnnotation, drainSucceeded)
	return ctrl.Result{}, false, nil
}

// drainTimeoutPassed says whether the drain started longer ago than the
// host's drain timeout; with no timeout or no start it never has.
func drainTimeoutPassed(bmh *bmov1alpha1.BareMetalHost, now time.Time) (bool, error) {
	timeout, hasTimeout := bmh.Annotations[drainTimeoutAnnotation]
	start, started := bmh.Annotations[drainStartAnnotation]
	if !hasTimeout || !started {
		return false, nil
	}
	d, err := time.ParseDuration(timeout)
	if err != nil {
		return false, fmt.Errorf("annotation %s: %w", drainTimeoutAnnotation, err)
	}
	t, err := time.Parse(time.RFC3339, start)
	if err != nil {
		return false, fmt.Errorf("annotation %s: %w", drainStartAnnotation, err)
	}
	return now.Sub(t) >= d, nil
}

// drainNode cordons the Agent's Node and evicts its pods (daemon sets'
// excepted) with kubectl's drain, as upstream does; pending says some
// pods did not go within drainWait.
func (s *Service) drainNode(ctx context.Context, agent *agentv1beta1.Agent) (pending bool, err error) {
	ref := agent.Spec.ClusterDeploymentName
	kubeconfig, err := s.spokeKubeconfig(ctx, ClusterKey{Namespace: ref.Namespace, Name: ref.Name})
	if err != nil {
		return false, err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return false, fmt.Errorf("workload cluster %s/%s kubeconfig: %w", ref.Namespace, ref.Name, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	name := hostname(agent)
	node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("node %s: %w", name, err)
	}
	out := &bytes.Buffer{}
	h := &drain.Helper{Client: cs, Ctx: ctx, Force: true, IgnoreAllDaemonSets: true, DeleteEmptyDirData: true,
		GracePeriodSeconds: -1, Timeout: drainWait, Out: out, ErrOut: out}
	if nodeUnreachable(node) {
		// Pods of a node that cannot be reached never report gone.
		h.SkipWaitForDeleteTimeoutSeconds = 5 * 60
	}
	if err := drain.RunCordonOrUncordon(h, node, true); err != nil {
		return false, fmt.Errorf("cordon node %s: %w", name, err)
	}
	if err := drain.RunNodeDrain(h, name); err != nil {
		s.opts.Logger.Info("Node not drained yet", "node", name, "reason", err.Error())
		return true, nil
	}
	return false, nil
}

func nodeUnreachable(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionUnknown
		}
	}
	return false
}
