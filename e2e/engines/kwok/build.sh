#!/usr/bin/env bash
# Builds kwok into $OUT, and copies the stage files kwok v0.8.0 needs (it starts no stage of its
# own: pkg/kwok/cmd/root.go "no stages found") from the module, the set kwokctl passes
# (pkg/kwokctl/runtime/cluster.go getDefaultNodeStages/getDefaultPodStages at v0.8.0).
set -euo pipefail
go build -ldflags "-s -w" -o "${OUT}/kwok" sigs.k8s.io/kwok/cmd/kwok
dir="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
mkdir -p "${OUT}/kwok-stages"
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    install -m 0644 "${dir}/kustomize/stage/${f}" "${OUT}/kwok-stages/$(basename "${f}")"
done
