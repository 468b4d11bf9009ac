#!/usr/bin/env bash
# Builds kustomize into $OUT. Its version needs no stamp: as a dependency of this module it reads
# v5.8.1 from the build info (sigs.k8s.io/kustomize/api provenance/provenance.go FindVersion).
set -euo pipefail
go build -ldflags "-s -w" -o "${OUT}/kustomize" sigs.k8s.io/kustomize/kustomize/v5
