package config

import "embed"

// FS holds the generated CRDs.
//
//go:embed crd/*.yaml
var FS embed.FS

// CRDs matches the CRD files in FS.
const CRDs = "crd/*.yaml"
