#!/usr/bin/env bash
# Builds the Argo Rollouts controller into $OUT (see ../build.sh), stamped as the release the way
# argoproj/argo-rollouts Makefile at v1.9.0 stamps it (utils/version: version, gitTag, gitCommit,
# gitTreeState), so the controller reports v1.9.0 as the chart's image would; and rollouts-evaluate
# (main.go beside this script), the controller's Prometheus provider on a given answer, for the
# engine tier.
set -euo pipefail
version=v1.9.0
commit=838d4e79 # the v1.9.0 tag commit (short form; shown by the version command only)
pkg=github.com/argoproj/argo-rollouts/utils/version
go build -ldflags "-s -w -X ${pkg}.version=${version#v} -X ${pkg}.gitTag=${version} -X ${pkg}.gitCommit=${commit} -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=2026-03-19T17:59:36Z" \
    -o "${OUT}/rollouts-controller" github.com/argoproj/argo-rollouts/cmd/rollouts-controller
go build -ldflags "-s -w" -o "${OUT}/rollouts-evaluate" .
