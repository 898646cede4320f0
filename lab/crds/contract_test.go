package crds

import "testing"

func TestNewestContractVersion(t *testing.T) {
	cases := []struct {
		labels  map[string]string
		want    string
		wantErr bool
	}{
		{labels: map[string]string{"cluster.x-k8s.io/v1beta1": "v1alpha4_v1beta1"}, want: "v1beta1"},
		{labels: map[string]string{"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"}, want: "v1beta2"},
		{labels: map[string]string{"cluster.x-k8s.io/v1beta2": "v1beta2_v1_v1alpha1"}, want: "v1"},
		{labels: map[string]string{"cluster.x-k8s.io/v1beta2": ""}, wantErr: true},
		{labels: nil, wantErr: true},
	}
	for _, c := range cases {
		got, err := newestContractVersion(c.labels)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("newestContractVersion(%v) = %q, %v; want %q, err=%v", c.labels, got, err, c.want, c.wantErr)
		}
	}
}
