package metal3

import (
	"context"
	"fmt"
	"sync"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/paritylab/paritylab/lab/images"
)

// imageSource opens the image store on first use, unless one was given.
type imageSource struct {
	once  sync.Once
	store *images.Store
	err   error
}

func (i *imageSource) get() (*images.Store, error) {
	i.once.Do(func() {
		if i.store == nil {
			i.store, i.err = images.Open(images.StoreOptions{})
		}
	})
	if i.err != nil {
		return nil, fmt.Errorf("open the image store for config drives: %w", i.err)
	}
	return i.store, nil
}

// configDriveURL builds the host's config-2 drive and serves it.
func (r *hostReconciler) configDriveURL(ctx context.Context, s *scope) (string, error) {
	cd, err := r.configDrive(ctx, s)
	if err != nil {
		return "", err
	}
	store, err := r.images.get()
	if err != nil {
		return "", err
	}
	iso, err := store.ConfigDriveISO(cd)
	if err != nil {
		return "", fmt.Errorf("build the config drive: %w", err)
	}
	return r.media.publish(s.host.UID, iso)
}

// configDrive is what Ironic puts on a config drive for BMO: the user
// data Secret (key userData, else value) and metadata (the host's names,
// overridden by spec.metaData's Secret, key metaData).
func (r *hostReconciler) configDrive(ctx context.Context, s *scope) (images.ConfigDrive, error) {
	h := s.host
	cd := images.ConfigDrive{MetaData: defaultMetaData(h)}
	if ref := h.Spec.UserData; ref != nil && ref.Name != "" {
		data, err := r.secretData(ctx, h, ref, "userData", "value")
		if err != nil {
			return cd, err
		}
		cd.UserData = data
	}
	if ref := h.Spec.MetaData; ref != nil && ref.Name != "" {
		if err := r.mergeMetaData(ctx, h, ref, cd.MetaData); err != nil {
			return cd, err
		}
	}
	if h.Spec.NetworkData != nil && h.Spec.NetworkData.Name != "" {
		r.event(h, corev1.EventTypeWarning, "NetworkDataIgnored", "the lab's config drives carry user data and metadata only, not network data")
	}
	return cd, nil
}

// defaultMetaData is what BMO's Ironic provisioner puts on every config
// drive: uuid is the BareMetalHost's UID (CAPM3 finds a host's Node by it,
// as the label metal3.io/uuid the bootstrap data gives the kubelet).
func defaultMetaData(h *bmov1alpha1.BareMetalHost) map[string]string {
	return map[string]string{
		"uuid": string(h.UID), "name": h.Name,
		"metal3-namespace": h.Namespace, "metal3-name": h.Name,
		"local-hostname": h.Name, "local_hostname": h.Name,
	}
}

func (r *hostReconciler) mergeMetaData(ctx context.Context, h *bmov1alpha1.BareMetalHost, ref *corev1.SecretReference, into map[string]string) error {
	raw, err := r.secretData(ctx, h, ref, "metaData", "value")
	if err != nil {
		return err
	}
	var extra map[string]any
	if err := yaml.Unmarshal(raw, &extra); err != nil {
		return fmt.Errorf("metadata Secret %s: not a YAML map: %w", ref.Name, err)
	}
	for k, v := range extra {
		into[k] = fmt.Sprint(v)
	}
	return nil
}

// secretData reads the first of keys present in a Secret the host names.
func (r *hostReconciler) secretData(ctx context.Context, h *bmov1alpha1.BareMetalHost, ref *corev1.SecretReference, keys ...string) ([]byte, error) {
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	if key.Namespace == "" {
		key.Namespace = h.Namespace
	}
	secret := &corev1.Secret{}
	if err := r.reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("secret %s does not exist", key)
		}
		return nil, fmt.Errorf("read secret %s: %w", key, err)
	}
	for _, k := range keys {
		if v, ok := secret.Data[k]; ok {
			return v, nil
		}
	}
	return nil, fmt.Errorf("secret %s has no key %q", key, keys[0])
}
