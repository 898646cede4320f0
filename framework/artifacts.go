package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// dumpedGroups are the API groups whose objects tell what the flows did:
// Cluster API and its providers (any *.cluster.x-k8s.io), the machine API,
// metal3, hive and assisted, OpenShift config. Secrets are never dumped:
// they hold pull secrets, BMC passwords and kubeconfigs.
var dumpedGroups = []string{
	"cluster.x-k8s.io", "machine.openshift.io", "metal3.io", "agent-install.openshift.io",
	"hive.openshift.io", "extensions.hive.openshift.io", "config.openshift.io",
}

// dumpedCore are the core resources dumped besides those groups.
var dumpedCore = map[string]bool{"nodes": true, "events": true, "namespaces": true}

// DumpCluster is a cluster whose objects Dump writes.
type DumpCluster struct {
	// Name is the cluster's directory under DumpInput.Dir.
	Name       string
	RESTConfig *rest.Config
}

// DumpInput configures Dump.
type DumpInput struct {
	// Dir receives <cluster>/<group>/<kind>/<namespace>/<name>.yaml and
	// serial/<host>.log.
	Dir      string
	Clusters []DumpCluster
	// SerialLogs are the hosts' serial console logs, by host name.
	SerialLogs map[string]string
}

// Dump writes every object of the dumped groups in each cluster as YAML
// (managed fields stripped) and copies the hosts' serial logs: what a
// person needs to see why a spec failed. It carries on past errors and
// returns them all.
func Dump(ctx context.Context, in DumpInput) error {
	var errs []error
	for _, c := range in.Clusters {
		if err := dumpCluster(ctx, filepath.Join(in.Dir, c.Name), c.RESTConfig); err != nil {
			errs = append(errs, fmt.Errorf("dump %s: %w", c.Name, err))
		}
	}
	for host, path := range in.SerialLogs {
		if err := copyFile(path, filepath.Join(in.Dir, "serial", host+".log")); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("copy serial log of %s: %w", host, err))
		}
	}
	return errors.Join(errs...)
}

func dumpCluster(ctx context.Context, dir string, cfg *rest.Config) error {
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// A group whose discovery fails (an aggregated API gone) must not
	// hide the others: use what discovery returned.
	lists, discErr := disc.ServerPreferredResources()
	var errs []error
	if discErr != nil {
		errs = append(errs, discErr)
	}
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range list.APIResources {
			if !dumped(gv.Group, res) {
				continue
			}
			errs = append(errs, dumpResource(ctx, dyn, dir, gv.WithResource(res.Name), res.Kind))
		}
	}
	return errors.Join(errs...)
}

func dumped(group string, res metav1.APIResource) bool {
	if strings.Contains(res.Name, "/") || !hasVerb(res.Verbs, "list") {
		return false
	}
	if group == "" {
		return dumpedCore[res.Name]
	}
	for _, g := range dumpedGroups {
		if group == g || strings.HasSuffix(group, "."+g) {
			return true
		}
	}
	return false
}

func hasVerb(verbs []string, v string) bool {
	for _, have := range verbs {
		if have == v {
			return true
		}
	}
	return false
}

func dumpResource(ctx context.Context, dyn dynamic.Interface, dir string, gvr schema.GroupVersionResource, kind string) error {
	list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list %s: %w", gvr, err)
	}
	group := gvr.Group
	if group == "" {
		group = "core"
	}
	var errs []error
	for i := range list.Items {
		errs = append(errs, writeObject(filepath.Join(dir, group, kind), &list.Items[i]))
	}
	return errors.Join(errs...)
}

func writeObject(dir string, u *unstructured.Unstructured) error {
	u.SetManagedFields(nil)
	raw, err := yaml.Marshal(u.Object)
	if err != nil {
		return fmt.Errorf("encode %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	ns := u.GetNamespace()
	if ns == "" {
		ns = "_cluster"
	}
	path := filepath.Join(dir, ns, u.GetName()+".yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o640)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
