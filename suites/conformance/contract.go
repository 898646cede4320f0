package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/contract"
)

// ContractVersion is the Cluster API contract checked.
const ContractVersion = "v1beta2"

// violation is a broken rule of the v1beta2 contract: what was looked at,
// the rule, what was found.
func violation(obj, rule, found string) error {
	return violationOf(ContractVersion, obj, rule, found)
}

// violationOf is a broken rule of a given contract: infrastructure
// providers are checked against the contract their CRDs declare.
func violationOf(contract, obj, rule, found string) error {
	return fmt.Errorf("%s: %s (contract %s); %s", obj, rule, contract, found)
}

func describe(u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// CheckCRD checks the CRD of a provider kind: named as Cluster API computes
// it, namespaced, with a status subresource and the contract label naming
// the served version gvk is.
func CheckCRD(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd, _, err := checkCRD(ctx, c, gvk, true, []string{ContractVersion})
	return crd, err
}

// checkCRD checks a CRD against whichever of contracts (newest first) its
// labels declare for gvk's version, and returns that contract.
func checkCRD(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind, status bool, contracts []string) (*apiextensionsv1.CustomResourceDefinition, string, error) {
	name := contract.CalculateCRDName(gvk.Group, gvk.Kind)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
		return nil, "", violationOf(contracts[0], "CRD "+name, "a provider kind's CRD is named <plural>.<group>", fmt.Sprintf("get: %v", err))
	}
	declared, err := declaredContract(crd, gvk.Version, contracts)
	errs := []error{err}
	if declared == "" {
		declared = contracts[0]
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		errs = append(errs, violationOf(declared, "CRD "+name, "provider resources are namespaced", "scope is "+string(crd.Spec.Scope)))
	}
	v := crdVersion(crd, gvk.Version)
	switch {
	case v == nil || !v.Served:
		errs = append(errs, violationOf(declared, "CRD "+name, "the contract's API version is served", gvk.Version+" is not served"))
	case status && (v.Subresources == nil || v.Subresources.Status == nil):
		errs = append(errs, violationOf(declared, "CRD "+name, "status is a subresource", "version "+gvk.Version+" has no status subresource"))
	}
	return crd, declared, errors.Join(errs...)
}

// declaredContract returns the newest of contracts whose label
// (cluster.x-k8s.io/<contract>: <version>_<version>...) lists version.
func declaredContract(crd *apiextensionsv1.CustomResourceDefinition, version string, contracts []string) (string, error) {
	var labelled []string
	for _, contract := range contracts {
		value := crd.Labels[contractLabelOf(contract)]
		if value == "" {
			continue
		}
		if contains(strings.Split(value, "_"), version) {
			return contract, nil
		}
		labelled = append(labelled, contractLabelOf(contract)+"="+value)
	}
	if len(labelled) == 0 {
		var keys []string
		for _, contract := range contracts {
			keys = append(keys, contractLabelOf(contract))
		}
		return "", violationOf(contracts[0], "CRD "+crd.Name, "the CRD carries the label "+strings.Join(keys, " or ")+" listing the API versions implementing the contract", "the label is missing")
	}
	return "", violationOf(contracts[0], "CRD "+crd.Name, "the contract label lists the version in use", fmt.Sprintf("%s does not list %s", strings.Join(labelled, ", "), version))
}

func contractLabelOf(contract string) string { return "cluster.x-k8s.io/" + contract }

// CheckTemplateCRD checks that <Kind>Template exists, like the kind, with
// spec.template.spec (templates have no status).
func CheckTemplateCRD(ctx context.Context, c client.Reader, gvk schema.GroupVersionKind) error {
	_, err := checkTemplateCRD(ctx, c, gvk.GroupVersion().WithKind(gvk.Kind+"Template"), []string{ContractVersion})
	return err
}

// checkTemplateCRD checks a template kind's CRD and returns the contract
// it declares.
func checkTemplateCRD(ctx context.Context, c client.Reader, tgvk schema.GroupVersionKind, contracts []string) (string, error) {
	crd, declared, err := checkCRD(ctx, c, tgvk, false, contracts)
	if crd == nil {
		return "", err
	}
	v := crdVersion(crd, tgvk.Version)
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return declared, errors.Join(err, violationOf(declared, "CRD "+crd.Name, "templates have spec.template.spec", "no schema"))
	}
	template, ok := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["template"]
	if _, spec := template.Properties["spec"]; !ok || !spec {
		err = errors.Join(err, violationOf(declared, "CRD "+crd.Name, "templates have spec.template.spec (the spec of the stamped objects)", "it is not in the schema"))
	}
	return declared, err
}

// CheckScaleSubresource checks the control plane's /scale subresource
// paths.
func CheckScaleSubresource(crd *apiextensionsv1.CustomResourceDefinition, version string) error {
	v := crdVersion(crd, version)
	if v == nil || v.Subresources == nil || v.Subresources.Scale == nil {
		return violation("CRD "+crd.Name, "a control plane with replicas has a scale subresource", "there is none")
	}
	s := v.Subresources.Scale
	got := fmt.Sprintf("specReplicasPath=%s statusReplicasPath=%s labelSelectorPath=%s", s.SpecReplicasPath, s.StatusReplicasPath, deref(s.LabelSelectorPath))
	want := "specReplicasPath=.spec.replicas statusReplicasPath=.status.replicas labelSelectorPath=.status.selector"
	if got != want {
		return violation("CRD "+crd.Name, "the scale subresource maps "+want, "it maps "+got)
	}
	return nil
}

// CheckConditions checks status.conditions (when present) have the shape
// Cluster API reads and status.observedGeneration does not run ahead of
// metadata.generation.
func CheckConditions(u *unstructured.Unstructured) error {
	conds, err := conditions.UnstructuredGetAll(u)
	if err != nil {
		return violation(describe(u), "status.conditions are metav1.Conditions", err.Error())
	}
	var errs []error
	seen := map[string]bool{}
	for _, c := range conds {
		if c.Type == "" || seen[c.Type] {
			errs = append(errs, violation(describe(u), "conditions have a unique type", fmt.Sprintf("type %q repeats or is empty", c.Type)))
		}
		seen[c.Type] = true
		switch c.Status {
		case metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown:
		default:
			errs = append(errs, violation(describe(u), "condition status is True, False or Unknown", fmt.Sprintf("%s is %q", c.Type, c.Status)))
		}
		if c.ObservedGeneration > u.GetGeneration() {
			errs = append(errs, violation(describe(u), "a condition's observedGeneration is not ahead of the object", fmt.Sprintf("%s observed %d, generation %d", c.Type, c.ObservedGeneration, u.GetGeneration())))
		}
	}
	if og, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration"); ok && og > u.GetGeneration() {
		errs = append(errs, violation(describe(u), "status.observedGeneration is not ahead of metadata.generation", fmt.Sprintf("%d > %d", og, u.GetGeneration())))
	}
	return errors.Join(errs...)
}

// CheckPaused checks the Paused condition a paused object SHOULD report.
func CheckPaused(u *unstructured.Unstructured, paused bool) error {
	c, err := conditions.UnstructuredGet(u, clusterv1.PausedCondition)
	if err != nil || c == nil {
		return violation(describe(u), "a provider surfaces pausing in the Paused condition", "there is no Paused condition")
	}
	want := metav1.ConditionFalse
	if paused {
		want = metav1.ConditionTrue
	}
	if c.Status != want {
		return violation(describe(u), fmt.Sprintf("Paused is %s while paused is %t", want, paused), fmt.Sprintf("it is %s (%s: %s)", c.Status, c.Reason, c.Message))
	}
	return nil
}

// CheckNotInitialized checks a bootstrap config does not claim its data
// before it may have it.
func CheckNotInitialized(u *unstructured.Unstructured, field ...string) error {
	if v, _, _ := unstructured.NestedBool(u.Object, field...); v {
		return violation(describe(u), "."+strings.Join(field, ".")+" is not true before the provider could do its work", "it is true")
	}
	return nil
}

// CheckBootstrapData checks an initialized bootstrap config: the v1beta2
// initialization flag, the data Secret's name, and the Secret itself (in the
// config's namespace, named as status.dataSecretName says, labelled with
// the cluster name, controlled by the config, holding the data in "value").
func CheckBootstrapData(ctx context.Context, c client.Reader, config *unstructured.Unstructured, clusterName string) error {
	created, found, err := unstructured.NestedBool(config.Object, "status", "initialization", "dataSecretCreated")
	if err != nil || !found {
		return violation(describe(config), "status.initialization.dataSecretCreated is set true once the bootstrap data Secret exists", "it is not set")
	}
	if !created {
		return violation(describe(config), "status.initialization.dataSecretCreated is true once the bootstrap data Secret exists", "it is false")
	}
	name, _, _ := unstructured.NestedString(config.Object, "status", "dataSecretName")
	if name == "" {
		return violation(describe(config), "status.dataSecretName names the bootstrap data Secret once initialized", "it is empty")
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: config.GetNamespace(), Name: name}, secret); err != nil {
		return violation(describe(config), "the bootstrap data Secret exists in the config's namespace under status.dataSecretName", fmt.Sprintf("get Secret %s: %v", name, err))
	}
	where := "Secret " + secret.Namespace + "/" + secret.Name
	var errs []error
	if len(secret.Data["value"]) == 0 {
		errs = append(errs, violation(where, "the bootstrap data is in key \"value\"", fmt.Sprintf("keys are %v", keys(secret.Data))))
	}
	if f, ok := secret.Data["format"]; ok && string(f) != "cloud-config" && string(f) != "ignition" {
		errs = append(errs, violation(where, "key \"format\", when set, is cloud-config or ignition", fmt.Sprintf("it is %q", f)))
	}
	if got := secret.Labels[clusterv1.ClusterNameLabel]; got != clusterName {
		errs = append(errs, violation(where, "the Secret is labelled "+clusterv1.ClusterNameLabel+"="+clusterName, fmt.Sprintf("the label is %q", got)))
	}
	if ref := metav1.GetControllerOf(secret); ref == nil || ref.UID != config.GetUID() {
		errs = append(errs, violation(where, "the config is the Secret's controller owner", fmt.Sprintf("the controller is %s", refString(ref))))
	}
	return errors.Join(errs...)
}

// ControlPlaneStatus are the contract's counters of a control plane.
type ControlPlaneStatus struct {
	Selector                                                     labels.Selector
	Replicas, ReadyReplicas, AvailableReplicas, UpToDateReplicas int64
}

// CheckControlPlaneStatus checks the replica counters and the selector
// against the control-plane Machines they describe, and returns them.
func CheckControlPlaneStatus(ctx context.Context, c client.Reader, cp *unstructured.Unstructured) (*ControlPlaneStatus, []clusterv1.Machine, error) {
	out := &ControlPlaneStatus{}
	sel, _, _ := unstructured.NestedString(cp.Object, "status", "selector")
	if sel == "" {
		return nil, nil, violation(describe(cp), "status.selector selects the control-plane Machines (label query syntax)", "it is empty")
	}
	var err error
	if out.Selector, err = labels.Parse(sel); err != nil {
		return nil, nil, violation(describe(cp), "status.selector is a label query", err.Error())
	}
	var errs []error
	for field, dst := range map[string]*int64{
		"replicas": &out.Replicas, "readyReplicas": &out.ReadyReplicas, "availableReplicas": &out.AvailableReplicas, "upToDateReplicas": &out.UpToDateReplicas,
	} {
		v, found, err := unstructured.NestedInt64(cp.Object, "status", field)
		if err != nil || !found {
			errs = append(errs, violation(describe(cp), "status."+field+" is reported", "it is not set"))
		}
		*dst = v
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	list := &clusterv1.MachineList{}
	if err := c.List(ctx, list, client.InNamespace(cp.GetNamespace()), client.MatchingLabelsSelector{Selector: out.Selector}); err != nil {
		return nil, nil, fmt.Errorf("list Machines by status.selector: %w", err)
	}
	var ready, available, upToDate int64
	for i := range list.Items {
		m := &list.Items[i]
		ready += b2i(conditions.IsTrue(m, clusterv1.MachineReadyCondition))
		available += b2i(conditions.IsTrue(m, clusterv1.MachineAvailableCondition))
		upToDate += b2i(conditions.IsTrue(m, clusterv1.MachineUpToDateCondition))
	}
	for _, k := range []struct {
		field     string
		got, want int64
		meaning   string
	}{
		{"replicas", out.Replicas, int64(len(list.Items)), "Machines matching status.selector"},
		{"readyReplicas", out.ReadyReplicas, ready, "of them with Ready=True"},
		{"availableReplicas", out.AvailableReplicas, available, "of them with Available=True"},
		{"upToDateReplicas", out.UpToDateReplicas, upToDate, "of them with UpToDate=True"},
	} {
		if k.got != k.want {
			errs = append(errs, violation(describe(cp), fmt.Sprintf("status.%s counts the %s", k.field, k.meaning), fmt.Sprintf("it is %d, there are %d", k.got, k.want)))
		}
	}
	return out, list.Items, errors.Join(errs...)
}

// CheckControlPlaneMachines checks the Machines of a control plane carry
// the cluster-name and control-plane labels and are controlled by it.
func CheckControlPlaneMachines(cp *unstructured.Unstructured, clusterName string, machines []clusterv1.Machine) error {
	var errs []error
	for i := range machines {
		m := &machines[i]
		where := "Machine " + m.Namespace + "/" + m.Name
		if got := m.Labels[clusterv1.ClusterNameLabel]; got != clusterName {
			errs = append(errs, violation(where, "control-plane Machines are labelled "+clusterv1.ClusterNameLabel+"="+clusterName, fmt.Sprintf("the label is %q", got)))
		}
		if v, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; !ok || v != "" {
			errs = append(errs, violation(where, "control-plane Machines carry the label "+clusterv1.MachineControlPlaneLabel+" with an empty value", fmt.Sprintf("present=%t value=%q", ok, v)))
		}
		if ref := metav1.GetControllerOf(m); ref == nil || ref.UID != cp.GetUID() {
			errs = append(errs, violation(where, "the control plane is the controller of its Machines", "the controller is "+refString(ref)))
		}
		if m.Spec.ClusterName != clusterName {
			errs = append(errs, violation(where, "spec.clusterName is the Cluster's", fmt.Sprintf("it is %q", m.Spec.ClusterName)))
		}
	}
	return errors.Join(errs...)
}

// CheckInitialized checks status.initialization.controlPlaneInitialized.
func CheckInitialized(cp *unstructured.Unstructured) error {
	v, found, _ := unstructured.NestedBool(cp.Object, "status", "initialization", "controlPlaneInitialized")
	if !found || !v {
		return violation(describe(cp), "status.initialization.controlPlaneInitialized is true once the control plane accepts requests", fmt.Sprintf("it is %v (set: %t)", v, found))
	}
	return nil
}

// CheckVersion checks status.version is a Kubernetes version.
func CheckVersion(cp *unstructured.Unstructured) error {
	v, _, _ := unstructured.NestedString(cp.Object, "status", "version")
	if !strings.HasPrefix(v, "v") || strings.Count(v, ".") < 2 {
		return violation(describe(cp), "status.version is the control plane's (minimum) Kubernetes version, e.g. v1.30.5", fmt.Sprintf("it is %q", v))
	}
	return nil
}

// CheckKubeconfig checks the Cluster's kubeconfig Secret: <cluster>-kubeconfig
// in its namespace, type cluster.x-k8s.io/secret, labelled with the cluster
// name, a kubeconfig in "value".
func CheckKubeconfig(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster) error {
	name := cluster.Name + "-kubeconfig"
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, secret); err != nil {
		return violation("Cluster "+cluster.Namespace+"/"+cluster.Name, "the control plane writes Secret <cluster>-kubeconfig in the Cluster's namespace", fmt.Sprintf("get %s: %v", name, err))
	}
	where := "Secret " + secret.Namespace + "/" + secret.Name
	var errs []error
	if secret.Type != clusterv1.ClusterSecretType {
		errs = append(errs, violation(where, "the kubeconfig Secret has type "+string(clusterv1.ClusterSecretType), fmt.Sprintf("it is %q", secret.Type)))
	}
	if got := secret.Labels[clusterv1.ClusterNameLabel]; got != cluster.Name {
		errs = append(errs, violation(where, "the kubeconfig Secret is labelled "+clusterv1.ClusterNameLabel+"="+cluster.Name, fmt.Sprintf("the label is %q", got)))
	}
	if _, err := clientcmd.Load(secret.Data["value"]); err != nil || len(secret.Data["value"]) == 0 {
		errs = append(errs, violation(where, "key \"value\" holds a kubeconfig", fmt.Sprintf("it does not parse: %v", err)))
	}
	return errors.Join(errs...)
}

func crdVersion(crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func refString(ref *metav1.OwnerReference) string {
	if ref == nil {
		return "none"
	}
	return ref.Kind + " " + ref.Name
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
