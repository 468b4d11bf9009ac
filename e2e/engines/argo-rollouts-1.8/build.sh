#!/usr/bin/env bash
# Builds the Argo Rollouts controller v1.8.4 into $OUT (see ../build.sh) under a name of its own,
# so it sits beside the v1.9.0 one of ../argo-rollouts in the shared link directory; stamped as the
# release the way argoproj/argo-rollouts Makefile at v1.8.4 stamps it (utils/version: version,
# gitTag, gitCommit, gitTreeState), so it reports v1.8.4 as the chart 2.40.7 image would.
set -euo pipefail
version=v1.8.4
commit=55e89ddc # the v1.8.4 tag commit (short form; shown by the version command only)
pkg=github.com/argoproj/argo-rollouts/utils/version
go build -ldflags "-s -w -X ${pkg}.version=${version#v} -X ${pkg}.gitTag=${version} -X ${pkg}.gitCommit=${commit} -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=2026-02-13T21:20:21Z" \
    -o "${OUT}/rollouts-controller-1.8" github.com/argoproj/argo-rollouts/cmd/rollouts-controller
