#!/usr/bin/env bash
# Builds Kyverno's admission controller and background controller into $OUT (see ../build.sh), as
# kyverno/kyverno Makefile at v1.17.2 builds them (CGO off, the version stamped into pkg/version).
set -euo pipefail
flags="-s -w -X github.com/kyverno/kyverno/pkg/version.BuildVersion=v1.17.2"
go build -ldflags "${flags}" -o "${OUT}/kyverno" github.com/kyverno/kyverno/cmd/kyverno
go build -ldflags "${flags}" -o "${OUT}/kyverno-background-controller" github.com/kyverno/kyverno/cmd/background-controller
