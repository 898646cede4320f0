// Package controllers runs controllers and their webhooks in this process
// against the hub, the way a provider's manager binary would run them in a
// cluster: one controller-runtime manager with a TLS webhook server on
// loopback, whose admission and conversion webhooks the hub API server
// really calls.
//
// What runs is a list of Components (CAPI core, our providers, the lab's
// metal3 and assisted layers), each bringing its scheme, CRDs, webhook
// configurations and controllers.
//
// It must not import anything above lab.
package controllers
