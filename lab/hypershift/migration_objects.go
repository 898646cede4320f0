package hypershift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/hypershift/apiproxy"
)

// The CAPI kinds a hosted cluster has, parents first, and the group
// versions the migration reads and writes them at (the stored one).
var (
	capiKinds            = []string{"Cluster", "MachineDeployment", "MachineSet", "Machine"}
	standardGroupVersion = schema.GroupVersion{Group: apiproxy.StandardGroup, Version: "v1beta2"}
	privateGroupVersion  = schema.GroupVersion{Group: apiproxy.PrivateGroup, Version: "v1beta2"}
)

func (m *migration) list(ctx context.Context, gv schema.GroupVersion, kind string) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(gv.WithKind(kind + "List"))
	if err := m.o.apiReader.List(ctx, l, client.InNamespace(m.cpns)); err != nil {
		return nil, fmt.Errorf("list %s %ss in %s: %w", gv.Group, kind, m.cpns, err)
	}
	return l.Items, nil
}

// pause pauses the standard Cluster: the platform's CAPI then leaves the
// cluster's objects alone, deletion included.
func (m *migration) pause(ctx context.Context) error {
	m.paused = true
	return m.setPaused(ctx, standardGroupVersion, true)
}

func (m *migration) unpause(ctx context.Context) error {
	return m.setPaused(ctx, privateGroupVersion, false)
}

func (m *migration) setPaused(ctx context.Context, gv schema.GroupVersion, paused bool) error {
	cl := &unstructured.Unstructured{}
	cl.SetGroupVersionKind(gv.WithKind("Cluster"))
	if err := m.o.apiReader.Get(ctx, capiClusterKey(m.hc), cl); err != nil {
		return fmt.Errorf("read %s Cluster %s: %w", gv.Group, capiClusterKey(m.hc), err)
	}
	patch := client.MergeFrom(cl.DeepCopy())
	if err := unstructured.SetNestedField(cl.Object, paused, "spec", "paused"); err != nil {
		return err
	}
	if err := m.o.client.Patch(ctx, cl, patch); err != nil {
		return fmt.Errorf("set %s Cluster %s paused=%t: %w", gv.Group, cl.GetName(), paused, err)
	}
	return nil
}

// copyObjects copies every standard CAPI object of the control-plane
// namespace into the private group, parents first: the same name, spec,
// labels, annotations and finalizers, owner references pointing at the
// parents' copies, then the status through the status subresource.
func (m *migration) copyObjects(ctx context.Context) error {
	m.counts = map[string]int{}
	for _, kind := range capiKinds {
		items, err := m.list(ctx, standardGroupVersion, kind)
		if err != nil {
			return err
		}
		m.counts[kind] = len(items)
		for i := range items {
			if err := m.copyObject(ctx, &items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *migration) copyObject(ctx context.Context, old *unstructured.Unstructured) error {
	raw, err := json.Marshal(old.Object)
	if err != nil {
		return err
	}
	// The proxy's rules: apiVersion, owner references and v1beta2
	// references' apiGroup of the mapped groups.
	if raw, err = apiproxy.Body(raw, apiproxy.ToPrivate); err != nil {
		return err
	}
	cp := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &cp.Object); err != nil {
		return err
	}
	status, hasStatus := cp.Object["status"]
	delete(cp.Object, "status")
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(cp.Object, "metadata", f)
	}
	refs, err := m.ownersOfCopy(cp.GetOwnerReferences())
	if err != nil {
		return fmt.Errorf("%s %s: %w", old.GetKind(), old.GetName(), err)
	}
	cp.SetOwnerReferences(refs)
	if err := m.o.client.Create(ctx, cp); err != nil {
		return fmt.Errorf("copy %s %s into %s: %w", old.GetKind(), old.GetName(), apiproxy.PrivateGroup, err)
	}
	m.copies = append(m.copies, cp)
	m.uids[old.GetUID()] = cp.GetUID()
	if !hasStatus {
		return nil
	}
	cp.Object["status"] = status
	if err := m.o.client.Status().Update(ctx, cp); err != nil {
		return fmt.Errorf("copy the status of %s %s: %w", old.GetKind(), old.GetName(), err)
	}
	return nil
}

// ownersOfCopy points a copy's owner references in the private group at
// the copies of their owners, which were made first.
func (m *migration) ownersOfCopy(refs []metav1.OwnerReference) ([]metav1.OwnerReference, error) {
	for i, ref := range refs {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if _, private := apiproxy.StandardGroupOf(gv.Group); err != nil || !private {
			continue
		}
		uid, ok := m.uids[ref.UID]
		if !ok {
			return nil, fmt.Errorf("owner %s %s was not copied", ref.Kind, ref.Name)
		}
		refs[i].UID = uid
	}
	return refs, nil
}

// ownedKinds are the kinds whose owner references may name CAPI objects:
// the agent provider's and the Secrets CAPI or HyperShift own by them.
var ownedKinds = []schema.GroupVersionKind{
	{Group: "capi-provider.agent-install.openshift.io", Version: "v1beta1", Kind: "AgentMachine"},
	{Group: "capi-provider.agent-install.openshift.io", Version: "v1beta1", Kind: "AgentCluster"},
	{Group: "capi-provider.agent-install.openshift.io", Version: "v1beta1", Kind: "AgentMachineTemplate"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ConfigMap"},
}

type ownedObject struct {
	gvk  schema.GroupVersionKind
	key  client.ObjectKey
	refs []metav1.OwnerReference
}

// rewriteOwners points every owner reference to a standard CAPI object at
// its private copy, before anything standard is deleted: the hub's
// garbage collector would otherwise find the owner gone and delete, with
// an AgentMachine, the binding of a live node.
func (m *migration) rewriteOwners(ctx context.Context) error {
	for _, gvk := range ownedKinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := m.o.apiReader.List(ctx, l, client.InNamespace(m.cpns)); err != nil {
			return fmt.Errorf("list %ss in %s: %w", gvk.Kind, m.cpns, err)
		}
		for i := range l.Items {
			if err := m.rewriteOwnersOf(ctx, gvk, &l.Items[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *migration) rewriteOwnersOf(ctx context.Context, gvk schema.GroupVersionKind, obj *unstructured.Unstructured) error {
	before := obj.GetOwnerReferences()
	after := make([]metav1.OwnerReference, len(before))
	changed := false
	for i, ref := range before {
		after[i] = ref
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue
		}
		private, mapped := apiproxy.PrivateGroupOf(gv.Group)
		uid, copied := m.uids[ref.UID]
		if !mapped || !copied {
			continue
		}
		after[i].APIVersion, after[i].UID, changed = private+"/"+gv.Version, uid, true
	}
	if !changed {
		return nil
	}
	if err := m.setOwners(ctx, obj, after); err != nil {
		return err
	}
	m.owned = append(m.owned, ownedObject{gvk: gvk, key: client.ObjectKeyFromObject(obj), refs: before})
	return nil
}

// setOwners replaces an object's owner references, guarded by its
// resourceVersion.
func (m *migration) setOwners(ctx context.Context, obj *unstructured.Unstructured, refs []metav1.OwnerReference) error {
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	obj.SetOwnerReferences(refs)
	if err := m.o.client.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("owner references of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// restoreOwners puts back the owner references rewriteOwners changed.
func (m *migration) restoreOwners(ctx context.Context) error {
	var errs []error
	for _, o := range m.owned {
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(o.gvk)
		if err := m.o.apiReader.Get(ctx, o.key, obj); err != nil {
			errs = append(errs, client.IgnoreNotFound(err))
			continue
		}
		errs = append(errs, m.setOwners(ctx, obj, o.refs))
	}
	m.owned = nil
	return errors.Join(errs...)
}

// deleteCopies removes the private copies, children first, their
// finalizers stripped: nothing of theirs may be torn down.
func (m *migration) deleteCopies(ctx context.Context) error {
	var errs []error
	for i := len(m.copies) - 1; i >= 0; i-- {
		errs = append(errs, m.forceDelete(ctx, m.copies[i]))
	}
	m.copies = nil
	return errors.Join(errs...)
}

// deleteOld removes the standard objects, children first. Their Cluster
// is still paused, so the platform's CAPI would return before tearing
// anything down; their finalizers are stripped, as nothing is left to
// tear down.
func (m *migration) deleteOld(ctx context.Context) error {
	for i := len(capiKinds) - 1; i >= 0; i-- {
		items, err := m.list(ctx, standardGroupVersion, capiKinds[i])
		if err != nil {
			return err
		}
		for j := range items {
			if err := m.forceDelete(ctx, &items[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *migration) forceDelete(ctx context.Context, obj *unstructured.Unstructured) error {
	fresh := &unstructured.Unstructured{}
	fresh.SetGroupVersionKind(obj.GroupVersionKind())
	if err := m.o.apiReader.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		return client.IgnoreNotFound(err)
	}
	if len(fresh.GetFinalizers()) > 0 {
		patch := client.MergeFrom(fresh.DeepCopy())
		fresh.SetFinalizers(nil)
		if err := m.o.client.Patch(ctx, fresh, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("release %s %s: %w", fresh.GetKind(), fresh.GetName(), err)
		}
	}
	if err := m.o.client.Delete(ctx, fresh, client.Preconditions{UID: ptr.To(fresh.GetUID())}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s: %w", fresh.GetKind(), fresh.GetName(), err)
	}
	return nil
}

// healthCheck waits, within healthTimeout, for the private objects to be
// healthy for healthWindow without a break: the Cluster provisioned (or
// provisioning) with its infrastructure, as many Machines, MachineSets and
// MachineDeployments as before, every Machine Running, Provisioning or
// Pending, the components running, and a read through the proxy working.
func (m *migration) healthCheck(ctx context.Context) error {
	timing := m.o.migrationTiming
	ctx, cancel := context.WithTimeout(ctx, timing.timeout)
	defer cancel()
	proxied, err := client.New(m.runtime.privateCAPI.ProxyConfig(), client.Options{})
	if err != nil {
		return err
	}
	var since time.Time
	last := errors.New("never checked")
	for {
		if last = m.healthy(ctx, proxied); last != nil {
			since = time.Time{}
		} else if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) >= timing.window {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not healthy for %s within %s: %w", timing.window, timing.timeout, last)
		case <-time.After(healthPoll):
		}
	}
}

func (m *migration) healthy(ctx context.Context, proxied client.Reader) error {
	if !m.runtime.capiComponentsRunning() {
		return errors.New("a CAPI component stopped")
	}
	cl := &unstructured.Unstructured{}
	cl.SetGroupVersionKind(standardGroupVersion.WithKind("Cluster"))
	if err := proxied.Get(ctx, capiClusterKey(m.hc), cl); err != nil {
		return fmt.Errorf("read the Cluster through the proxy: %w", err)
	}
	phase, _, _ := unstructured.NestedString(cl.Object, "status", "phase")
	infra, _, _ := unstructured.NestedBool(cl.Object, "status", "initialization", "infrastructureProvisioned")
	if (phase != "Provisioned" && phase != "Provisioning") || !infra {
		return fmt.Errorf("Cluster phase %q, infrastructure provisioned %t", phase, infra)
	}
	for _, kind := range capiKinds[1:] {
		items, err := m.list(ctx, privateGroupVersion, kind)
		if err != nil {
			return err
		}
		if len(items) != m.counts[kind] {
			return fmt.Errorf("%d private %ss, %d before", len(items), kind, m.counts[kind])
		}
		if kind != "Machine" {
			continue
		}
		for _, it := range items {
			switch p, _, _ := unstructured.NestedString(it.Object, "status", "phase"); p {
			case "Running", "Provisioning", "Pending":
			default:
				return fmt.Errorf("Machine %s is %q", it.GetName(), p)
			}
		}
	}
	return nil
}
