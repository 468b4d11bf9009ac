#!/usr/bin/env bash
# Builds the stand-in Gateway API traffic-router plugin (main.go) into $OUT (see ../build.sh). The
# controller copies the plugin from its configured location into its plugin-bin folder (argo-rollouts
# utils/plugin/downloader.go at v1.9.0), so the binary's name here does not matter.
set -euo pipefail
go build -ldflags "-s -w" -o "${OUT}/gatewayapi-plugin" .
