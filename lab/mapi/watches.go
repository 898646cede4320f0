package mapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// NodeMachineAnnotation on a Node names its Machine, <namespace>/<name>
// (MAO's nodelink controller writes it).
const NodeMachineAnnotation = "machine.openshift.io/machine"

// hostAndNodeWatches is the manager MAO's Machine controllers are added
// to. As the upstream bare-metal machine controller's manager does, it
// has each controller added through it also watch BareMetalHosts (an
// event requeues the Machine that consumes the host) and Nodes (the
// Machine the Node's annotation names). Without them the controller sees a
// host finish provisioning only at its next periodic requeue, up to half
// a minute later than upstream.
type hostAndNodeWatches struct {
	manager.Manager
	// client is the machine controller binary's (machineControllerClient).
	client client.Client
}

// GetClient is the machine controller's client.
func (m hostAndNodeWatches) GetClient() client.Client { return m.client }

// Add adds r, a controller, and its two extra watches.
func (m hostAndNodeWatches) Add(r manager.Runnable) error {
	if err := m.Manager.Add(r); err != nil {
		return err
	}
	c, ok := r.(controller.Controller)
	if !ok {
		return fmt.Errorf("watch hosts and nodes: %T is not a controller", r)
	}
	return errors.Join(
		c.Watch(source.Kind(m.GetCache(), &bmov1alpha1.BareMetalHost{}, handler.TypedEnqueueRequestsFromMapFunc(consumerMachine))),
		c.Watch(source.Kind(m.GetCache(), &corev1.Node{}, handler.TypedEnqueueRequestsFromMapFunc(annotatedMachine))),
	)
}

// consumerMachine is the MAPI Machine a host's consumerRef names.
func consumerMachine(_ context.Context, h *bmov1alpha1.BareMetalHost) []reconcile.Request {
	ref := h.Spec.ConsumerRef
	if ref == nil || ref.Kind != machineKind || ref.APIVersion != machineAPIVersion {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}}}
}

// annotatedMachine is the Machine a Node's annotation names.
func annotatedMachine(_ context.Context, n *corev1.Node) []reconcile.Request {
	ns, name, ok := strings.Cut(n.Annotations[NodeMachineAnnotation], "/")
	if !ok || ns == "" || name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
