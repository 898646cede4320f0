package upgrade

import (
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/paritylab/paritylab/framework"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/scenarios"
)

const repo = "127.0.0.1:5000/openshift/release"

func labInput() scenarios.Input {
	rel := func(version, digest string) releases.Pushed {
		return releases.Pushed{Release: releases.Release{Version: version}, Image: repo + "@sha256:" + digest, Tag: repo + ":" + version + "-x86_64"}
	}
	return scenarios.Input{Lab: &framework.Lab{Info: framework.LabInfo{ReleaseRepository: repo,
		Releases: []releases.Pushed{rel("4.21.0", "aa"), rel("4.21.1", "bb")}}}}
}

// Release images are named by what they are in the lab's registry, never
// by digest or port, which change from run to run.
func TestDescribeRelease(t *testing.T) {
	in := labInput()
	for image, want := range map[string]string{
		"":                          "none",
		repo + "@sha256:bb":         "release 4.21.1 by digest",
		repo + ":4.21.0-x86_64":     "release 4.21.0 by tag",
		repo + "@sha256:cc":         "a digest the registry does not have",
		repo + ":4.22.1-x86_64":     "a tag the registry does not have",
		"quay.io/other@sha256:aa00": "a digest the registry does not have",
	} {
		if got := describeRelease(in, image); got != want {
			t.Errorf("describeRelease(%q) = %q, want %q", image, got, want)
		}
	}
}

func TestDescribeUpdate(t *testing.T) {
	in := labInput()
	for _, tc := range []struct {
		u    *configv1.Update
		want string
	}{
		{nil, "none"},
		{&configv1.Update{Version: "4.21.1"}, "byVersion=4.21.1 force=false"},
		{&configv1.Update{Image: repo + "@sha256:bb", Force: true}, "image=release 4.21.1 by digest force=true"},
		{&configv1.Update{Version: "4.21.1", Image: repo + "@sha256:bb"}, "byVersion=4.21.1 image=release 4.21.1 by digest force=false"},
	} {
		if got := describeUpdate(in, tc.u); got != tc.want {
			t.Errorf("describeUpdate(%+v) = %q, want %q", tc.u, got, tc.want)
		}
	}
}

func TestDescribeHistoryAndConditions(t *testing.T) {
	in := labInput()
	now := metav1.Now()
	hs := []configv1.UpdateHistory{
		{State: configv1.PartialUpdate, Version: "4.21.1", Image: repo + "@sha256:bb", Verified: true, AcceptedRisks: "Upgradeable"},
		{State: configv1.CompletedUpdate, Version: "4.21.0", Image: repo + "@sha256:aa", CompletionTime: &now},
	}
	if got, want := describeEntry(in, hs[0]), `4.21.1 Partial verified=true acceptedRisks="Upgradeable" image=release 4.21.1 by digest, no completion time`; got != want {
		t.Errorf("describeEntry = %q, want %q", got, want)
	}
	if got, want := describeHistory(in, hs), "4.21.1 Partial, 4.21.0 Completed"; got != want {
		t.Errorf("describeHistory = %q, want %q", got, want)
	}
	conds := []configv1.ClusterOperatorStatusCondition{
		{Type: "ReleaseAccepted", Status: configv1.ConditionFalse, Reason: "RetrievePayload"},
		{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue},
	}
	if got, want := describeConditions(conds), "Available=True, ReleaseAccepted=False/RetrievePayload"; got != want {
		t.Errorf("describeConditions = %q, want %q", got, want)
	}
}

func TestKept(t *testing.T) {
	before := map[types.UID]string{"1": "Machine/a", "2": "Node/b"}
	if got := kept(before, map[types.UID]string{"1": "Machine/a", "2": "Node/b", "3": "Node/new"}); got != "all kept" {
		t.Errorf("a new object only: %q, want all kept", got)
	}
	if got := kept(before, map[types.UID]string{"1": "Machine/a", "4": "Node/b"}); got != "1 gone" {
		t.Errorf("a Node recreated under its name: %q, want 1 gone", got)
	}
}

func TestDescribeKubelets(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, "no Ready node"},
		{[]string{"v1.35.0"}, "kubelet v1.35.0 on every Ready node"},
		{[]string{"v1.34.5", "v1.35.0"}, "kubelets v1.34.5, v1.35.0 on the Ready nodes"},
	} {
		if got := describeKubelets(c.in); got != c.want {
			t.Errorf("describeKubelets(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
