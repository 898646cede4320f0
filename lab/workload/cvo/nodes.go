package cvo

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// DesiredKubeletAnnotation on a Node names the kubelet version the node is
// to run: the Kubernetes version of the release the cluster is at. It is
// the lab's stand-in for the machine-config operator's rendered config
// (machineconfiguration.openshift.io/desiredConfig): the lab's node agent
// reads it and reports that kubelet version from then on, on the same
// Node, as a real node does after the machine-config daemon moved it to
// the release's operating system in place.
const DesiredKubeletAnnotation = "paritylab.io/desired-kubelet-version"

// Control-plane node labels: the machine-config operator's master pool.
var controlPlaneLabels = []string{"node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane"}

// rollOutNodes asks every Node for kubelet, and returns the Ready
// control-plane nodes that do not run it yet: the real machine-config
// operator reports the new version, and so lets the update complete, only
// once its master pool is updated, while worker pools follow without
// holding the update. A Node that is not Ready is not waited for: the real
// pool would stall on it, and a lab cluster shared by scenarios may keep
// the Node of a host another scenario left dead. An empty kubelet (the
// release's payload was not read) asks nothing.
func rollOutNodes(ctx context.Context, c client.Client, kubelet string) ([]string, error) {
	if kubelet == "" {
		return nil, nil
	}
	list := &corev1.NodeList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list Nodes: %w", err)
	}
	var waiting []string
	for i := range list.Items {
		n := &list.Items[i]
		if n.Annotations[DesiredKubeletAnnotation] != kubelet {
			if err := askKubelet(ctx, c, n, kubelet); err != nil {
				return nil, err
			}
		}
		if controlPlane(n) && nodeReady(n) && n.Status.NodeInfo.KubeletVersion != kubelet {
			waiting = append(waiting, n.Name)
		}
	}
	sort.Strings(waiting)
	return waiting, nil
}

func askKubelet(ctx context.Context, c client.Client, n *corev1.Node, kubelet string) error {
	patch := client.MergeFrom(n.DeepCopy())
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[DesiredKubeletAnnotation] = kubelet
	if err := c.Patch(ctx, n, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("ask Node %s for kubelet %s: %w", n.Name, kubelet, err)
	}
	return nil
}

func controlPlane(n *corev1.Node) bool {
	for _, l := range controlPlaneLabels {
		if _, ok := n.Labels[l]; ok {
			return true
		}
	}
	return false
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeRolloutChanged passes Node events that matter to an update: a Node
// added or removed, or one whose asked-for or reported kubelet, or
// readiness, changed.
var nodeRolloutChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*corev1.Node)
		after, ok2 := e.ObjectNew.(*corev1.Node)
		if !ok1 || !ok2 {
			return true
		}
		return before.Annotations[DesiredKubeletAnnotation] != after.Annotations[DesiredKubeletAnnotation] ||
			before.Status.NodeInfo.KubeletVersion != after.Status.NodeInfo.KubeletVersion ||
			nodeReady(before) != nodeReady(after)
	},
}
