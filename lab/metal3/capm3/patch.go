package capm3

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patcher writes what a reconcile changed in an object, metadata and spec
// first and then status, each as a merge patch against the object as it
// was read, so concurrent writers (CAPI core sets owner references and
// labels) are not overwritten.
type patcher struct {
	c      client.Client
	before client.Object
}

func newPatcher(c client.Client, obj client.Object) *patcher {
	return &patcher{c: c, before: obj.DeepCopyObject().(client.Object)}
}

// patch writes obj's changes; status holds the status field of both, so
// it is compared separately.
func (p *patcher) patch(ctx context.Context, obj client.Object, status func(client.Object) any) error {
	// The first patch's answer overwrites obj, status included, with what
	// the server holds; the status to write is kept aside.
	desired := obj.DeepCopyObject().(client.Object)
	if err := client.IgnoreNotFound(p.c.Patch(ctx, obj, client.MergeFrom(p.before))); err != nil {
		return fmt.Errorf("patch %T %s: %w", obj, obj.GetName(), err)
	}
	if desired.GetDeletionTimestamp() != nil && len(desired.GetFinalizers()) == 0 {
		return nil // gone once the last finalizer left
	}
	if equality.Semantic.DeepEqual(status(p.before), status(desired)) {
		return nil
	}
	err := p.c.Status().Patch(ctx, desired, client.MergeFrom(p.before))
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("patch the status of %T %s: %w", obj, obj.GetName(), client.IgnoreNotFound(err))
	}
	return nil
}
