/** Which live objects are this stack's (components/cluster/existing.ts, adoption.ts): the stack's mark decides, not the provider's field manager. */
import * as assert from "assert";
import * as pulumi from "@pulumi/pulumi";
import { STACK_ANNOTATION, markStackObjects } from "../components/cluster/adoption";
import { DeclaredRef, existingObjectsRefusal, findExisting } from "../components/cluster/existing";
import type { LiveObject } from "../components/cluster/live";

const PULUMI = [{ manager: "pulumi-kubernetes-3c1d9f2a", operation: "Apply" }];
const HELM = [{ manager: "helm", operation: "Update" }];
const MARK = "argo-rollouts-addon/hub";

describe("this stack's objects", () => {
    it("passes its own mark and unmarked Pulumi objects (applied before the mark), refuses another stack's mark and another tool's", async () => {
        const cases: [string, LiveObject["metadata"], string | undefined][] = [
            ["own", { annotations: { [STACK_ANNOTATION]: MARK }, managedFields: PULUMI }, undefined],
            ["before-mark", { managedFields: PULUMI }, undefined],
            ["renamed", { annotations: { [STACK_ANNOTATION]: "argo-rollouts-addon/hub-old" }, managedFields: PULUMI }, "argo-rollouts-addon/hub-old"],
            ["helm", { managedFields: HELM }, "-"],
            ["absent", undefined, undefined],
        ];
        const refs: DeclaredRef[] = cases.map(([name]) => ({ apiVersion: "v1", kind: "ConfigMap", namespace: "argo-rollouts", name, declaredBy: "stack" }));
        const objects = new Map(cases.map(([name, metadata]) => [`/api/v1/namespaces/argo-rollouts/configmaps/${name}`, metadata && { metadata }]));
        const found = await findExisting(refs, { get: async (path) => objects.get(path) }, MARK);
        assert.deepStrictEqual(
            found.map((f) => [f.ref.name, f.stack ?? "-"]),
            cases.filter(([, , owner]) => owner).map(([name, , owner]) => [name, owner]),
        );
        assert.strictEqual(
            existingObjectsRefusal("hub", found)?.split("\n").slice(0, 3).join("\n"),
            'stack "hub": 2 object(s) this stack creates already exist, made by another tool or another Pulumi stack (argo-rollouts-addon/hub-old), and argo-rollouts-addon:cluster.adoptExisting is false:\n' +
                "  ConfigMap argo-rollouts/renamed [stack], Pulumi stack argo-rollouts-addon/hub-old, managers: pulumi-kubernetes-3c1d9f2a (Apply)\n" +
                "  ConfigMap argo-rollouts/helm [stack], managers: helm (Update)",
        );
    });

    it("marks every whole object with <project>/<stack>, never a patch or a read", async () => {
        await pulumi.runtime.setMocks({ newResource: () => ({ id: "x", state: {} }), call: () => ({}) }, "argo-rollouts-addon", "hub");
        const args = (type: string, kind: string, opts: pulumi.ResourceOptions = {}) => ({
            type,
            name: "x",
            custom: true,
            props: { kind, metadata: { name: "x" } },
            opts,
        });
        const marked = await markStackObjects(args("kubernetes:core/v1:ConfigMap", "ConfigMap"));
        assert.deepStrictEqual(marked?.props.metadata, { name: "x", annotations: { [STACK_ANNOTATION]: MARK } });
        assert.strictEqual(await markStackObjects(args("kubernetes:core/v1:ConfigMapPatch", "ConfigMap")), undefined);
        assert.strictEqual(await markStackObjects(args("kubernetes:core/v1:ConfigMap", "ConfigMap", { id: "x" })), undefined);
    });
});
