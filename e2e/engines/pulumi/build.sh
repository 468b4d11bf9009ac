#!/usr/bin/env bash
# Builds the Pulumi CLI and our Node.js language host into $OUT, side by side: the CLI looks for
# the bundled language plugin pulumi-language-nodejs next to its own (symlink-resolved) executable
# (pulumi/pulumi sdk/go/common/workspace/plugins.go, getPluginInfoAndPath/IsPluginBundled, v3.248.0).
# Both are version-stamped through sdk/v3 go/common/version.Version, which is empty unless the
# linker sets it (version.go at v3.248.0); the CLI checks policy packs' and plugins' version ranges
# against it (sdk/go/common/resource/plugin/plugin.go ValidatePulumiVersionRange).
# Tags: osusergo (pure-Go os/user, as CGO is off anyway) and grpcnotrace (google.golang.org/grpc
# trace_notrace.go: drops golang.org/x/net/trace, so the linker can prune more).
set -euo pipefail
version="$(go list -m -f '{{.Version}}' github.com/pulumi/pulumi/pkg/v3)"
ldflags="-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${version}"
go build -tags osusergo,grpcnotrace -ldflags "${ldflags}" -o "${OUT}/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
go build -tags osusergo,grpcnotrace -ldflags "${ldflags}" -o "${OUT}/pulumi-language-nodejs" .
