package cvo

import (
	"errors"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
)

const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func rel(v string) configv1.Release {
	return configv1.Release{Version: v, Image: "example.com/release-" + v + digest}
}

// installed is a cluster at 4.21.3 that came from 4.21.1, with two
// updates available.
func installed() *configv1.ClusterVersion {
	now := time.Unix(1000, 0)
	cv := &configv1.ClusterVersion{}
	cv.Name = Name
	cv.Status = InstalledStatus(rel("4.21.1"), nil, now)
	begin(&cv.Status, target{release: rel("4.21.3"), verified: true}, now)
	advance(&cv.Status, 0, now, true)
	cv.Status.AvailableUpdates = []configv1.Release{rel("4.21.4"), rel("4.22.0")}
	return cv
}

func TestResolve(t *testing.T) {
	known := []configv1.Release{rel("4.23.0")}
	cases := []struct {
		name        string
		update      *configv1.Update
		wantVersion string
		wantReason  string
		wantInMsg   string
	}{
		{name: "no desired update", update: nil, wantVersion: "4.21.3"},
		{name: "current version", update: &configv1.Update{Version: "4.21.3"}, wantVersion: "4.21.3"},
		{name: "available version", update: &configv1.Update{Version: "4.22.0"}, wantVersion: "4.22.0"},
		{name: "unknown version", update: &configv1.Update{Version: "4.99.0"}, wantReason: ReasonVersionNotFound, wantInMsg: "4.99.0 is not one of the available updates (4.21.4, 4.22.0)"},
		{name: "unknown version forced", update: &configv1.Update{Version: "4.99.0", Force: true}, wantReason: ReasonVersionNotFound},
		{name: "image by digest in the graph", update: &configv1.Update{Image: rel("4.21.4").Image}, wantVersion: "4.21.4"},
		{name: "image by digest the lab knows", update: &configv1.Update{Image: rel("4.23.0").Image}, wantVersion: "4.23.0"},
		{name: "unknown image with its version", update: &configv1.Update{Image: "mirror.example/r" + digest, Version: "4.24.1"}, wantVersion: "4.24.1"},
		{name: "unknown image without version", update: &configv1.Update{Image: "mirror.example/r" + digest}, wantReason: ReasonRetrievePayload, wantInMsg: "knows no release"},
		{name: "image by tag", update: &configv1.Update{Image: "example.com/release:4.22.0", Version: "4.22.0"}, wantReason: ReasonRetrievePayload, wantInMsg: "not pulled by digest"},
		{name: "image by tag forced", update: &configv1.Update{Image: "example.com/release:4.22.0", Version: "4.22.0", Force: true}, wantVersion: "4.22.0"},
		{name: "image and other version", update: &configv1.Update{Image: rel("4.22.0").Image, Version: "4.21.4"}, wantReason: ReasonVerifyPayloadVersion, wantInMsg: "release image version 4.22.0 does not match the expected upstream version 4.21.4"},
		{name: "downgrade to previous z-stream", update: &configv1.Update{Image: rel("4.21.1").Image}, wantVersion: "4.21.1"},
		{name: "downgrade below previous", update: &configv1.Update{Image: "example.com/old" + digest, Version: "4.21.0"}, wantReason: ReasonPreconditionChecks, wantInMsg: `"ClusterVersionRollback" failed because of "LowDesiredVersion": 4.21.0 is less than the current target 4.21.3, and the only supported rollback is to the cluster's previous version 4.21.1`},
		{name: "downgrade forced", update: &configv1.Update{Image: "example.com/old" + digest, Version: "4.21.0", Force: true}, wantVersion: "4.21.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cv := installed()
			cv.Spec.DesiredUpdate = c.update
			got, ref := resolve(cv, known, nothingFetched)
			if c.wantReason != "" {
				if ref == nil || ref.Reason != c.wantReason || !strings.Contains(ref.Message, c.wantInMsg) {
					t.Fatalf("refusal %v, want reason %s with %q", ref, c.wantReason, c.wantInMsg)
				}
				return
			}
			if ref != nil || got.release.Version != c.wantVersion {
				t.Fatalf("got %+v, %v; want version %s accepted", got, ref, c.wantVersion)
			}
		})
	}
}

func TestRollbackWithoutHistory(t *testing.T) {
	cv := &configv1.ClusterVersion{}
	cv.Status = InstalledStatus(rel("4.21.3"), nil, time.Unix(0, 0))
	ref := checkRollback(cv, rel("4.21.2"))
	if ref == nil || !strings.Contains(ref.Message, "the cluster has no previous Semantic Version") {
		t.Fatalf("refusal %v, want one saying there is no previous version", ref)
	}
	cv.Status.History = append([]configv1.UpdateHistory{{Version: "4.21.3", Image: "x" + digest, State: configv1.CompletedUpdate}}, cv.Status.History...)
	cv.Status.Desired = configv1.Release{Version: "4.21.3", Image: "x" + digest}
	if ref := checkRollback(cv, rel("4.21.3")); ref != nil {
		t.Errorf("same version refused as a rollback: %v", ref)
	}
}

func TestRollbackAcrossMinorRefused(t *testing.T) {
	now := time.Unix(0, 0)
	cv := &configv1.ClusterVersion{}
	cv.Status = InstalledStatus(rel("4.21.3"), nil, now)
	begin(&cv.Status, target{release: rel("4.22.0")}, now)
	ref := checkRollback(cv, rel("4.21.3"))
	if ref == nil || !strings.Contains(ref.Message, "rollbacks that change major or minor versions are not recommended") {
		t.Fatalf("refusal %v, want the minor-version rollback refusal", ref)
	}
}

// TestResolveReadsPayloads: what the operator read of a payload decides
// over what the lab knows: its version, or the registry's refusal.
func TestResolveReadsPayloads(t *testing.T) {
	missing := errors.New("GET https://mirror.example/v2/r/manifests/sha256:…: MANIFEST_UNKNOWN: manifest unknown")
	read := func(image string) (payload, bool) {
		switch image {
		case "mirror.example/r" + digest:
			return payload{version: "4.24.1"}, true
		case rel("4.22.0").Image:
			return payload{err: missing}, true
		case "mirror.example/gone" + digest:
			return payload{err: missing}, true
		}
		return payload{}, false
	}
	cases := []struct {
		name        string
		update      configv1.Update
		wantVersion string
		wantInMsg   string
	}{
		{name: "image read: its payload's version", update: configv1.Update{Image: "mirror.example/r" + digest}, wantVersion: "4.24.1"},
		{name: "image read, other version asked", update: configv1.Update{Image: "mirror.example/r" + digest, Version: "4.24.2"}, wantInMsg: "release image version 4.24.1 does not match the expected upstream version 4.24.2"},
		{name: "image the registry lacks", update: configv1.Update{Image: "mirror.example/gone" + digest, Version: "4.24.1"}, wantInMsg: `Retrieving payload failed version="4.24.1" image="mirror.example/gone` + digest + `" failure=GET https://mirror.example/v2/r/manifests/sha256:…: MANIFEST_UNKNOWN`},
		{name: "image the registry lacks, forced", update: configv1.Update{Image: "mirror.example/gone" + digest, Version: "4.24.1", Force: true}, wantInMsg: "MANIFEST_UNKNOWN"},
		{name: "version whose image the registry lacks", update: configv1.Update{Version: "4.22.0"}, wantInMsg: `Retrieving payload failed version="4.22.0" image="` + rel("4.22.0").Image + `" failure=`},
		{name: "version not read", update: configv1.Update{Version: "4.21.4"}, wantVersion: "4.21.4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cv := installed()
			cv.Spec.DesiredUpdate = &c.update
			got, ref := resolve(cv, nil, read)
			if c.wantInMsg != "" {
				if ref == nil || !strings.Contains(ref.Message, c.wantInMsg) {
					t.Fatalf("refusal %v, want one with %q", ref, c.wantInMsg)
				}
				return
			}
			if ref != nil || got.release.Version != c.wantVersion || got.release.Image != targetImage(cv) {
				t.Fatalf("got %+v, %v; want version %s of image %s accepted", got, ref, c.wantVersion, targetImage(cv))
			}
		})
	}
}

// TestUpgradeableFalseBlocksMinorUpdates: the ClusterVersionUpgradeable
// precondition, on a cluster at 4.21.3 whose Upgradeable is False.
func TestUpgradeableFalseBlocksMinorUpdates(t *testing.T) {
	notUpgradeable := configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse,
		Reason: "AdminAckRequired", Message: "Kubernetes 1.35 removes APIs this cluster uses"}
	known := []configv1.Release{rel("5.0.0")}
	cases := []struct {
		name        string
		update      configv1.Update
		wantVersion string
	}{
		{name: "patch update", update: configv1.Update{Version: "4.21.4"}, wantVersion: "4.21.4"},
		{name: "minor update", update: configv1.Update{Version: "4.22.0"}},
		{name: "major update", update: configv1.Update{Image: rel("5.0.0").Image}},
		{name: "minor update forced", update: configv1.Update{Image: rel("4.22.0").Image, Force: true}, wantVersion: "4.22.0"},
		{name: "back to the previous patch", update: configv1.Update{Image: rel("4.21.1").Image}, wantVersion: "4.21.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cv := installed()
			cv.Status.Conditions = append(cv.Status.Conditions, notUpgradeable)
			cv.Spec.DesiredUpdate = &c.update
			got, ref := resolve(cv, known, nothingFetched)
			if c.wantVersion == "" {
				want := `Precondition "ClusterVersionUpgradeable" failed because of "AdminAckRequired": Kubernetes 1.35 removes APIs this cluster uses`
				if ref == nil || ref.Reason != ReasonPreconditionChecks || !strings.Contains(ref.Message, want) {
					t.Fatalf("refusal %v, want %s with %q", ref, ReasonPreconditionChecks, want)
				}
				return
			}
			if ref != nil || got.release.Version != c.wantVersion {
				t.Fatalf("got %+v, %v; want %s accepted", got, ref, c.wantVersion)
			}
		})
	}
	// Upgradeable True or Unknown does not block.
	cv := installed()
	cv.Status.Conditions = append(cv.Status.Conditions, configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionUnknown})
	cv.Spec.DesiredUpdate = &configv1.Update{Version: "4.22.0"}
	if _, ref := resolve(cv, nil, nothingFetched); ref != nil {
		t.Errorf("Upgradeable Unknown refused a minor update: %v", ref)
	}
}

func TestOperatorsNotUpgradeable(t *testing.T) {
	op := func(name string, status configv1.ConditionStatus, reason string) configv1.ClusterOperator {
		co := configv1.ClusterOperator{}
		co.Name = name
		co.Status.Conditions = []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorUpgradeable, Status: status, Reason: reason, Message: name + " says no"}}
		return co
	}
	if c := operatorsNotUpgradeable([]configv1.ClusterOperator{op("dns", configv1.ConditionTrue, "AsExpected")}); c != nil {
		t.Errorf("every operator upgradeable: %+v, want nil", c)
	}
	two := operatorsNotUpgradeable([]configv1.ClusterOperator{op("network", configv1.ConditionFalse, "SDNConfigured"), op("dns", configv1.ConditionTrue, ""), op("etcd", configv1.ConditionFalse, "Quorum")})
	want := "Multiple cluster operators should not be upgraded between minor versions:\n" +
		"* Cluster operator etcd should not be upgraded between minor versions: Quorum: etcd says no\n" +
		"* Cluster operator network should not be upgraded between minor versions: SDNConfigured: network says no"
	if two == nil || two.Reason != "ClusterOperatorsNotUpgradeable" || two.Message != want || two.Type != conditionUpgradeableClusterOperators {
		t.Errorf("two operators not upgradeable: %+v, want reason ClusterOperatorsNotUpgradeable and\n%s", two, want)
	}
}
