package config

import "embed"

// FS holds the generated CRDs and webhook configurations.
//
//go:embed crd/*.yaml webhook/manifests.yaml
var FS embed.FS

const (
	// CRDs matches the CRD files in FS.
	CRDs = "crd/*.yaml"
	// Webhooks is the webhook configuration file in FS.
	Webhooks = "webhook/manifests.yaml"
)
