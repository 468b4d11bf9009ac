#!/usr/bin/env bash
# Builds the Pulumi Kubernetes provider into $OUT. main.go embeds the provider module's
# cmd/pulumi-resource-kubernetes/schema.json and terraform-mapping.json (checked in upstream:
# pulumi/pulumi-kubernetes provider/cmd/pulumi-resource-kubernetes/ at v4.25.0), copied here first
# from the module cache; the copies are read-only there, hence the chmod, and git-ignored here.
# The version stamp is pkg/version.Version (provider/pkg/version/version.go: empty unless the
# linker sets it; it names the plugin's version and the provider's User-Agent).
set -euo pipefail
mod=github.com/pulumi/pulumi-kubernetes/provider/v4
version=v4.25.0 # the release the commit go.mod pins is taken to be (see go.mod)
go mod download "${mod}"
dir="$(go list -m -f '{{.Dir}}' "${mod}")"
for f in schema.json terraform-mapping.json; do
    cp "${dir}/cmd/pulumi-resource-kubernetes/${f}" "./${f}"
    chmod u+w "./${f}"
done
go build -ldflags "-s -w -X ${mod}/pkg/version.Version=${version}" -o "${OUT}/pulumi-resource-kubernetes" .
