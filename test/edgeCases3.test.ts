/**
 * The third round of values that planned cleanly and broke on a cluster, and of messages that said
 * what a library said: each class read from a stack value that passed before.
 */
import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ConfigError, ConfigProblem } from "../components/config";
import { StackYamlError, configText, parseStackYaml, resolvePlain } from "../components/config/stackYaml";
import { readProjectStacks } from "../components/config/load";
import { readStackFile } from "../tools/stackFile";
import { writeStackFile } from "../e2e/lib/stacks";
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

    describe("stack files read as the Pulumi CLI reads them (yaml.v3)", () => {
        // gopkg.in/yaml.v3 v3.0.1 resolve.go, decoding a plain scalar into `any` (each checked against yaml.v3 itself).
        const CASES: [string, unknown][] = [
            ["1_000", 1000],
            ["1__0", 10],
            ["017", 15],
            ["08", 8],
            ["0o17", 15],
            ["0x1F", 31],
            ["0X1f", 31],
            ["0b101", 5],
            ["-0b101", -5],
            ["+12", 12],
            ["-0", 0],
            ["1e3", 1000],
            [".5", 0.5],
            ["+.5", 0.5],
            ["1.", 1],
            ["1_000.5", 1000.5],
            ["9223372036854775807", 9223372036854775807n],
            ["9223372036854775808", 9223372036854775808n],
            ["18446744073709551616", 18446744073709551616],
            ["1e400", "1e400"],
            ["_1", "_1"],
            [".5_0", 0.5],
            [".5__0", ".5__0"],
            ["0x", "0x"],
            ["1e", "1e"],
            ["1:20", "1:20"],
            ["yes", "yes"],
            ["No", "No"],
            ["on", "on"],
            ["True", true],
            ["FALSE", false],
            ["tRUE", "tRUE"],
            ["~", null],
            ["", null],
            ["Null", null],
            ["nULL", "nULL"],
            ["2001-12-14", "2001-12-14 00:00:00 +0000 UTC"],
            ["2001-02-29", "2001-02-29"],
            ["2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.1 -0500 -0500"],
            ["Infinity", "Infinity"],
            ["-inf", "-inf"],
            [".", "."],
            ["0.1.2", "0.1.2"],
            ["<<", "<<"],
        ];

        it("resolves plain scalars as yaml.v3 does", () => {
            for (const [text, want] of CASES) {
                const got = resolvePlain(text);
                if (typeof want === "number" && Number.isNaN(want)) {
                    assert.ok(Number.isNaN(got), text);
                } else {
                    assert.deepStrictEqual(got, want, `${JSON.stringify(text)} resolved to ${String(got)}`);
                }
            }
            assert.ok(Number.isNaN(resolvePlain(".nan") as number));
            assert.strictEqual(resolvePlain("-.Inf"), -Infinity);
        });

        it('hands the program what the CLI hands it: numbers as JSON, an empty value as "", quoted text as is', () => {
            const doc = parseStackYaml(
                'config:\n  a: 1_000\n  b:\n  c: "1_000"\n  d: 1e3\n  e: 017\n  f: {x: 0x10, y: ~, z: yes}\n  g: !!str 12\n  h: 12345678901234567890\n',
            ) as { config: Record<string, never> };
            const text = Object.fromEntries(Object.entries(doc.config).map(([k, v]) => [k, configText(v)]));
            assert.deepStrictEqual(text, {
                a: "1000",
                b: "",
                c: "1_000",
                d: "1000",
                e: "15",
                f: '{"x":16,"y":null,"z":"yes"}',
                g: "12",
                h: "12345678901234567890",
            });
        });

        it("refuses NaN and infinities, which the CLI cannot store", () => {
            assert.throws(() => configText(parseStackYaml("a: .inf") as never), /cannot store/);
        });

        it("merges << as yaml.v3 does: the map's own keys win, then each merged map in order", () => {
            const doc = parseStackYaml("base: &b {x: 1, y: 2}\nother: &o {y: 3, z: 4}\nm:\n  <<: [*b, *o]\n  x: 9\n");
            assert.deepStrictEqual((doc as Record<string, unknown>).m, { x: 9, y: 2, z: 4 });
        });

        it("the offline plan reads a stack file's empty value and 1_000 as `pulumi up` does", () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackyaml-"));
            fs.writeFileSync(
                path.join(dir, "Pulumi.x.yaml"),
                "config:\n  argo-rollouts-addon:a:\n  argo-rollouts-addon:b: 1_000\n  argo-rollouts-addon:c: {n: 0o10}\n",
            );
            const file = readStackFile("x", dir);
            assert.deepStrictEqual(file.config, { "argo-rollouts-addon:a": "", "argo-rollouts-addon:b": "1000", "argo-rollouts-addon:c": '{"n":8}' });
        });

        it("reads the project's other stack files the same way", () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackyaml-"));
            fs.writeFileSync(path.join(dir, "Pulumi.a.yaml"), "config:\n  argo-rollouts-addon:cluster: {name: a, mimirTenant: 1_0}\n");
            // yaml.v3 reads 1_0 as the number 10: not the text a tenant is, so no tenant is compared.
            assert.deepStrictEqual(readProjectStacks(dir), [{ stack: "a", cluster: "a", spokes: [] }]);
        });

        it("the end-to-end run writes strings Pulumi reads back as strings", () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackyaml-"));
            const file = writeStackFile(dir, "x", { "argo-rollouts-addon:tenant": "1_000", "argo-rollouts-addon:n": "017" });
            const text = fs.readFileSync(file, "utf8");
            // Plain `1_000` and `017` would be the numbers 1000 and 15 to the Pulumi CLI.
            assert.match(text, /argo-rollouts-addon:tenant: "1_000"/);
            assert.match(text, /argo-rollouts-addon:n: "017"/);
            assert.deepStrictEqual((parseStackYaml(text) as { config: unknown }).config, {
                "argo-rollouts-addon:tenant": "1_000",
                "argo-rollouts-addon:n": "017",
            });
        });
    });

    describe("no parser library's wording reaches the user", () => {
        it("a YAML error says where and what, not the library's text", () => {
            const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackyaml-"));
            fs.writeFileSync(path.join(dir, "Pulumi.bad.yaml"), "config:\n  a: [1, 2\n  b: 'token-abc\n");
            assert.throws(
                () => readStackFile("bad", dir),
                (e: Error) => {
                    assert.match(e.message, /^stack "bad": Pulumi\.bad\.yaml is not valid YAML at line \d+, column \d+ \(/);
                    assert.doesNotMatch(e.message, /token-abc|Missing closing|must be|should|Did you/);
                    return true;
                },
            );
            assert.throws(
                () => parseStackYaml("a: 1\na: 2\n"),
                (e: Error) =>
                    e instanceof StackYamlError &&
                    /line 2, column 1 \(the key "a" is set twice in one map\)/.test(e.message) &&
                    !/Map keys must be unique/.test(e.message),
            );
        });

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
