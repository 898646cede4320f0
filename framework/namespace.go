package framework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateNamespace makes a namespace named <prefix>-<random> for one spec,
// so that specs never see each other's objects.
func CreateNamespace(ctx context.Context, c client.Client, prefix string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-",
		Labels: map[string]string{"paritylab.io/spec-namespace": prefix}}}
	if err := c.Create(ctx, ns); err != nil {
		return nil, fmt.Errorf("create namespace %s-*: %w", prefix, err)
	}
	return ns, nil
}

// DeleteNamespace deletes a spec's namespace; a namespace already gone is
// no error. It does not wait: finalizers of the objects in it (hosts
// deprovisioning) run on their own.
func DeleteNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	return nil
}
