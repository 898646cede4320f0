package framework

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paritylab/paritylab/results"
)

// What the recorder reads of machines, sets and hosts beyond phase and
// conditions, from the paths both machine APIs and metal3 share.
var (
	providerIDPath = []string{"spec", "providerID"}
	nodeRefPath    = []string{"status", "nodeRef", "name"}
	desiredPath    = []string{"spec", "replicas"}
	readyPath      = []string{"status", "readyReplicas"}
	availablePath  = []string{"status", "availableReplicas"}
	secretsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// observeMachineFields keeps the end state of a machine's providerID and
// nodeRef, and appends a set's replica counts when they changed.
func observeMachineFields(rec *results.Object, u *unstructured.Unstructured, now time.Time) {
	if v, ok, _ := unstructured.NestedString(u.Object, providerIDPath...); ok {
		rec.ProviderID = v
	}
	if v, ok, _ := unstructured.NestedString(u.Object, nodeRefPath...); ok {
		rec.NodeRef = v
	}
	desired, ok, _ := unstructured.NestedInt64(u.Object, desiredPath...)
	if !ok {
		return
	}
	ready, _, _ := unstructured.NestedInt64(u.Object, readyPath...)
	available, _, _ := unstructured.NestedInt64(u.Object, availablePath...)
	s := results.ReplicaSample{At: now, Desired: int(desired), Ready: int(ready), Available: int(available)}
	if n := len(rec.Replicas); n > 0 {
		last := rec.Replicas[n-1]
		if last.Desired == s.Desired && last.Ready == s.Ready && last.Available == s.Available {
			return
		}
	}
	rec.Replicas = append(rec.Replicas, s)
}

// hostImage is what a BareMetalHost's spec says to provision.
type hostImage struct {
	url, checksum, format string
	userData              string // namespace/name of the user data Secret
	customDeploy          string // spec.customDeploy.method
}

func hostImageOf(u *unstructured.Unstructured) (hostImage, bool) {
	url, _, _ := unstructured.NestedString(u.Object, "spec", "image", "url")
	method, _, _ := unstructured.NestedString(u.Object, "spec", "customDeploy", "method")
	if url == "" && method == "" {
		return hostImage{}, false
	}
	img := hostImage{url: url, customDeploy: method}
	img.checksum, _, _ = unstructured.NestedString(u.Object, "spec", "image", "checksum")
	img.format, _, _ = unstructured.NestedString(u.Object, "spec", "image", "format")
	if name, ok, _ := unstructured.NestedString(u.Object, "spec", "userData", "name"); ok && name != "" {
		ns, _, _ := unstructured.NestedString(u.Object, "spec", "userData", "namespace")
		if ns == "" {
			ns = u.GetNamespace()
		}
		img.userData = ns + "/" + name
	}
	return img, true
}

// identity identifies the image: its checksum when the spec gives one,
// else a digest of its URL (the URL itself carries ports and IDs of the
// run); empty when there is no image (a custom deploy).
func (i hostImage) identity() string {
	if i.url == "" {
		return ""
	}
	if i.checksum != "" {
		return i.checksum
	}
	sum := sha256.Sum256([]byte(i.url))
	return "url-sha256:" + hex.EncodeToString(sum[:])
}

// provisioning tracks the image a host's spec names, so that each new one
// becomes a results.Provisioning with the digest of its user data. The
// user data itself (it carries credentials) is never kept.
type provisioning struct {
	dyn  dynamic.Interface
	last map[string]hostImage // by object UID
}

// remember takes the image a host's spec names as known, without
// recording it as a provisioning.
func (p *provisioning) remember(u *unstructured.Unstructured) {
	if img, ok := hostImageOf(u); ok {
		p.last[string(u.GetUID())] = img
	}
}

func (p *provisioning) observe(ctx context.Context, rec *results.Object, u *unstructured.Unstructured, now time.Time) {
	img, ok := hostImageOf(u)
	if !ok {
		delete(p.last, string(u.GetUID()))
		return
	}
	if prev, seen := p.last[string(u.GetUID())]; seen && prev == img {
		return
	}
	p.last[string(u.GetUID())] = img
	rec.Provisioning = append(rec.Provisioning, results.Provisioning{At: now, Image: img.identity(),
		Format: img.format, CustomDeploy: img.customDeploy, UserData: p.userDataDigest(ctx, img.userData)})
}

// userDataDigest is sha256:<hex> over the Secret's data (keys in order),
// or "unreadable: <why>" when the Secret cannot be read.
func (p *provisioning) userDataDigest(ctx context.Context, ref string) string {
	if ref == "" || p.dyn == nil {
		return ""
	}
	ns, name := splitRef(ref)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	u, err := p.dyn.Resource(secretsGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("unreadable: %v", shortErr(err))
	}
	data, _, _ := unstructured.NestedStringMap(u.Object, "data")
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%s\n", k, data[k])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func splitRef(ref string) (string, string) {
	for i := range ref {
		if ref[i] == '/' {
			return ref[:i], ref[i+1:]
		}
	}
	return "", ref
}

// shortErr keeps an error's reason without the object names it repeats.
func shortErr(err error) string {
	type statusErr interface{ Status() metav1.Status }
	if s, ok := err.(statusErr); ok {
		return string(s.Status().Reason)
	}
	return "error"
}
