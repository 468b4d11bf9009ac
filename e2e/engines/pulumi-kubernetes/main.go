// Command pulumi-resource-kubernetes is the Pulumi Kubernetes resource provider, built from
// github.com/pulumi/pulumi-kubernetes/provider/v4 (see go.mod for the version). Upstream's own main
// (provider/cmd/pulumi-resource-kubernetes/main.go at v4.25.0) embeds schema-embed.json and
// terraform-mapping-embed.json, which `go generate` writes and git ignores, so the published
// module cannot be built as is. This main embeds the module's checked-in schema.json and
// terraform-mapping.json instead, which build.sh copies next to this file from the module cache,
// and starts the provider through provider.Serve (provider/pkg/provider/serve.go at v4.25.0:
// Serve(providerName, version, pulumiSchema, terraformMapping)).
//
// Unlike upstream's generate step, the schema's "version" field is not filled in; the provider
// only reads resource definitions from it (provider/pkg/provider/provider.go), and the plugin's
// reported version comes from pkg/version.Version, which build.sh stamps.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema.json
var pulumiSchema []byte

//go:embed terraform-mapping.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
