package metadataref

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		name    string
		ref     bool
		wantErr bool
	}{
		{in: "r1"},
		{in: ""},
		{in: "metal3://ns/host/m"},
		{in: "$METADATA_UUID", name: "METADATA_UUID", ref: true},
		{in: "${METADATA_LOCAL_HOSTNAME}", name: "METADATA_LOCAL_HOSTNAME", ref: true},
		{in: "$_x1", name: "_x1", ref: true},
		{in: "${METADATA_UUID", wantErr: true},
		{in: "$1abc", wantErr: true},
		{in: "$(rm -rf /)", wantErr: true},
		{in: "$", wantErr: true},
		{in: "${}", wantErr: true},
	} {
		name, ref, err := Parse(tc.in)
		if (err != nil) != tc.wantErr || name != tc.name || ref != tc.ref {
			t.Errorf("Parse(%q) = %q, %v, %v; want %q, %v, error %v", tc.in, name, ref, err, tc.name, tc.ref, tc.wantErr)
		}
	}
}

func TestResolveFromMetadata(t *testing.T) {
	env := Env(map[string]string{"uuid": "5e0c", "local-hostname": "host-1"})
	for in, want := range map[string]string{
		"$METADATA_UUID":             "5e0c",
		"${METADATA_LOCAL_HOSTNAME}": "host-1",
		"$METADATA_ABSENT":           "",
		"static":                     "static",
	} {
		if got, err := Resolve(in, env); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Resolve("${BROKEN", env); err == nil {
		t.Error("Resolve of a malformed reference: no error")
	}
}
