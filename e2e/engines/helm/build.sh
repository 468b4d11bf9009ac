#!/usr/bin/env bash
# Builds the Helm CLI into $OUT, version-stamped (helm.sh/helm internal/version/version.go at v3.20.2).
set -euo pipefail
go build -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=v3.20.2" -o "${OUT}/helm" helm.sh/helm/v3/cmd/helm
