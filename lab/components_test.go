package lab

import (
	"strings"
	"testing"
)

// What the lab records it runs names the module versions it links, also
// from a test binary (which carries no dependency information), and is read
// back as written.
func TestComponentRecordsNameLinkedVersions(t *testing.T) {
	records := hubComponentRecords("local")
	byName := map[string]ComponentRecord{}
	for _, r := range records {
		byName[r.Name] = r
	}
	for _, name := range []string{"capi-core", "machine-api"} {
		if v := byName[name].Version; !strings.HasPrefix(v, "v") {
			t.Errorf("%s version %q, want the module version from go.mod", name, v)
		}
	}
	if !strings.HasPrefix(byName["hub"].Implementation, "local (") {
		t.Errorf("hub %q does not name the hub backend", byName["hub"].Implementation)
	}
	dir := t.TempDir()
	if err := writeComponents(dir, records); err != nil {
		t.Fatal(err)
	}
	back, err := ReadComponents(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(records) || back[0].Name != "assisted" {
		t.Errorf("read back %+v", back)
	}
}
