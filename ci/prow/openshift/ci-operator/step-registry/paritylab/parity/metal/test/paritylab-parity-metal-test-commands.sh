#!/usr/bin/env bash
# Runs paritylab's parity suite on the host ofcir-acquire leased and copies
# its artifacts back into ${ARTIFACT_DIR}. Runs in the src image, in the
# repository's checkout.
set -o nounset -o errexit -o pipefail

host=$(<"${SHARED_DIR}/server-ip")
port=22
if [[ -s ${SHARED_DIR}/server-sshport ]]; then
	port=$(<"${SHARED_DIR}/server-sshport")
fi
ssh_opts=(-i "${CLUSTER_PROFILE_DIR}/packet-ssh-key" -p "${port}"
	-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR
	-o ServerAliveInterval=30 -o ServerAliveCountMax=20)
# on_host runs a command on the leased host (relative paths are under
# root's home there). The command is expanded here, on purpose.
# shellcheck disable=SC2029
on_host() {
	ssh "${ssh_opts[@]}" "root@${host}" "$@"
}

# The run's directory on the host: the source, the artifacts.
run_dir=paritylab-ci

# collect_artifacts brings back what the run left (JUnit, the parity
# report, observations, dumps, the lab's logs), whatever the outcome: the
# dashboards read junit*.xml under ${ARTIFACT_DIR}.
collect_artifacts() {
	echo "Copying the run's artifacts into ${ARTIFACT_DIR}"
	on_host "tar -C ${run_dir}/artifacts -czf - ." | tar -C "${ARTIFACT_DIR}" -xzf - ||
		echo "Could not copy all artifacts back from the host" >&2
}

echo "Copying the repository to the leased host"
on_host "rm -rf ${run_dir} && mkdir -p ${run_dir}/src ${run_dir}/artifacts"
tar --exclude=./_artifacts --exclude=./bin -czf - . | on_host "tar -C ${run_dir}/src -xzf -"
trap collect_artifacts EXIT

echo "Running make e2e-parity (label filter '${E2E_LABEL_FILTER}') in ${PARITYLAB_IMAGE}"
# The suite needs root, libvirt and network namespaces of its own inside
# the container (privileged) and KVM; podman's default network keeps the
# lab off the host's network. The lab lives and dies with the container
# (--rm; --replace ends one a cancelled job left running). The caches
# outlive the run, so a host that ran the suite before skips the
# control-plane and module builds.
# ssh joins its arguments into one command line for the host's shell:
# each is quoted for it, so that an empty label filter stays an argument.
on_host "bash -s -- $(printf '%q ' "${run_dir}" "${PARITYLAB_IMAGE}" "${E2E_LABEL_FILTER}")" <<'ON_HOST'
set -o nounset -o errexit -o pipefail
run_dir=$1 image=$2 label_filter=$3
if ! command -v podman >/dev/null; then
	dnf install -y podman || { apt-get update && apt-get install -y podman; }
fi
kvm=()
if [[ -e /dev/kvm ]]; then
	kvm=(--device /dev/kvm)
fi
podman run --rm --replace --name paritylab-e2e-parity --privileged "${kvm[@]}" \
	-v "${HOME}/${run_dir}/src:/src:Z" -v "${HOME}/${run_dir}/artifacts:/artifacts:Z" \
	-v paritylab-cache:/root/.cache -v paritylab-go:/go/pkg/mod \
	-e ARTIFACTS=/artifacts -w /src "${image}" \
	make e2e-parity E2E_LABEL_FILTER="${label_filter}"
ON_HOST
