// Package pki makes the certificate authorities and certificates of a lab
// run: API server serving certs, admin client certs, service-account keys and
// webhook serving certs. Keys are ECDSA P-256 (fast to generate on a small
// machine) and are written 0600.
//
// It imports nothing from the rest of the lab.
package pki
