/** `npm run verify`'s results: a line per check, a FAIL's objects and the section of docs/operations/verify.md to read; `--json` the same. */

export type Status = "PASS" | "FAIL" | "SKIP";

export type Finding = { object: string; found: string };

export interface CheckResult {
    /** Stable id, e.g. `crds.established`. */
    id: string;
    status: Status;
    what: string;
    /** FAIL: every object that breaks it. */
    findings: Finding[];
    /** What was seen, or why it was skipped. */
    note?: string;
    /** Anchor of the section of `VERIFY_PAGE` to read (the JSON key keeps its name: pipelines read it). */
    readme: string;
}

export const VERIFY_PAGE = "docs/operations/verify.md";

export const DOCS = {
    crds: "#verify-crds-and-controller",
    rbac: "#verify-rbac",
    kyverno: "#verify-kyverno-policies",
    argocd: "#verify-argocd",
    metrics: "#verify-metric-path",
    smoke: "#verify-smoke-canary",
    permissions: "#verifys-own-permissions",
} as const;

/** A set of checks documented in one section: each id with its requirement, and how to report one. */
export function checks<const W extends Record<string, string>>(readme: string, what: W) {
    type Id = Extract<keyof W, string>;
    const result = (id: Id, status: Status, findings: Finding[], note?: string): CheckResult => ({
        id,
        status,
        what: what[id],
        findings,
        ...(note ? { note } : {}),
        readme,
    });
    return {
        ids: Object.keys(what) as Id[],
        readme,
        /** FAIL with the findings, PASS without. */
        done: (id: Id, findings: Finding[], note?: string) => result(id, findings.length > 0 ? "FAIL" : "PASS", findings, note),
        skip: (id: Id, why: string) => result(id, "SKIP", [], why),
    };
}

export type Report = { stack: string; cluster: string; server: string; results: CheckResult[] };

export function summary(results: readonly CheckResult[]): Record<Status, number> {
    const count = (s: Status) => results.filter((r) => r.status === s).length;
    return { PASS: count("PASS"), FAIL: count("FAIL"), SKIP: count("SKIP") };
}

/** 1 when any check failed, 0 otherwise (2, for usage and connection errors, is the CLI's). */
export function exitCode(results: readonly CheckResult[]): number {
    return results.some((r) => r.status === "FAIL") ? 1 : 0;
}

export function formatText(report: Report): string {
    const width = Math.max(...report.results.map((r) => r.id.length), 10);
    const lines = [`verify stack ${report.stack} (cluster ${report.cluster}) at ${report.server}`];
    for (const r of report.results) {
        if (r.status !== "FAIL") {
            lines.push(`${r.status}  ${r.id.padEnd(width)}  ${r.what}${r.note ? ` (${r.note})` : ""}`);
            continue;
        }
        lines.push(`FAIL  ${r.id.padEnd(width)}  ${r.what}`, ...r.findings.map((f) => `      ${f.object}: ${f.found}`));
        lines.push(...(r.note ? [`      ${r.note}`] : []), `      read: ${VERIFY_PAGE}${r.readme}`);
    }
    const s = summary(report.results);
    lines.push(`summary: ${s.PASS} PASS, ${s.FAIL} FAIL, ${s.SKIP} SKIP`);
    return lines.join("\n");
}

/** What `--json` prints when verify stops before any check ran (exit 2). */
export function formatJsonError(e: { stack?: string; error: string }): string {
    return JSON.stringify({ ...(e.stack ? { stack: e.stack } : {}), error: e.error, exitCode: 2, results: [] }, null, 2);
}

export function formatJson(report: Report): string {
    return JSON.stringify({ ...report, summary: summary(report.results) }, null, 2);
}
