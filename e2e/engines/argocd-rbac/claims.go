package main

// The API server's claims check, restated (main.go says why it is not imported): EnforceClaims,
// getProjectFromRequest and enforceProjectToken of server/rbacpolicy/rbacpolicy.go, and
// AppProject.ProjectPoliciesString of pkg/apis/application/v1alpha1/app_project_types.go, both
// argoproj/argo-cd at v3.5.1. The enforcement itself is ArgoCD's util/rbac and util/jwt.

import (
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"

	jwtutil "github.com/argoproj/argo-cd/v3/util/jwt"
	"github.com/argoproj/argo-cd/v3/util/rbac"
)

// projectRole is the part of v1alpha1.ProjectRole the policy is made of.
type projectRole struct {
	Name     string   `json:"name"`
	Policies []string `json:"policies"`
	Groups   []string `json:"groups"`
}

// appProject is the part of v1alpha1.AppProject the policy is made of.
type appProject struct {
	Name  string        `json:"name"`
	Roles []projectRole `json:"roles"`
}

// policiesString is AppProject.ProjectPoliciesString: per role, the implicit `get` of its own
// project, its policies as written, and a `g` line per group.
func (p *appProject) policiesString() string {
	var lines []string
	for _, r := range p.Roles {
		lines = append(lines, fmt.Sprintf("p, proj:%s:%s, projects, get, %s, allow", p.Name, r.Name, p.Name))
		lines = append(lines, r.Policies...)
		for _, g := range r.Groups {
			lines = append(lines, fmt.Sprintf("g, %s, proj:%s:%s", g, p.Name, r.Name))
		}
	}
	return strings.Join(lines, "\n")
}

// claimsEnforcer is RBACPolicyEnforcer, with a map by name for the AppProject lister.
type claimsEnforcer struct {
	enf      *rbac.Enforcer
	projects map[string]*appProject
	scopes   []string
}

// EnforceClaims is RBACPolicyEnforcer.EnforceClaims.
func (p *claimsEnforcer) EnforceClaims(claims jwt.Claims, rvals ...any) bool {
	mapClaims, err := jwtutil.MapClaims(claims)
	if err != nil {
		return false
	}
	subject := jwtutil.GetUserIdentifier(mapClaims)

	// The project of the object, if any: its roles become the runtime policy.
	var runtimePolicy, projName string
	if proj := p.projectOf(rvals...); proj != nil {
		if parts := strings.Split(subject, ":"); len(parts) == 3 && parts[0] == "proj" {
			return p.enforceProjectToken(subject, proj, rvals...)
		}
		runtimePolicy = proj.policiesString()
		projName = proj.Name
	}
	enforcer := p.enf.CreateEnforcerWithRuntimePolicy(projName, runtimePolicy)

	// The subject itself (EnforceWithCustomEnforcer also tries the default role).
	if p.enf.EnforceWithCustomEnforcer(enforcer, append([]any{subject}, rvals[1:]...)...) {
		return true
	}

	scopes := p.scopes
	if scopes == nil {
		scopes = rbac.DefaultScopes
	}
	groups := jwtutil.GetScopeValues(mapClaims, scopes)
	grouping, err := enforcer.GetGroupingPolicy()
	if err != nil {
		return false
	}
	// Only a group that is the subject of some `g` line is tried, once.
	for _, group := range groups {
		for _, g := range grouping {
			if g[0] == group {
				if p.enf.EnforceWithCustomEnforcer(enforcer, append([]any{group}, rvals[1:]...)...) {
					return true
				}
				break
			}
		}
	}
	return false
}

// projectOf is getProjectFromRequest: the project named by a project-scoped object
// (`<project>/...`), or by the object of a `projects` request.
func (p *claimsEnforcer) projectOf(rvals ...any) *appProject {
	if len(rvals) != 4 {
		return nil
	}
	res, ok1 := rvals[1].(string)
	obj, ok2 := rvals[3].(string)
	if !ok1 || !ok2 {
		return nil
	}
	switch res {
	case rbac.ResourceApplicationSets, rbac.ResourceApplications, rbac.ResourceRepositories, rbac.ResourceClusters, rbac.ResourceLogs, rbac.ResourceExec:
		if parts := strings.Split(obj, "/"); len(parts) >= 2 {
			return p.projects[parts[0]]
		}
	case rbac.ResourceProjects:
		return p.projects[obj]
	}
	return nil
}

// enforceProjectToken: a project role's token acts only in its own project.
func (p *claimsEnforcer) enforceProjectToken(subject string, proj *appProject, rvals ...any) bool {
	parts := strings.Split(subject, ":")
	if len(parts) != 3 || parts[1] != proj.Name {
		return false
	}
	return p.enf.EnforceRuntimePolicy(proj.Name, proj.policiesString(), append([]any{subject}, rvals[1:]...)...)
}
