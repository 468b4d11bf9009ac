// The upstream modules whose manifests the end-to-end platform installs before the program runs:
// the CRDs of Gateway API, Cilium, Kyverno (both APIs), ArgoCD and Argo Rollouts, read from each
// module's own tree (a module zip carries its YAML). Nothing here is built: the harness runs
// `go mod download -json <module>` and reads the files under the printed Dir, and go.sum pins them.
module argo-rollouts-addon/e2e/platform-crds

go 1.26

require (
	github.com/argoproj/argo-cd/v3 v3.5.1
	github.com/argoproj/argo-rollouts v1.9.0
	github.com/cilium/cilium v1.19.5
	github.com/kyverno/kyverno v1.17.2
	sigs.k8s.io/gateway-api v1.4.1
)
