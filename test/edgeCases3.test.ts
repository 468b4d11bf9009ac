/**
 * The third round of values that planned cleanly and broke on a cluster, and of messages that said
 * what a library said: each class read from a stack value that passed before.
 */
import * as assert from "assert";
import { ConfigError, ConfigProblem } from "../components/config";
import { AddonConfig, parseAddonConfig } from "../stacks/config";
import { TEST_POLICY, TEST_SHA256, hubConfig, merged, withRegulatedArgoRbac } from "./harness";

function raw(patch: Record<string, unknown> = {}): Record<string, unknown> {
    const { "aws:region": _region, ...rest } = merged(hubConfig(), patch);
    return withRegulatedArgoRbac(rest);
}

const parse = (patch: Record<string, unknown> = {}, ambient: Parameters<typeof parseAddonConfig>[2] = {}): AddonConfig =>
    parseAddonConfig("hub", raw(patch), { awsRegion: "eu-west-1", ...ambient });

function problems(patch: Record<string, unknown>, ambient: Parameters<typeof parseAddonConfig>[2] = {}): ConfigProblem[] {
    try {
        parse(patch, ambient);
    } catch (err) {
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
        return err.problems;
    }
    assert.fail("configuration was accepted");
}

function problemFor(patch: Record<string, unknown>, key: string, allowed: RegExp): ConfigProblem {
    const all = problems(patch);
    const found = all.filter((p) => p.key === key && allowed.test(p.allowed));
    assert.ok(found.length >= 1, `expected a problem for ${key} matching ${allowed}, got: ${JSON.stringify(all, null, 1)}`);
    return found[0];
}

const SLO = 'slo:period_error_budget_remaining:ratio{sloth_service="{{args.service}}"}';

describe("edge cases, third round", () => {
    describe("PromQL whose result the Prometheus provider cannot judge", () => {
        it("refuses a range vector (a [range] selector, a subquery, either in parentheses)", () => {
            for (const query of [`${SLO}[5m]`, `(${SLO}[5m])`, `min_over_time(${SLO}[1h])[10m:1m]`, `${SLO}[5m] offset 1m`]) {
                const p = problemFor({ errorBudget: { query } }, "errorBudget.query", /not a range vector/);
                assert.ok(JSON.stringify(query).startsWith(p.given.replace(/\.\.\.$/, "")), p.given);
            }
        });

        it("refuses a string result, which the provider reports as an unsupported type at every measurement", () => {
            problemFor({ errorBudget: { query: '"{{args.service}}"' } }, "errorBudget.query", /not a string: .*Prometheus metric type not supported/);
            // Instant vectors and scalars stay accepted, range functions included.
            for (const query of [SLO, `last_over_time(${SLO}[5m])`, `scalar(${SLO})`, `min(${SLO}) * 1`, `-(${SLO})`]) {
                assert.strictEqual(parse({ errorBudget: { query } }).errorBudget.query, query);
            }
        });
    });

    describe("counts derived from durations fit Argo Rollouts' int32 fields", () => {
        it("refuses a freeze whose measurement count exceeds 2147483647", () => {
            const p = problemFor({ errorBudget: { recheckInterval: "1s", maxFreeze: "2147483647s" } }, "errorBudget.maxFreeze", /2147483648 times.*32-bit/);
            assert.strictEqual(p.given, '"2147483647s"');
            assert.strictEqual(parse({ errorBudget: { recheckInterval: "1s", maxFreeze: "2147483646s" } }).errorBudget.maxFreeze, "2147483646s");
        });

        it("refuses a canary pause longer than 2147483647 seconds (RolloutPause.DurationSeconds is an int32)", () => {
            const all = problems({ delivery: { prod: { standard: { stepPause: "596524h" } } } });
            assert.ok(
                all.some((p) => p.key.endsWith("stepPause") && /at most 2147483647s/.test(p.allowed)),
                JSON.stringify(all, null, 1),
            );
            assert.strictEqual(parse({ delivery: { prod: { standard: { stepPause: "596523h" } } } }).delivery.prod.standard.stepPause, "596523h");
            // The shortest pause, initialDelay + interval, is derived: it must fit too.
            problemFor({ analysis: { initialDelay: "596523h", interval: "1h" } }, "analysis.initialDelay", /at most 2147483647s.*int32/);
        });
    });

    describe("a ServiceMonitor our own default-deny policy would block", () => {
        it("refuses controller.serviceMonitor with controllerDefaultDeny and no scrape namespaces", () => {
            problemFor(
                { controller: { serviceMonitor: true }, network: { controllerDefaultDeny: true } },
                "network.metricsScrapeNamespaces",
                /ServiceMonitor's scrapes would all be denied/,
            );
            assert.deepStrictEqual(
                parse({ controller: { serviceMonitor: true }, network: { controllerDefaultDeny: true, metricsScrapeNamespaces: ["monitoring"] } }).network
                    .metricsScrapeNamespaces,
                ["monitoring"],
            );
        });
    });

    describe("no parser library's wording reaches the user", () => {
        it("a certificate that does not parse is not explained in OpenSSL's words", () => {
            const spoke = {
                cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", kubeconfigContext: "preprod" },
                gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
                plugin: { sha256: TEST_SHA256 },
                policy: TEST_POLICY,
                argocd: { projects: {}, applicationSets: {} },
                mimir: {
                    readEndpoint: "https://mimir-preprod.hub.platform.test/prometheus",
                    readCaBundle: "-----BEGIN CERTIFICATE-----\nMIIBAAAA\n-----END CERTIFICATE-----\n",
                },
            };
            try {
                parseAddonConfig("preprod", spoke);
                assert.fail("the bundle was accepted");
            } catch (e) {
                assert.ok(e instanceof ConfigError, String(e));
                const p = e.problems.find((x) => x.key === "mimir.readCaBundle");
                assert.ok(p, e.message);
                assert.match(p.allowed, /certificate 1 does not parse as X\.509/);
                assert.doesNotMatch(p.allowed, /error:|asn1|routines|header too long|Invalid/i);
            }
        });
    });

    describe("a spoke's message about its hub names mimir.hubStack", () => {
        const spoke = (hubStack: string) => ({
            cluster: { name: "preprod", role: "spoke", mimirTenant: "preprod", kubeconfigContext: "preprod" },
            gateway: { name: "internal", namespace: "gateway-system", listener: "https" },
            plugin: { sha256: TEST_SHA256 },
            policy: TEST_POLICY,
            argocd: { projects: {}, applicationSets: {} },
            mimir: { hubStack },
        });
        const project = [
            { stack: "hub", cluster: "hub", mimirTenant: "hub", spokes: [{ name: "staging", tenant: "staging" }] },
            { stack: "hub-b", cluster: "hub-b", mimirTenant: "hub-b", spokes: [{ name: "preprod", tenant: "preprod-old" }] },
            { stack: "preprod", cluster: "preprod", mimirTenant: "preprod", spokes: [] },
        ];
        const refusals = (hubStack: string): ConfigProblem[] => {
            try {
                parseAddonConfig("preprod", spoke(hubStack), { projectStacks: project });
            } catch (e) {
                assert.ok(e instanceof ConfigError, String(e));
                return e.problems;
            }
            return [];
        };

        it("refuses a hubStack whose hub does not route this spoke, naming the hub that does", () => {
            const all = refusals("acme/argo-rollouts-addon/hub");
            const p = all.find((x) => x.key === "mimir.hubStack");
            assert.ok(p, JSON.stringify(all, null, 1));
            assert.match(p.allowed, /Pulumi\.hub\.yaml has no spokes entry for preprod.*Pulumi\.hub-b\.yaml does: name that hub's stack/);
            // The other hub's tenant is not this spoke's to fix while hubStack names another hub.
            assert.ok(!all.some((x) => x.key === "cluster.mimirTenant"), JSON.stringify(all, null, 1));
            // Where hubStack names the hub that lists it, the tenant is the key to fix, as before.
            const named = refusals("acme/argo-rollouts-addon/hub-b");
            assert.ok(!named.some((x) => x.key === "mimir.hubStack"), JSON.stringify(named, null, 1));
            assert.ok(
                named.some((x) => x.key === "cluster.mimirTenant" && /Pulumi\.hub-b\.yaml lists preprod under tenant preprod-old/.test(x.allowed)),
                JSON.stringify(named, null, 1),
            );
        });
    });
});
