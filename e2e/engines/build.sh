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
# "$OUT". The cache key is a hash of those files and of any Go source of ours beside them, so a
# version bump rebuilds that engine alone and an unchanged one is reused. Binaries land in
# $CACHE/bin/<engine>-<key>/ and are linked into $CACHE/current/ (the directory printed on
# stdout). Engines build one at a time, each `go build` on every core (docs/operations/e2e.md,
# "Engines": two at a time took 8 % longer and 12 % more CPU on 2 cores).
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
# configured proxy and checksum database; reproducible paths; static binaries. No DWARF from the
# compiler: every recipe links with -s -w, which drops it anyway, and not writing it saves 9 % of a
# cold build's CPU (docs/operations/e2e.md, "Engines").
export GOTOOLCHAIN=local GOFLAGS="-mod=readonly -trimpath -gcflags=all=-dwarf=false" CGO_ENABLED=0

engines=("$@")
if [[ ${#engines[@]} -eq 0 ]]; then
    # Alphabetical: the stand-in plugin builds after the controller whose packages it reuses from
    # the Go build cache.
    for d in "${here}"/*/; do
        [[ -f "${d}build.sh" && ! -e "${d}optional" ]] && engines+=("$(basename "${d}")")
    done
fi
for engine in "${engines[@]}"; do
    [[ -f "${here}/${engine}/build.sh" ]] || { echo "engines: no engine folder ${engine}" >&2; exit 2; }
done

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
            exit 1
        fi
        echo "$(( $(date +%s) - start ))" > "${out}.partial/.seconds"
        touch "${out}.partial/.complete"
        rm -rf "${out}" && mv "${out}.partial" "${out}"
        echo "engines: built ${engine} in $(cat "${out}/.seconds") s" >&2
    fi
    for f in "${out}"/*; do ln -sfn "${f}" "${cache}/current/$(basename "${f}")"; done
}

for engine in "${engines[@]}"; do
    build "${engine}"
done
echo "${cache}/current"
