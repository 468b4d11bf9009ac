#!/usr/bin/env bash
# Builds the engines the end-to-end run needs from their Go modules, into a cache outside the work
# tree, and prints the directory that holds every binary.
#
#   e2e/engines/build.sh [engine ...]     (default: every engine folder beside this script that is
#                                          not optional)
#
# An engine folder that holds a file named `optional` (kyverno-1.19) is built only when named: a
# build with no arguments, as CI's run does, skips it, so CI never pays for it.
# Each engine is a folder here with a go.mod/go.sum that pins it and a build.sh that builds it into
# "$OUT". The cache key is a hash of those files and of any Go source of ours beside them, so a version bump rebuilds that engine alone and
# an unchanged one is reused. Binaries land in $CACHE/bin/<engine>-<key>/ and are linked into
# $CACHE/current/ (the directory printed on stdout). Two engines build at a time, the longest
# first (ARGO_ROLLOUTS_ADDON_E2E_BUILD_JOBS sets how many).
#
# ARGO_ROLLOUTS_ADDON_E2E_BIN names a directory of binaries you already have: then nothing is built
# and that directory is printed (it must hold every binary the run needs: docs/operations/e2e.md,
# "Engines").
# ARGO_ROLLOUTS_ADDON_E2E_CACHE moves the cache (default ~/.cache/argo-rollouts-addon-e2e).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

if [[ -n "${ARGO_ROLLOUTS_ADDON_E2E_BIN:-}" ]]; then
    echo "engines: using the binaries in ${ARGO_ROLLOUTS_ADDON_E2E_BIN}" >&2
    echo "${ARGO_ROLLOUTS_ADDON_E2E_BIN}"
    exit 0
fi

cache="${ARGO_ROLLOUTS_ADDON_E2E_CACHE:-${HOME}/.cache/argo-rollouts-addon-e2e}"
mkdir -p "${cache}/bin" "${cache}/current" "${cache}/logs"

# Pinned toolchain behaviour: the machine's Go, no toolchain download; module downloads through the
# configured proxy and checksum database; reproducible paths; static binaries.
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -trimpath" CGO_ENABLED=0

engines=("$@")
if [[ ${#engines[@]} -eq 0 ]]; then
    # The longest builds first (docs/operations/e2e.md, Figures), so the short ones fill in beside
    # them; the plugin last, after the controller whose packages it reuses from the Go build cache.
    engines=(pulumi-kubernetes argo-rollouts kyverno kubernetes)
    for d in "${here}"/*/; do
        e="$(basename "${d}")"
        [[ -f "${d}build.sh" && ! -e "${d}optional" && " ${engines[*]} gatewayapi-plugin " != *" ${e} "* ]] && engines+=("${e}")
    done
    engines+=(gatewayapi-plugin)
fi

# One engine: built unless cached, then linked into current/.
build() {
    local engine="$1" dir="${here}/$1" key out start
    # The key covers what decides the binaries: the pins, the recipe and our own Go sources.
    key="$(cd "${dir}" && find . -type f \( -name go.mod -o -name go.sum -o -name build.sh -o -name '*.go' \) | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)"
    out="${cache}/bin/${engine}-${key}"
    if [[ ! -f "${out}/.complete" ]]; then
        echo "engines: building ${engine} (${key}) ..." >&2
        rm -rf "${out}.partial" && mkdir -p "${out}.partial"
        start=$(date +%s)
        if ! (cd "${dir}" && OUT="${out}.partial" bash ./build.sh) >"${cache}/logs/${engine}.log" 2>&1; then
            echo "engines: building ${engine} failed; the end of ${cache}/logs/${engine}.log:" >&2
            tail -n 40 "${cache}/logs/${engine}.log" >&2
            touch "${failures}/${engine}"
            return 1
        fi
        echo "$(( $(date +%s) - start ))" > "${out}.partial/.seconds"
        touch "${out}.partial/.complete"
        rm -rf "${out}" && mv "${out}.partial" "${out}"
        echo "engines: built ${engine} in $(cat "${out}/.seconds") s" >&2
    fi
    for f in "${out}"/*; do ln -sfn "${f}" "${cache}/current/$(basename "${f}")"; done
}

# Two builds at a time (ARGO_ROLLOUTS_ADDON_E2E_BUILD_JOBS): one engine's link and module
# downloads use one core, which the other's compiles take up.
# A failed build stops new ones and fails the whole; the running one ends first.
jobs="${ARGO_ROLLOUTS_ADDON_E2E_BUILD_JOBS:-2}"
failures="$(mktemp -d)"
trap 'rm -rf "${failures}"' EXIT
for engine in "${engines[@]}"; do
    [[ -f "${here}/${engine}/build.sh" ]] || { echo "engines: no engine folder ${engine}" >&2; exit 2; }
done
for engine in "${engines[@]}"; do
    while [[ $(jobs -rp | wc -l) -ge ${jobs} ]]; do wait -n || true; done
    [[ -z "$(ls -A "${failures}")" ]] || break
    build "${engine}" &
done
wait
[[ -z "$(ls -A "${failures}")" ]] || exit 1
echo "${cache}/current"
