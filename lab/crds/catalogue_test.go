package crds

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/paritylab/paritylab/lab/binaries"
)

func TestCatalogue(t *testing.T) {
	cases := []struct {
		set    Set
		want   []string
		labels map[string]string
	}{
		{
			set: ClusterAPI(),
			want: []string{
				"clusters.cluster.x-k8s.io",
				"machines.cluster.x-k8s.io",
				"machinesets.cluster.x-k8s.io",
				"machinedeployments.cluster.x-k8s.io",
				"machinehealthchecks.cluster.x-k8s.io",
			},
		},
		{
			set: MachineAPI(),
			want: []string{
				"machines.machine.openshift.io",
				"machinesets.machine.openshift.io",
				"machinehealthchecks.machine.openshift.io",
			},
		},
		{
			set:  Metal3(),
			want: []string{"baremetalhosts.metal3.io"},
		},
		{
			set: Hive(),
			want: []string{
				"clusterdeployments.hive.openshift.io",
				"clusterimagesets.hive.openshift.io",
			},
		},
		{
			set: Assisted(),
			want: []string{
				"infraenvs.agent-install.openshift.io",
				"agents.agent-install.openshift.io",
				"nmstateconfigs.agent-install.openshift.io",
				"agentclusterinstalls.extensions.hive.openshift.io",
			},
		},
		{
			set:  HyperShift(),
			want: []string{"hostedclusters.hypershift.openshift.io", "nodepools.hypershift.openshift.io"},
		},
		{
			set:    HostedControlPlane(),
			want:   []string{"hostedcontrolplanes.hypershift.openshift.io"},
			labels: map[string]string{ContractLabelV1Beta1: "v1beta1"},
		},
	}
	var sets []Set
	total := 0
	for _, c := range cases {
		sets = append(sets, c.set)
		t.Run(c.set.Name, func(t *testing.T) {
			loaded, err := c.set.Load()
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			total += len(loaded)
			byName := map[string]*apiextensionsv1.CustomResourceDefinition{}
			for i, crd := range loaded {
				byName[crd.Name] = crd
				if i > 0 && loaded[i-1].Name >= crd.Name {
					t.Errorf("CRDs not sorted or duplicated: %s before %s", loaded[i-1].Name, crd.Name)
				}
				if crd.Kind != "CustomResourceDefinition" || len(crd.Spec.Versions) == 0 {
					t.Errorf("CRD %s looks undecoded: kind %q, %d versions", crd.Name, crd.Kind, len(crd.Spec.Versions))
				}
				for k, v := range c.labels {
					if crd.Labels[k] != v {
						t.Errorf("CRD %s: label %s = %q, want %q", crd.Name, k, crd.Labels[k], v)
					}
				}
			}
			for _, name := range c.want {
				if byName[name] == nil {
					t.Errorf("set %s lacks CRD %s", c.set.Name, name)
				}
			}
		})
	}

	all, err := LoadAll(sets)
	if err != nil {
		t.Fatalf("LoadAll of the catalogue: %v", err)
	}
	if len(all) != total {
		t.Errorf("LoadAll returned %d CRDs, the sets hold %d", len(all), total)
	}
}

// Upstream CAPM3's CRDs, read from its module at the version the lab runs,
// carry both contract labels: Cluster API uses the v1beta2 API.
func TestUpstreamCAPM3CRDsAreV1beta2ContractFromTheModule(t *testing.T) {
	loaded, err := CAPM3(binaries.CAPM3Version).Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 9 {
		t.Errorf("%d CRDs from the module, want CAPM3's 9", len(loaded))
	}
	for _, crd := range loaded {
		if v, err := newestContractVersion(crd.Labels); err != nil || v != "v1beta2" {
			t.Errorf("%s: newest contract version %q (%v), want v1beta2", crd.Name, v, err)
		}
	}
}

// A machine-API cluster gets Metal3Remediation and its template in CAPM3's
// v1beta1 version only, stored, without the conversion webhook of the hub.
func TestMachineAPIRemediationServesOnlyV1beta1(t *testing.T) {
	loaded, err := MachineAPIRemediation(binaries.CAPM3Version).Load()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, crd := range loaded {
		names = append(names, crd.Name)
		if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != "v1beta1" ||
			!crd.Spec.Versions[0].Served || !crd.Spec.Versions[0].Storage || crd.Spec.Conversion != nil {
			t.Errorf("%s: versions %+v conversion %+v; want v1beta1 alone, served and stored", crd.Name, crd.Spec.Versions, crd.Spec.Conversion)
		}
	}
	want := []string{"metal3remediations.infrastructure.cluster.x-k8s.io", "metal3remediationtemplates.infrastructure.cluster.x-k8s.io"}
	if len(names) != 2 || names[0] != want[0] || names[1] != want[1] {
		t.Errorf("CRDs %v, want %v", names, want)
	}
	bad := MachineAPIRemediation(binaries.CAPM3Version)
	bad.OnlyVersion = "v1alpha9"
	if _, err := bad.Load(); err == nil || !strings.Contains(err.Error(), "has no version v1alpha9") {
		t.Errorf("a version the CRD lacks: %v", err)
	}
}
