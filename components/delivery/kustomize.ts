/**
 * The tier strategies as files (ADR-056 D3): one kustomize Component per strategy a stack configures,
 * holding the library's rendering for a placeholder app and `replacements` that put the real app's
 * values in place from its base; tools/delivery.ts writes what these return. A Component's patches
 * and replacements run before the overlay's own transformers (kubernetes-sigs/kustomize api/krusty,
 * v5), so a source must already be in the base and is read as patched; a replacement selects its
 * source by kind, so one app (one Rollout, one HTTPRoute) per overlay.
 */
import * as YAML from "yaml";
import { GATEWAY_API_PLUGIN } from "../argoRollouts";
import { DeliveryPlan, deliveryPlan } from "./strategy";
import { AppSpec, PREVIEW_HEADER_VALUE, TierStrategy } from "./types";

/** The placeholder app: its name has no `-`, so a replacement with delimiter `-` and index 0 turns `app-stable` into `<name>-stable`. */
export const COMPONENT_APP: AppSpec = {
    name: "app",
    namespace: "app-namespace",
    port: 8080,
    route: { name: "app", gateway: { name: "app-gateway", namespace: "app-namespace", listener: "app-listener" }, hostnames: ["app.invalid"] },
};

/** The library's plan of a strategy for the placeholder app. */
export function componentPlan(s: TierStrategy): DeliveryPlan {
    return deliveryPlan(s.routed ? COMPONENT_APP : { ...COMPONENT_APP, route: undefined }, s.options);
}

type Json = Record<string, unknown>;
type Target = { select: { group?: string; kind: string; name?: string }; fieldPaths: string[]; options?: Json };
type Replacement = { source: { group: string; kind: string; fieldPath: string }; targets: Target[] };

const ROLLOUT = { group: "argoproj.io", kind: "Rollout" };
const ROUTE = { group: "gateway.networking.k8s.io", kind: "HTTPRoute" };
const NAME_LABEL = "metadata.labels.[app.kubernetes.io/name]";

/**
 * The HTTPRoute patch: the app's first rule goes to the strategy's Services, the base's matches,
 * filters and port kept, and a preview header rule goes first (routes.ts previewHeaderRule). `added`:
 * the backends the port is written to, where they end up.
 */
function routeOps(plan: DeliveryPlan) {
    const rules = plan.httpRoute!.spec.rules;
    const before = rules.slice(0, -1);
    const [first, ...more] = rules[rules.length - 1].backendRefs;
    const ops: Json[] = [
        { op: "replace", path: "/spec/rules/0/backendRefs/0/name", value: first.name },
        ...(["group", "kind", "weight"] as const).map((k) => ({ op: "add", path: `/spec/rules/0/backendRefs/0/${k}`, value: first[k] })),
        ...more.map((b, i) => ({ op: "add", path: `/spec/rules/0/backendRefs/${i + 1}`, value: b })),
        ...before.map((rule, i) => ({ op: "add", path: `/spec/rules/${i}`, value: rule })),
    ];
    const added = [
        ...more.map((_b, i) => `spec.rules.${before.length}.backendRefs.${i + 1}`),
        ...before.flatMap((rule, i) => rule.backendRefs.map((_b, j) => `spec.rules.${i}.backendRefs.${j}`)),
    ];
    const mainAt = `spec.rules.${before.length}.backendRefs.0`;
    return { ops, portAt: `${mainAt}.port`, added, mainAt, before: before.length };
}

/** The paths in the Rollout strategy that name one of the app's Services. */
function serviceFields(plan: DeliveryPlan): string[] {
    const [shape, stable, canary] = "canary" in plan.strategy ? ["canary", "stableService", "canaryService"] : ["blueGreen", "activeService", "previewService"];
    return "canary" in plan.strategy && !plan.strategy.canary.stableService ? [] : [`spec.strategy.${shape}.${stable}`, `spec.strategy.${shape}.${canary}`];
}

/**
 * The namespaced objects the component adds: the Services. A regulated namespace's approval roles
 * are the platform's (the policy stage's approvalBindings.ts), never a tenant's to ship.
 */
function addedObjects(plan: DeliveryPlan): Json[] {
    return plan.services.map((o) => {
        const { namespace: _ns, ...metadata } = o.metadata;
        return { ...o, metadata } as Json;
    });
}

/** The `replacements` that put the app's values from its base in place of the placeholder's. */
function replacements(plan: DeliveryPlan, route: ReturnType<typeof routeOps> | undefined): Replacement[] {
    const out: Replacement[] = [];
    const from = (kind: typeof ROLLOUT | typeof ROUTE, fieldPath: string, ...targets: Target[]) => out.push({ source: { ...kind, fieldPath }, targets });
    const objects = addedObjects(plan) as { kind: string; apiVersion: string; metadata: { name: string } }[];
    const to = (fieldPaths: string[], options?: Json) => (o: (typeof objects)[number]) => ({
        select: { ...(o.apiVersion.includes("/") ? { group: o.apiVersion.split("/")[0] } : {}), kind: o.kind, name: o.metadata.name },
        fieldPaths,
        ...(options ? { options } : {}),
    });
    const services = objects.filter((o) => o.kind === "Service");
    if (services.length > 0) {
        from(ROLLOUT, "spec.selector.matchLabels", ...services.map(to(["spec.selector"])));
        from(ROLLOUT, "spec.template.spec.containers.0.ports.0.containerPort", ...services.map(to(["spec.ports.0.targetPort"])));
    }
    const prefixed = { delimiter: "-", index: 0 };
    if (route) {
        const added = route.added.length > 0 ? [{ select: { ...ROUTE }, fieldPaths: route.added.map((p) => `${p}.port`) }] : [];
        from(ROUTE, route.portAt, ...services.map(to(["spec.ports.0.port"])), ...added);
        if (route.before > 0) {
            // The header rule takes the path of the app's own first match: across rules the longest path
            // wins before any header match does (routes.ts previewHeaderRule), so "/" would lose to a longer prefix.
            const paths = Array.from({ length: route.before }, (_x, i) => `spec.rules.${i}.matches.0.path`);
            from(ROUTE, `spec.rules.${route.before}.matches.0.path`, { select: { ...ROUTE }, fieldPaths: paths });
        }
        if ("canary" in plan.strategy) {
            from(ROUTE, "metadata.name", {
                select: { ...ROLLOUT },
                fieldPaths: [`spec.strategy.canary.trafficRouting.plugins.${GATEWAY_API_PLUGIN}.httpRoute`],
            });
        }
    }
    if (objects.length > 0) {
        // The app's name: exact in the labels, the prefix of every name derived from it; the objects' own
        // names come last, since the targets before select them by the placeholder's.
        const routeNames = route ? [`${route.mainAt}.name`, ...route.added.map((p) => `${p}.name`)].sort() : [];
        from(
            ROLLOUT,
            "metadata.name",
            ...objects.map(to([NAME_LABEL])),
            ...(serviceFields(plan).length > 0 ? [{ select: { ...ROLLOUT }, fieldPaths: serviceFields(plan), options: prefixed }] : []),
            ...(route ? [{ select: { ...ROUTE }, fieldPaths: routeNames, options: prefixed }] : []),
            ...objects.map(to(["metadata.name"], prefixed)),
        );
    }
    return out;
}

/**
 * The name references kustomize follows when the overlay renames (`namePrefix`, `nameSuffix`): its
 * built-in ones know no Rollout or HTTPRoute field (kubernetes-sigs/kustomize
 * api/internal/konfig/builtinpluginconsts/namereference.go at kustomize/v5.8.1). A Component's
 * `configurations` merge into the accumulator of the kustomization that names it
 * (api/internal/target/kusttarget.go, accumulateTarget and accumulateDirectory), whose back
 * references are fixed once every prefix, suffix and namespace is set (makeCustomizedResMap,
 * FixBackReferences); a reference follows an object of the referrer's namespace only
 * (api/filters/nameref/nameref.go, sameCurrentNamespaceAsReferrer). The objects the component adds
 * name no namespace: the overlay's `namespace:` or the Application's destination sets it, where a
 * replacement from the Rollout's would fail on a base that names none
 * (api/filters/replacement/replacement.go, getReplacement).
 */
function nameReferences(plan: DeliveryPlan, routed: boolean): Json | undefined {
    const services = [
        ...serviceFields(plan).map((p) => ({ ...ROLLOUT, path: p.replace(/\./g, "/") })),
        ...(routed ? [{ ...ROUTE, path: "spec/rules/backendRefs/name" }] : []),
    ];
    // A `/` in a field name is escaped (kyaml/utils/pathsplitter.go, PathSplitter).
    const plugin = `spec/strategy/canary/trafficRouting/plugins/${GATEWAY_API_PLUGIN.replace("/", "\\/")}/httpRoute`;
    const nameReference = [
        ...(services.length > 0 ? [{ kind: "Service", version: "v1", fieldSpecs: services }] : []),
        ...(routed && "canary" in plan.strategy ? [{ ...ROUTE, fieldSpecs: [{ ...ROLLOUT, path: plugin }] }] : []),
    ];
    return nameReference.length > 0 ? { nameReference } : undefined;
}

const yaml = (v: unknown): string => YAML.stringify(v, { lineWidth: 0, aliasDuplicateObjects: false });
const header = (s: TierStrategy) => `# ${s.id}: rendered by \`npm run delivery\` from the stack's delivery section; change the stack file, not this file.\n`;

/** The files of one strategy's kustomize Component. */
export function renderComponent(s: TierStrategy): Record<string, string> {
    const plan = componentPlan(s);
    const route = plan.httpRoute ? routeOps(plan) : undefined;
    const refs = nameReferences(plan, route !== undefined);
    const file = (objects: Json[]) => (objects.length > 0 ? header(s) + objects.map(yaml).join("---\n") : undefined);
    const files: Record<string, string | undefined> = {
        "services.yaml": file(addedObjects(plan)),
        // `add` replaces the base's strategy whole (RFC 6902); a merge would leave the base's canary beside a blue/green.
        "rollout-strategy.yaml": header(s) + yaml([{ op: "add", path: "/spec/strategy", value: plan.strategy }]),
        "httproute-backends.yaml": route && header(s) + yaml(route.ops),
        "name-references.yaml": refs && header(s) + yaml(refs),
    };
    const resources = ["services.yaml"].filter((f) => files[f] !== undefined);
    const patches = [{ path: "rollout-strategy.yaml", target: { ...ROLLOUT } }, ...(route ? [{ path: "httproute-backends.yaml", target: { ...ROUTE } }] : [])];
    const kustomization = {
        apiVersion: "kustomize.config.k8s.io/v1alpha1",
        kind: "Component",
        ...(resources.length > 0 ? { resources } : {}),
        ...(refs ? { configurations: ["name-references.yaml"] } : {}),
        patches,
    };
    files["kustomization.yaml"] = header(s) + yaml({ ...kustomization, replacements: replacements(plan, route) });
    return Object.fromEntries(Object.entries(files).filter((e): e is [string, string] => e[1] !== undefined));
}

/** The README of the output folder: what each component does and how a tenant uses it. */
export function renderReadme(stack: string, strategies: readonly TierStrategy[]): string {
    const example = strategies.find((s) => s.tier === "prod")?.id ?? strategies[0]?.id ?? "prod-standard-canary";
    const rows = strategies.map((s) => {
        const plan = componentPlan(s);
        const adds = [
            ...plan.services.map((x) => `Service \`<app>${x.metadata.name.slice(COMPONENT_APP.name.length)}\``),
            ...(plan.httpRoute ? ["the HTTPRoute's backendRefs"] : []),
        ];
        return `| \`${s.id}/\` | ${s.name === s.tier ? s.tier : `${s.name} (${s.tier})`} | ${s.prodClass ?? "-"} | ${s.shape} | ${plan.behaviour} | ${adds.join(", ") || "the Rollout's strategy only"} |\n`;
    });
    const gated = strategies.flatMap((s) => (s.options.previewGate && "header" in s.options.previewGate ? [[s.id, s.options.previewGate.header]] : []));
    return `# Delivery strategies of stack \`${stack}\`

Rendered by \`npm run delivery\` from the stack's \`delivery\` section (ADR-056 D3: the strategy is a
property of the tier, never of the app). The platform team changes a tier in its stack file and
renders these again; nobody edits them. See docs/tenants/delivery-strategies.md.

## How to use one

Add the component of your app's tier to the overlay of that stage, beside your app's base:

\`\`\`yaml
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
components:
  - <path to this folder>/${example}
\`\`\`

The component takes your app's name, container port, Service port, pod labels and HTTPRoute from
your base (kustomize \`replacements\`), so the base must hold one Rollout with its pod template (not
a \`workloadRef\`) and, for a routed strategy, one HTTPRoute whose first rule's first backendRef is
your app's Service. One app per overlay. The Rollout's own \`strategy\` is replaced whole. The
overlay may rename (\`namePrefix\`, \`nameSuffix\`: the component's \`name-references.yaml\` has
the references follow) and set \`namespace:\`; name the namespace there or nowhere (the Application's
destination), since a base that names its own keeps the old names under a prefix or suffix.

| component | tier | class | shape | what it does | adds |
|---|---|---|---|---|---|
${rows.join("")}
## Notes

- In a regulated namespace the platform binds its approver role to the stack's
  \`policy.regulated.approverGroups\` and its deployer role to \`deployerGroups\` (RoleBindings
  \`argo-rollouts-addon:rollout-approver\` and \`-deployer\`); only an approver continues past the
  approval pause (\`kubectl argo rollouts promote\`). The components ship no Role or RoleBinding.
- The error-budget freeze (ADR-056 D6) needs the app's SLO, which a component cannot know: these
  components carry no freeze.
${gated.map(([id, header]) => `- \`${id}/\` gates the preview on test traffic: send requests with \`${header}: ${PREVIEW_HEADER_VALUE}\` to your hostname, or the rollout pauses before the switch.\n`).join("")}`;
}

/** Every file of the output folder, by path relative to it: one folder per strategy and the README. */
export function renderComponents(stack: string, strategies: readonly TierStrategy[]): Record<string, string> {
    const files = strategies.flatMap((s) => Object.entries(renderComponent(s)).map(([file, text]) => [`${s.id}/${file}`, text]));
    return { "README.md": renderReadme(stack, strategies), ...Object.fromEntries(files) };
}

/**
 * The stack output `deliveryStrategies`, for tools that read `pulumi stack output --json`: each
 * configured strategy by its component's name, its resolved options, and the Rollout's
 * `spec.strategy` for the placeholder app `app` (Services `app-stable`, ...; route `app`).
 */
export function deliveryStrategiesOutput(strategies: readonly TierStrategy[]): Record<string, Record<string, unknown>> {
    return Object.fromEntries(
        strategies.map((s) => {
            const { strategy, behaviour } = componentPlan(s);
            const o = s.options;
            const prod = s.tier === "prod";
            const output = {
                tier: s.tier,
                ...(s.name !== s.tier ? { name: s.name } : {}),
                ...(s.prodClass ? { prodClass: s.prodClass } : {}),
                shape: s.shape,
                routed: s.routed,
                ...(prod && s.shape === "canary" ? { steps: [...(o.steps ?? [])], stepPause: o.stepPause } : {}),
                ...(prod ? { autoPromotion: o.autoPromotion, errorBudgetFreeze: o.errorBudgetFreeze } : {}),
                ...(o.previewGate && "header" in o.previewGate ? { previewHeader: o.previewGate.header } : {}),
            };
            return [s.id, { ...output, behaviour, strategy }];
        }),
    );
}
