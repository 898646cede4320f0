# paritylab — see README.md. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail -o errexit
.DEFAULT_GOAL := help

# The Go proxy has some of these modules' versions, the checksum database not.
# go.sum still pins every hash.
export GONOSUMDB := github.com/openshift,github.com/metal3-io,sigs.k8s.io/cluster-api,sigs.k8s.io/prow
export GOFLAGS := -buildvcs=false

CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/paritylab
export PARITYLAB_BIN_DIR ?= $(CACHE_DIR)/bin
# controller-runtime envtest (provider tests) finds the binaries here.
export KUBEBUILDER_ASSETS ?= $(abspath $(PARITYLAB_BIN_DIR)/..)/kubebuilder-assets/$(shell awk '$$1 == "k8s.io/kubernetes" { print $$2 }' lab/binaries/modules/kube/go.mod)
# Where results land: $ARTIFACTS (Prow), else $ARTIFACT_DIR (OpenShift CI),
# else _artifacts/. Made absolute: the suites run in their package dirs.
override ARTIFACTS := $(abspath $(or $(ARTIFACTS),$(ARTIFACT_DIR),$(CURDIR)/_artifacts))
export ARTIFACTS

CONTROLLER_GEN_VERSION := $(shell awk '$$1 == "sigs.k8s.io/controller-tools" { print $$2 }' ci/tools/go.mod)
CONTROLLER_GEN := $(PARITYLAB_BIN_DIR)/controller-gen-$(CONTROLLER_GEN_VERSION)
# Prow's checkconfig, from the pinned sigs.k8s.io/prow (a module of its own:
# Prow's Kubernetes libraries are older than controller-tools'). The
# ci/prow tests run it too.
CHECKCONFIG_VERSION := $(shell awk '$$1 == "sigs.k8s.io/prow" { print $$2 }' ci/tools/prow/go.mod)
export CHECKCONFIG := $(PARITYLAB_BIN_DIR)/checkconfig-$(CHECKCONFIG_VERSION)
GINKGO := go tool ginkgo
PARITYLAB := bin/paritylab

# Packages of `make test`: everything but the ginkgo end-to-end suites, and
# the provider conformance suite, which needs no more than a local hub.
TEST_PACKAGES = $(shell go list ./... | grep -v '/suites/') ./suites/conformance
GO_TEST_FLAGS ?= -race=false -timeout=20m
# Which e2e suite `make e2e-parity` runs and with which ginkgo label
# filter (day1, day2-scale, replacement); E2E_CONFIG is its e2e config file.
E2E_SUITE ?= ./suites/parity
# An empty E2E_LABEL_FILTER runs every scenario.
E2E_LABEL_FILTER ?=
# The whole parity suite takes about an hour on 2 cores under TCG (the
# replacement sub-cases some 40 minutes of it); the timeout bounds a hung
# run within CI's 90 minutes.
E2E_TIMEOUT ?= 80m
E2E_CONFIG ?= $(CURDIR)/ci/e2e/local.yaml
# More ginkgo flags, e.g. --dry-run to list the specs a filter selects.
E2E_GINKGO_FLAGS ?=
# How many runs `make e2e-parity-soak` makes.
N ?= 5

##@ Set-up

.PHONY: deps
deps: apt-deps host guest-kernel controlplane tools ## Install Debian packages, prepare libvirt, fetch the guest kernel, build control-plane binaries and code generators (idempotent).

.PHONY: apt-deps
apt-deps: ## Install the Debian packages the lab needs (skips what is present).
	@ci/scripts/apt-deps.sh ci/apt-packages.txt

.PHONY: host
host: apt-deps ## Prepare the host for a lab-started libvirt daemon (user, groups, dirs).
	@ci/scripts/libvirt-host.sh

.PHONY: guest-kernel
guest-kernel: apt-deps ## Fetch and unpack the kernel lab guests boot into the cache.
	@ci/scripts/guest-kernel.sh

.PHONY: controlplane
controlplane: ## Build kube-apiserver, kube-controller-manager and etcd into the binary cache.
	@ci/scripts/build-controlplane.sh

.PHONY: tools
tools: $(CONTROLLER_GEN) $(CHECKCONFIG) ## Build the pinned code generators and Prow's checkconfig into the binary cache.

$(CONTROLLER_GEN):
	@echo "==> building controller-gen $(CONTROLLER_GEN_VERSION)"
	@mkdir -p $(PARITYLAB_BIN_DIR)
	cd ci/tools && go build -o $@.partial sigs.k8s.io/controller-tools/cmd/controller-gen && mv $@.partial $@

$(CHECKCONFIG):
	@echo "==> building Prow's checkconfig $(CHECKCONFIG_VERSION)"
	@mkdir -p $(PARITYLAB_BIN_DIR)
	cd ci/tools/prow && go build -o $@.partial sigs.k8s.io/prow/cmd/checkconfig && mv $@.partial $@

##@ Build

.PHONY: build
build: ## Build the paritylab CLI and the in-guest lab-agent into bin/.
	go build -o $(PARITYLAB) ./cmd/paritylab
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o bin/lab-agent ./cmd/lab-agent

.PHONY: generate
generate: tools ## Regenerate deepcopy code, CRDs, and the providers' RBAC, webhooks and clusterctl components.
	ci/scripts/generate.sh $(CONTROLLER_GEN)

##@ Test

.PHONY: test
test: deps verify-prow ## Unit and integration tests (integration runs real kube-apiserver/etcd), and the Prow jobs checked.
	go test $(GO_TEST_FLAGS) $(TEST_PACKAGES)

# The vanilla Prow jobs through Prow's own loader, every warning an error
# (the flags ci/prow/vanilla_test.go uses too); its messages are Prow's.
.PHONY: verify-prow
verify-prow: $(CHECKCONFIG) ## Check ci/prow/vanilla with Prow's checkconfig.
	@echo "==> checkconfig ci/prow/vanilla"
	@$(CHECKCONFIG) --config-path=ci/prow/vanilla/config.yaml --job-config-path=ci/prow/vanilla/jobs --strict \
		--include-default-warnings --warnings=unknown-fields-all --warnings=valid-decoration-config

.PHONY: e2e-parity
e2e-parity: deps ## Run the parity scenarios on the local profile; JUnit, the report and logs land in $(ARTIFACTS); ends with the summary table.
	@$(MAKE) --no-print-directory e2e-parity-run

# e2e-parity-run is e2e-parity without deps; e2e-parity-soak runs it once
# per run. It keeps ginkgo's exit status and prints the suite's summary.txt
# last, so that the table and the report's path end the output whatever
# ginkgo printed before; the summary of an earlier run is removed first.
.PHONY: e2e-parity-run
e2e-parity-run:
	@mkdir -p $(ARTIFACTS)
	@rm -f $(ARTIFACTS)/summary.txt $(ARTIFACTS)/verdict.json
	@echo "==> ginkgo run $(E2E_SUITE)$(if $(E2E_LABEL_FILTER), (label filter $(E2E_LABEL_FILTER))), artifacts in $(ARTIFACTS)"
	@status=0; \
	$(GINKGO) run -v --timeout=$(E2E_TIMEOUT) --junit-report=junit.e2e.xml --output-dir=$(ARTIFACTS) $(E2E_GINKGO_FLAGS) \
		$(if $(E2E_LABEL_FILTER),--label-filter='$(E2E_LABEL_FILTER)') $(E2E_SUITE) -- -e2e.config=$(E2E_CONFIG) -e2e.artifacts-folder=$(ARTIFACTS) \
		|| status=$$?; \
	echo; \
	if [[ -f $(ARTIFACTS)/summary.txt ]]; then cat $(ARTIFACTS)/summary.txt; \
	else echo "No parity summary: the suite stopped (ginkgo exit status $$status) before it wrote $(ARTIFACTS)/summary.txt."; \
		echo "Logs: $(ARTIFACTS)/lab-logs/lab.log (the lab's steps), $(ARTIFACTS)/junit.e2e.xml (the specs)"; fi; \
	exit $$status

.PHONY: e2e-parity-soak
e2e-parity-soak: deps ## Run the parity suite N times (N=5), each on a lab of its own, into $(ARTIFACTS)/soak/run-<i>; prints each run and the flake count.
	@MAKE="$(MAKE)" ci/scripts/soak.sh $(N) $(ARTIFACTS)/soak

# Which specs `make e2e-lab` runs: all by default; CI runs 'cli' (lab up
# and down, interrupts and kills: what leaves the machine clean).
E2E_LAB_LABEL_FILTER ?=

.PHONY: e2e-lab
e2e-lab: deps ## Run the lab self-test suite (hosts, Redfish, assisted, both machine APIs, CLI teardown); JUnit into $(ARTIFACTS)/lab.
	@mkdir -p $(ARTIFACTS)/lab
	ARTIFACTS=$(ARTIFACTS)/lab $(GINKGO) run -v --timeout=$(E2E_TIMEOUT) --junit-report=junit.lab.xml --output-dir=$(ARTIFACTS)/lab \
		$(if $(E2E_LAB_LABEL_FILTER),--label-filter='$(E2E_LAB_LABEL_FILTER)') ./suites/lab

.PHONY: verify
verify: deps verify-gofmt verify-vet verify-generate ## gofmt, go vet, generated files current.

.PHONY: verify-gofmt
verify-gofmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [[ -n $$out ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: verify-vet
verify-vet:
	go vet ./...

# Where `make generate` writes; verify-generate compares them before and
# after regenerating, so it also works on a tree with uncommitted files.
GENERATED_PATHS := lab/crds/generated providers
generated_digest = find $(GENERATED_PATHS) -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum

.PHONY: verify-generate
verify-generate: tools ## Fail if `make generate` changes anything.
	@before=$$(mktemp); trap 'rm -f "$$before"' EXIT; $(generated_digest) > "$$before"; \
	ci/scripts/generate.sh $(CONTROLLER_GEN); \
	if ! $(generated_digest) | diff -u "$$before" - ; then \
		echo "generated files are stale: run 'make generate' and commit"; exit 1; fi

##@ Helpers

.PHONY: clean
clean: ## Remove build output and artifacts (not the binary cache).
	rm -rf bin $(ARTIFACTS)

.PHONY: help
help:
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z0-9_-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)
