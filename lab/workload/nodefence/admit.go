package nodefence

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// admit answers the API server for one update of the fenced Node. Every
// answer allows the write; the fence only chooses when.
func (f *Fence) admit(ctx context.Context, req admission.Request) admission.Response {
	allowed := admission.Allowed("")
	if req.Operation != admissionv1.Update || req.Name != f.opts.Node {
		return allowed
	}
	if ptr.Deref(req.DryRun, false) {
		f.mu.Lock()
		f.dryRuns++
		f.mu.Unlock()
		return allowed
	}
	old, updated, err := metadataOf(req)
	if err != nil {
		f.fail(err)
		return allowed
	}
	_, hadMarker := old.Labels[f.opts.Marker]
	_, hasMarker := updated.Labels[f.opts.Marker]
	if hadMarker {
		// The Node as the scenario marked it, not recreated yet.
		return allowed
	}
	n := f.state(old.UID)
	switch {
	case n == nil:
		// A later Node object: the fence orders the first recreation's
		// writes only, and a Node whose restore was lost never gets the
		// marker back.
		return allowed
	case hasMarker:
		f.restoring(ctx, n)
		return allowed
	case old.Annotations[WriteAnnotation] != updated.Annotations[WriteAnnotation]:
		// The fence's own write.
		return allowed
	default:
		f.hold(ctx, n, req.UserInfo.Username)
		return allowed
	}
}

// metadataOf decodes the metadata of the Node before and after the write.
func metadataOf(req admission.Request) (old, updated metav1.PartialObjectMetadata, err error) {
	if err := json.Unmarshal(req.OldObject.Raw, &old); err != nil {
		return old, updated, fmt.Errorf("decode the node before update %s: %w", req.UID, err)
	}
	if err := json.Unmarshal(req.Object.Raw, &updated); err != nil {
		return old, updated, fmt.Errorf("decode the node of update %s: %w", req.UID, err)
	}
	return old, updated, nil
}

// state is the fence's state for the first Node object it sees without
// the marker, nil for any other.
func (f *Fence) state(uid types.UID) *recreated {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.node == nil {
		f.node = &recreated{uid: uid, release: make(chan struct{})}
	}
	if f.node.uid != uid {
		return nil
	}
	return f.node
}

// restoring is the write that gives the marker back. The first one of a
// Node object releases the writes held on it: after it landed
// (RestoreFirst), or after the fence's own write (WriteBeforeRestore), so
// that it fails as a write read before another one does.
func (f *Fence) restoring(ctx context.Context, n *recreated) {
	f.mu.Lock()
	first := !n.restored
	n.restored = true
	f.report.Restores++
	f.mu.Unlock()
	if !first {
		return
	}
	if f.opts.Mode == WriteBeforeRestore {
		f.writeBeforeRestore(ctx)
		n.open()
		return
	}
	go f.releaseWhenRestored(n)
}

// writeBeforeRestore adds WriteAnnotation to the Node and takes it away
// again: two writes that change the Node's resourceVersion and leave
// nothing behind.
func (f *Fence) writeBeforeRestore(ctx context.Context) {
	for _, patch := range []string{
		fmt.Sprintf(`{"metadata":{"annotations":{%q:"written-before-restore"}}}`, WriteAnnotation),
		fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, WriteAnnotation),
	} {
		if _, err := f.client.CoreV1().Nodes().Patch(ctx, f.opts.Node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			f.fail(fmt.Errorf("write node %s before its restore: %w", f.opts.Node, err))
			return
		}
	}
	f.mu.Lock()
	f.report.WrittenBeforeRestore++
	f.mu.Unlock()
	f.opts.Logger.Info("Node fence wrote the node before its restore", "node", f.opts.Node)
}

// releaseWhenRestored lets the held writes go once the Node shows the
// marker, or after landWait when the restoring write failed.
func (f *Fence) releaseWhenRestored(n *recreated) {
	defer n.open()
	ctx, cancel := context.WithTimeout(context.Background(), landWait)
	defer cancel()
	for {
		node, err := f.client.CoreV1().Nodes().Get(ctx, f.opts.Node, metav1.GetOptions{})
		if err == nil {
			if _, ok := node.Labels[f.opts.Marker]; ok {
				f.opts.Logger.Info("Node fence: the restore landed first", "node", f.opts.Node)
				return
			}
		}
		select {
		case <-ctx.Done():
			f.fail(fmt.Errorf("node %s did not show label %s within %s of its restoring write", f.opts.Node, f.opts.Marker, landWait))
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// hold keeps a write to a recreated Node waiting until its restore,
// MaxHold or the API server giving up, whichever comes first.
func (f *Fence) hold(ctx context.Context, n *recreated, user string) {
	select {
	case <-n.release:
		return // restored already
	default:
	}
	f.mu.Lock()
	f.report.Held++
	f.mu.Unlock()
	f.opts.Logger.V(1).Info("Node fence holds a write", "node", f.opts.Node, "user", user)
	timer := time.NewTimer(f.opts.MaxHold)
	defer timer.Stop()
	select {
	case <-n.release:
	case <-timer.C:
		f.mu.Lock()
		f.report.HoldsRunOut++
		f.mu.Unlock()
		f.opts.Logger.Info("Node fence let a write go at MaxHold, before any restore", "node", f.opts.Node, "user", user)
	case <-ctx.Done():
	}
}

func (f *Fence) fail(err error) {
	f.opts.Logger.Error(err, "Node fence")
	f.mu.Lock()
	f.report.Errors = append(f.report.Errors, err.Error())
	f.mu.Unlock()
}
