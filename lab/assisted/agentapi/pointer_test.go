package agentapi

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestNewPointerIgnition(t *testing.T) {
	raw, err := NewPointerIgnition("https://10.0.2.2:8443/ignition/worker", map[string]string{"NodePool": "c/np", "Authorization": "Bearer t"}, []byte("PEM"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://10.0.2.2:8443/ignition/worker",` +
		`"httpHeaders":[{"name":"Authorization","value":"Bearer t"},{"name":"NodePool","value":"c/np"}]}]},` +
		`"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;base64,UEVN"}]}}}}`
	if string(raw) != want {
		t.Errorf("pointer\n%s\nwant\n%s", raw, want)
	}
	plain, err := NewPointerIgnition("http://x/config/worker", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), "security") || strings.Contains(string(plain), "httpHeaders") {
		t.Errorf("pointer without CA or headers: %s", plain)
	}
	var back PointerConfig
	if err := json.Unmarshal(plain, &back); err != nil || back.Ignition.Config.Merge[0].Source != "http://x/config/worker" {
		t.Errorf("read back %+v, %v", back, err)
	}
}
