/**
 * Another Pulumi stack's objects: the hub's objects written first by another stack of the program
 * (`hub-old`, in a backend of its own: a renamed or removed stack, or a second one pointed at the same
 * cluster). Its field manager is `pulumi-kubernetes-<random>` like every stack's (pulumi-kubernetes
 * v4.32.0 provider/pkg/provider/provider.go, fieldManagerName), so only the stack's mark
 * (components/cluster/adoption.ts) tells them apart: the hub's preview and up refuse, naming each
 * object and the other stack, and change nothing.
 */
import assert from "assert";
import { STACK_ANNOTATION } from "../../components/cluster/adoption";
import { ROLLOUTS_CRDS } from "../../components/argoRollouts";
import { world } from "../lib/context";
import { failure } from "../lib/pulumi";

const KINDS = "namespaces,deployments.apps,configmaps,clusterroles.rbac.authorization.k8s.io,customresourcedefinitions.apiextensions.k8s.io";

/** About how long this file runs beside another on 2 cores: orders the side-by-side run (e2e/lib/pool.ts). */
export const SECONDS = 150;

describe("foreign owner", function () {
    it("foreign-pulumi-owner", async function () {
        const w = await world();
        const target = await w.cluster("foreign", "hub");
        const c = target.cluster;
        // The other stack: the same program and configuration, its own name and state.
        const old = w.pulumi("foreign-old");
        await w.initStack(old, { ...target, stack: "hub-old" });
        const up = await old.pulumi(["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"], { stack: "hub-old" });
        assert.strictEqual(up.status, 0, `the other stack's up failed:\n${failure(up)}`);
        assert.strictEqual(
            c.kubectl(["get", "crd", ROLLOUTS_CRDS[0].name, "-o", `jsonpath={.metadata.annotations.${STACK_ANNOTATION.replace(/\./g, "\\.")}}`]),
            "argo-rollouts-addon/hub-old",
        );
        const snapshot = () =>
            c.kubectl([
                "get",
                KINDS,
                "-A",
                "-o",
                'jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}={.metadata.resourceVersion}{"\\n"}{end}',
            ]);
        const before = snapshot();

        const env = w.pulumi("foreign");
        await w.initStack(env, target);
        for (const args of [
            ["preview", "--policy-pack", "policy-pack"],
            ["up", "--yes", "--skip-preview", "--policy-pack", "policy-pack"],
        ]) {
            const r = await env.pulumi(args, { stack: "hub" });
            const out = r.stdout + r.stderr;
            assert.notStrictEqual(r.status, 0, `pulumi ${args[0]} of hub took another stack's objects for its own`);
            assert.match(
                out,
                /stack "hub": \d+ object\(s\) this stack creates already exist, made by another Pulumi stack \(argo-rollouts-addon\/hub-old\), and argo-rollouts-addon:cluster\.adoptExisting is false/,
                failure(r),
            );
            for (const named of [
                "Namespace argo-rollouts [stack], Pulumi stack argo-rollouts-addon/hub-old, managers: pulumi-kubernetes-",
                "Deployment argo-rollouts/argo-rollouts [chart], Pulumi stack argo-rollouts-addon/hub-old, managers: pulumi-kubernetes-",
                ...ROLLOUTS_CRDS.map(
                    (crd) => `CustomResourceDefinition ${crd.name} [crds], Pulumi stack argo-rollouts-addon/hub-old, managers: pulumi-kubernetes-`,
                ),
            ]) {
                assert.ok(out.includes(named), `pulumi ${args[0]}: ${named} is not named:\n${failure(r)}`);
            }
            assert.doesNotMatch(out, /kubernetes:[^\n]*\b(created|creating|updated|updating)\b/i, `pulumi ${args[0]} applied an object:\n${failure(r)}`);
        }
        assert.strictEqual(snapshot(), before, "the refused preview or up changed the other stack's objects");
    });
});
