#!/usr/bin/env bash
# Builds Prometheus and promtool into $OUT (see ../build.sh). Without the builtinassets tag the web
# UI is served from disk and 404s here, while the HTTP API works (prometheus/prometheus web/ui/ui.go
# and README "Building from source" at v3.14.0). remove_all_sd leaves out the optional service
# discoveries (plugins/plugin_*.go at v3.14.0): the run scrapes nothing, it only receives OTLP
# pushes. promtool's `test rules` evaluates the gates' queries over input series in the engine tier
# (engine-promtool). The version is stamped as the release Makefile.common stamps it
# (prometheus/common/version).
set -euo pipefail
v=github.com/prometheus/common/version
go build -tags remove_all_sd -ldflags "-s -w -X ${v}.Version=3.14.0 -X ${v}.Branch=HEAD -X ${v}.Revision=d7598b71" \
    -o "${OUT}/" github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool
