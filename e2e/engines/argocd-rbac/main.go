// Command argocd-rbac-enforce answers ArgoCD RBAC questions the way the API server of ArgoCD
// v3.5.1 does, with ArgoCD's own code, so the end-to-end run can check what verify asks
// (tools/verify/argocdRbac.ts: argo-cd's casbin model run by node-casbin) against it
// (e2e/scenarios/05-argocd-rbac.e2e.ts).
//
// stdin (JSON):
//
//	{"data": {<argocd-rbac-cm data>},
//	 "projects": [{"name": "tenants", "roles": [{"name": "r", "policies": ["p, ..."], "groups": ["g1"]}]}],
//	 "queries": [{"user": "alice", "groups": ["g"], "resource": "applications", "action": "sync", "object": "tenants/app"}]}
//
// stdout (JSON): {"loadError": "<SetUserPolicy error>" | null, "verdicts": [bool, ...], "panics": [index, ...]}
//
// What it runs, from github.com/argoproj/argo-cd/v3 at v3.5.1:
//
//   - The enforcer as the API server sets it up (server/server.go at v3.5.1, NewServer):
//     rbac.NewEnforcer, SetBuiltinPolicy(assets.BuiltinPolicyCSV), and SetClaimsEnforcerFunc
//     with the server's claims check, EnforceClaims.
//   - The ConfigMap's data applied exactly as Enforcer.syncUpdate does (util/rbac/rbac.go at
//     v3.5.1; unexported, so its calls are made here in its order): SetDefaultRole
//     (policy.default), SetMatchMode (policy.matchMode), the server's onUpdated callback
//     (rbacPolicyLoader in server/server.go: the "scopes" key, a YAML list, into the claims
//     check's scopes; a value that does not parse stops syncUpdate before the next call), and
//     SetUserPolicy(rbac.PolicyCSV(data)).
//   - Each query as the server's handlers ask it (e.g. server/application/application.go):
//     Enforcer.Enforce(claims, resource, action, object) with
//     claims = jwt.MapClaims{"sub": user, "groups": groups}. Enforce checks policy.default
//     first, then the claims check.
//
// The claims check is restated here, not imported: server/rbacpolicy imports
// pkg/apis/application/v1alpha1, which imports github.com/argoproj/argo-cd/gitops-engine, a
// module argo-cd v3.5.1 takes from its own tree (`replace ... => ./gitops-engine` in its go.mod)
// and that the Go module proxy does not serve, so neither package builds outside argo-cd's
// repository. claims.go restates EnforceClaims, getProjectFromRequest and enforceProjectToken
// (server/rbacpolicy/rbacpolicy.go at v3.5.1) and AppProject.ProjectPoliciesString
// (pkg/apis/application/v1alpha1/app_project_types.go at v3.5.1) over ArgoCD's util/rbac and
// util/jwt, which do build.
//
// A user policy that does not load stays in the enforcer: every later Enforce reaches
// getCasbinEnforcer, which panics (util/rbac/rbac.go at v3.5.1). A query that panics is
// recovered, answered false and listed in "panics".
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/golang-jwt/jwt/v5"
	log "github.com/sirupsen/logrus"
	"gopkg.in/yaml.v2"

	"github.com/argoproj/argo-cd/v3/util/assets"
	"github.com/argoproj/argo-cd/v3/util/rbac"
)

type query struct {
	User     string   `json:"user"`
	Groups   []string `json:"groups"`
	Resource string   `json:"resource"`
	Action   string   `json:"action"`
	Object   string   `json:"object"`
}

type input struct {
	Data     map[string]string `json:"data"`
	Projects []appProject      `json:"projects"`
	Queries  []query           `json:"queries"`
}

type output struct {
	LoadError *string `json:"loadError"`
	Verdicts  []bool  `json:"verdicts"`
	Panics    []int   `json:"panics"`
	// The text of each recovered panic, by query index (as a string), for the report.
	PanicText map[string]string `json:"panicText,omitempty"`
}

func main() {
	// ArgoCD logs failed enforcements and policy errors through logrus; stdout is the answer.
	log.SetOutput(os.Stderr)
	log.SetLevel(log.WarnLevel)
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "argocd-rbac-enforce:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	var req input
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("reading the request: %w", err)
	}
	if req.Data == nil {
		req.Data = map[string]string{}
	}

	// The AppProjects the server's lister would return, by name.
	projects := map[string]*appProject{}
	for i := range req.Projects {
		projects[req.Projects[i].Name] = &req.Projects[i]
	}

	// As the API server (server/server.go at v3.5.1): no clientset, the data is applied below.
	enf := rbac.NewEnforcer(nil, "argocd", "argocd-rbac-cm", nil)
	if err := enf.SetBuiltinPolicy(assets.BuiltinPolicyCSV); err != nil {
		return fmt.Errorf("the built-in policy does not load: %w", err)
	}
	policyEnf := &claimsEnforcer{enf: enf, projects: projects}
	enf.SetClaimsEnforcerFunc(policyEnf.EnforceClaims)

	// Enforcer.syncUpdate (util/rbac/rbac.go at v3.5.1), in its order.
	enf.SetDefaultRole(req.Data[rbac.ConfigMapPolicyDefaultKey])
	enf.SetMatchMode(req.Data[rbac.ConfigMapMatchModeKey])
	res := output{Verdicts: make([]bool, len(req.Queries)), Panics: []int{}}
	if err := onUpdated(policyEnf, req.Data); err != nil {
		msg := fmt.Errorf("error running policy update callback: %w", err).Error()
		res.LoadError = &msg
	} else if err := enf.SetUserPolicy(rbac.PolicyCSV(req.Data)); err != nil {
		msg := err.Error()
		res.LoadError = &msg
	}

	for i, q := range req.Queries {
		groups := q.Groups
		if groups == nil {
			groups = []string{}
		}
		claims := jwt.MapClaims{"sub": q.User, "groups": groups}
		ok, panicked := enforce(enf, claims, q)
		res.Verdicts[i] = ok
		if panicked != "" {
			res.Panics = append(res.Panics, i)
			if res.PanicText == nil {
				res.PanicText = map[string]string{}
			}
			res.PanicText[fmt.Sprint(i)] = panicked
		}
	}
	enc := json.NewEncoder(out)
	return enc.Encode(res)
}

// onUpdated is the server's policy-update callback (server/server.go at v3.5.1, rbacPolicyLoader).
func onUpdated(policyEnf *claimsEnforcer, data map[string]string) error {
	var scopes []string
	if scopesStr, ok := data[rbac.ConfigMapScopesKey]; scopesStr != "" && ok {
		scopes = make([]string, 0)
		if err := yaml.Unmarshal([]byte(scopesStr), &scopes); err != nil {
			return fmt.Errorf("error unmarshalling scopes: %w", err)
		}
	}
	policyEnf.scopes = scopes
	return nil
}

func enforce(enf *rbac.Enforcer, claims jwt.MapClaims, q query) (ok bool, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			ok, panicked = false, fmt.Sprint(r)
		}
	}()
	return enf.Enforce(claims, q.Resource, q.Action, q.Object), ""
}
