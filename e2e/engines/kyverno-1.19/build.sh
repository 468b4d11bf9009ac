#!/usr/bin/env bash
# Builds Kyverno v1.19.1's admission controller and background controller into $OUT (see ../build.sh),
# as kyverno/kyverno Makefile at v1.19.1 builds them (CGO off, the version stamped into pkg/version),
# under names of their own so they sit beside the v1.17.2 ones of ../kyverno in the shared link dir.
set -euo pipefail
flags="-s -w -X github.com/kyverno/kyverno/pkg/version.BuildVersion=v1.19.1"
go build -ldflags "${flags}" -o "${OUT}/kyverno-1.19" github.com/kyverno/kyverno/cmd/kyverno
go build -ldflags "${flags}" -o "${OUT}/kyverno-1.19-background-controller" github.com/kyverno/kyverno/cmd/background-controller
