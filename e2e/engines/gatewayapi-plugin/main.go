// A stand-in for the Argo Rollouts Gateway API traffic-router plugin, used by the end-to-end run
// when the real plugin cannot be built: the Go module proxy serves no version of
// github.com/argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi. ARGO_ROLLOUTS_ADDON_E2E_PLUGIN
// runs the real plugin instead (docs/operations/e2e.md, "Engines").
//
// It speaks the controller's own plugin protocol (argo-rollouts rollout/trafficrouting/plugin/rpc
// at v1.9.0, served through hashicorp/go-plugin with the handshake the real plugin uses, its
// main.go at v0.15.0) and does what the real plugin does for the one shape the program declares,
// a single named HTTPRoute in the Rollout's namespace (components/delivery/strategy.ts):
// SetWeight reads the route and writes the canary weight on the canary Service's backendRefs and
// 100 minus it on the stable Service's, with a full Update retried on conflict, and sets or clears
// the in-progress label (rollouts-plugin-trafficrouter-gatewayapi pkg/plugin/httproute.go,
// setHTTPRouteWeight, and labels.go at v0.15.0). VerifyWeight answers Verified as the real one
// does. Anything else the program never configures (route selectors, header or mirror routes,
// GRPC/TCP/TLS routes) is refused with an error, so a scenario cannot pass on a shape the
// stand-in does not model.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/argoproj/argo-rollouts/pkg/apis/rollouts/v1alpha1"
	rolloutsPlugin "github.com/argoproj/argo-rollouts/rollout/trafficrouting/plugin/rpc"
	pluginTypes "github.com/argoproj/argo-rollouts/utils/plugin/types"
	goPlugin "github.com/hashicorp/go-plugin"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
)

const pluginName = "argoproj-labs/gatewayAPI"
const inProgressLabel = "rollouts.argoproj.io/gatewayapi-canary"

var httpRoutes = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}

type config struct {
	HTTPRoute string `json:"httpRoute"`
	Namespace string `json:"namespace"`
}

type standIn struct{ client dynamic.Interface }

func fail(format string, args ...any) pluginTypes.RpcError {
	return pluginTypes.RpcError{ErrorString: fmt.Sprintf(format, args...)}
}

// InitPlugin loads the client the way the real plugin does: the default loading rules, so
// $KUBECONFIG (the controller's --kubeconfig does not reach a plugin).
func (s *standIn) InitPlugin() pluginTypes.RpcError {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fail("loading the kubeconfig: %v", err)
	}
	cfg.UserAgent = "gatewayAPI-standin"
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fail("creating the client: %v", err)
	}
	s.client = client
	return pluginTypes.RpcError{}
}

func routeConfig(ro *v1alpha1.Rollout) (config, error) {
	var c config
	if ro.Spec.Strategy.Canary == nil || ro.Spec.Strategy.Canary.TrafficRouting == nil {
		return c, fmt.Errorf("rollout %s/%s has no canary trafficRouting", ro.Namespace, ro.Name)
	}
	raw, ok := ro.Spec.Strategy.Canary.TrafficRouting.Plugins[pluginName]
	if !ok {
		return c, fmt.Errorf("rollout %s/%s has no %s plugin config", ro.Namespace, ro.Name, pluginName)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("the stand-in models only {httpRoute, namespace}: %v", err)
	}
	if c.HTTPRoute == "" {
		return c, fmt.Errorf("the stand-in models only a named httpRoute")
	}
	if c.Namespace == "" {
		c.Namespace = ro.Namespace
	}
	return c, nil
}

func (s *standIn) UpdateHash(*v1alpha1.Rollout, string, string, []v1alpha1.WeightDestination) pluginTypes.RpcError {
	return pluginTypes.RpcError{}
}

func (s *standIn) SetWeight(ro *v1alpha1.Rollout, desired int32, extra []v1alpha1.WeightDestination) pluginTypes.RpcError {
	if len(extra) > 0 {
		return fail("the stand-in does not model experiment destinations")
	}
	c, err := routeConfig(ro)
	if err != nil {
		return fail("%v", err)
	}
	canary, stable := ro.Spec.Strategy.Canary.CanaryService, ro.Spec.Strategy.Canary.StableService
	routes := s.client.Resource(httpRoutes).Namespace(c.Namespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		route, err := routes.Get(context.TODO(), c.HTTPRoute, metav1.GetOptions{})
		if err != nil {
			return err
		}
		rules, _, _ := unstructured.NestedSlice(route.Object, "spec", "rules")
		canaryFound, stableFound := false, false
		for _, r := range rules {
			rule := r.(map[string]any)
			refs, _ := rule["backendRefs"].([]any)
			for _, b := range refs {
				ref := b.(map[string]any)
				switch ref["name"] {
				case canary:
					ref["weight"] = int64(desired)
					canaryFound = true
				case stable:
					ref["weight"] = int64(100 - desired)
					stableFound = true
				}
			}
		}
		if !canaryFound || !stableFound {
			return fmt.Errorf("backendRef was not found in httpRoute")
		}
		if err := unstructured.SetNestedSlice(route.Object, rules, "spec", "rules"); err != nil {
			return err
		}
		labels := route.GetLabels()
		if desired > 0 {
			if labels == nil {
				labels = map[string]string{}
			}
			labels[inProgressLabel] = "in-progress"
		} else {
			delete(labels, inProgressLabel)
		}
		route.SetLabels(labels)
		_, err = routes.Update(context.TODO(), route, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fail("%v", err)
	}
	log.Printf("SetWeight %s/%s canary=%d", c.Namespace, c.HTTPRoute, desired)
	return pluginTypes.RpcError{}
}

func (s *standIn) SetHeaderRoute(_ *v1alpha1.Rollout, h *v1alpha1.SetHeaderRoute) pluginTypes.RpcError {
	if h != nil && h.Match != nil {
		return fail("the stand-in does not model header routes")
	}
	return pluginTypes.RpcError{}
}

func (s *standIn) SetMirrorRoute(_ *v1alpha1.Rollout, m *v1alpha1.SetMirrorRoute) pluginTypes.RpcError {
	if m != nil && m.Match != nil {
		return fail("the stand-in does not model mirror routes")
	}
	return pluginTypes.RpcError{}
}

func (s *standIn) VerifyWeight(*v1alpha1.Rollout, int32, []v1alpha1.WeightDestination) (pluginTypes.RpcVerified, pluginTypes.RpcError) {
	return pluginTypes.Verified, pluginTypes.RpcError{}
}

func (s *standIn) RemoveManagedRoutes(*v1alpha1.Rollout) pluginTypes.RpcError {
	return pluginTypes.RpcError{}
}

func (s *standIn) Type() string { return "GatewayAPI" }

func main() {
	log.SetOutput(os.Stderr)
	goPlugin.Serve(&goPlugin.ServeConfig{
		HandshakeConfig: goPlugin.HandshakeConfig{ProtocolVersion: 1, MagicCookieKey: "ARGO_ROLLOUTS_RPC_PLUGIN", MagicCookieValue: "trafficrouter"},
		Plugins:         map[string]goPlugin.Plugin{"RpcTrafficRouterPlugin": &rolloutsPlugin.RpcTrafficRouterPlugin{Impl: &standIn{}}},
	})
}
