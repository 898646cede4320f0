package hypershift

import (
	"regexp"
	"strings"
	"testing"
)

// infraIDs keep HyperShift's base: other characters made dashes, runs of
// dashes made one, 21 characters at most without a trailing dash, then 5
// random characters.
func TestNewInfraID(t *testing.T) {
	for name, base := range map[string]string{
		"hc1":                                "hc1",
		"My.Cluster__x":                      "My-Cluster-x",
		"a-cluster-name-that-is-long-for-it": "a-cluster-name-that-i",
		"twenty-chars-exactly.-b":            "twenty-chars-exactly",
	} {
		got := newInfraID(name)
		rest, ok := strings.CutPrefix(got, base+"-")
		if !ok || !regexp.MustCompile(`^[a-z0-9]{5}$`).MatchString(rest) {
			t.Errorf("newInfraID(%q) = %q, want %s-<5 random>", name, got, base)
		}
	}
	if newInfraID("hc1") == newInfraID("hc1") {
		t.Error("two infraIDs of one name are equal; the suffix is not random")
	}
}
