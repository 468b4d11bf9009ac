/**
 * The pack's policies: each guardrail check as a mandatory Pulumi policy. Kept apart from
 * index.ts, which starts the pack's server, so tests can call the policies directly.
 */
import type { PolicyResource, ResourceValidationArgs, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import { GuardedResource, RESOURCE_CHECKS, STACK_CHECKS } from "../components/guardrails";

/** A resource under validation, in the checks' shape. The engine does not pass retainOnDelete. */
export function fromArgs(args: Pick<ResourceValidationArgs, "urn" | "type" | "name" | "props" | "opts" | "provider">): GuardedResource {
    return {
        urn: args.urn,
        type: args.type,
        name: args.name,
        props: args.props,
        protect: args.opts.protect,
        ...(args.opts.parent ? { parent: args.opts.parent } : {}),
        dependencies: [],
        component: args.provider === undefined,
    };
}

/** A resource of the whole stack, with its parent and dependencies, in the checks' shape. */
export function fromPolicyResource(
    r: Pick<PolicyResource, "urn" | "type" | "name" | "props" | "opts" | "provider" | "parent" | "dependencies">,
): GuardedResource {
    return {
        urn: r.urn,
        type: r.type,
        name: r.name,
        props: r.props,
        protect: r.opts.protect,
        ...(r.parent ? { parent: r.parent.urn } : {}),
        dependencies: r.dependencies.map((d) => d.urn),
        component: r.provider === undefined,
    };
}

export const resourcePolicies: ResourceValidationPolicy[] = RESOURCE_CHECKS.map((c) => ({
    name: c.name,
    description: c.description,
    enforcementLevel: "mandatory",
    validateResource: (args, reportViolation) => {
        for (const message of c.check(fromArgs(args))) {
            reportViolation(`${c.description} ${args.name}: ${message}`);
        }
    },
}));

export const stackPolicies: StackValidationPolicy[] = STACK_CHECKS.map((c) => ({
    name: c.name,
    description: c.description,
    enforcementLevel: "mandatory",
    validateStack: (args, reportViolation) => {
        for (const message of c.check(args.resources.map(fromPolicyResource))) {
            reportViolation(`${c.description} ${message}`);
        }
    },
}));

export const policies = [...resourcePolicies, ...stackPolicies];
