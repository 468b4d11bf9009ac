/** `npm run drift-report`: a stack's drift issue from a refreshed preview's JSON (previewDigest.ts) and verify's JSON. Usage: HELP. */
import * as fs from "fs";
import { ManagedFieldsEntry, PreviewDigest, driftedObjects } from "./previewDigest";
import { UsageError, argsOrExit, fileFlag, inputError, objectsAt, readFlags, stackFlag } from "./cli";
import { printable } from "../components/config/show";

/** verify's `--json` document (tools/verify/report.ts), or its error form. */
export interface VerifyJson {
    stack?: string;
    error?: string;
    results?: { id: string; status: string; what: string; findings?: { object: string; found: string }[]; note?: string; readme?: string }[];
}

/** Who a field manager is, and what to do about it: the platform's known writers by their manager names. */
const WRITERS: [RegExp, string][] = [
    [
        /^helm(-|$)/,
        "an old Helm release of the chart is still upgraded (a person, a CI job or an operator running `helm upgrade`): stop it; the program owns the release's objects (docs/operations/adopt.md)",
    ],
    [/^argocd-server$/, "a person changed it through the ArgoCD UI or CLI: make the change in the stack file instead, or it is reverted at the next `up`"],
    [/^argocd/, "ArgoCD syncs an Application that also holds this object: take the object out of that Application, or add the field to its ignoreDifferences"],
    [/^kyverno(-|$)/, "a Kyverno mutate policy rewrites it: exclude the object from that policy, or declare the mutated value in the stack file"],
    [/^kubectl/, "a person with kubectl: make the change in the stack file instead, or it is reverted at the next `up`"],
    [/^pulumi-kubernetes/, "another Pulumi program or stack applies the same object: one of them must give it up"],
];

export const managerAdvice = (manager: string): string =>
    WRITERS.find(([re]) => re.test(manager))?.[1] ?? "another writer: find it by this name and make one owner of the field";

const managerCell = (managers: readonly ManagedFieldsEntry[]): string =>
    managers.map((m) => `\`${m.manager ?? "?"}\` (${[m.operation, m.subresource, m.time].filter(Boolean).join(", ")})`).join(", ") || "none recorded";

const cell = (s: string | undefined) => (s === undefined ? "absent" : `\`${s.replace(/\|/g, "\\|").replace(/`/g, "'")}\``);

/** The hidden first line that marks a stack's drift issue, so the next run finds and edits it. */
export function issueMarker(stack: string): string {
    return `<!-- argo-rollouts-addon drift: stack ${stack} -->`;
}

/** The hidden line saying whether the report is clean, read by the issue step. */
export const CLEAN_MARK = "<!-- drift: clean -->";

export interface DriftInput {
    stack: string;
    /** The digest, or why there is none (the preview did not run or printed no JSON). */
    preview: PreviewDigest | { error: string };
    /** The preview's exit status, when known: with --expect-no-changes, non-zero on any change or error. */
    previewExit?: number;
    verify: VerifyJson;
    runUrl?: string;
}

/** The issue's text for one stack's drift check: drifted objects, their fields and writers, verify's failures. */
export function driftReport(input: DriftInput) {
    const previewError = "error" in input.preview && typeof input.preview.error === "string" ? input.preview.error : undefined;
    const digest = previewError === undefined ? (input.preview as PreviewDigest) : {};
    const objects = driftedObjects(digest);
    const errors = (digest.diagnostics ?? []).filter((d) => d.severity === "error");
    const { verify } = input;
    const fails = (verify.results ?? []).filter((r) => r.status === "FAIL");
    const exitedQuietly = previewError === undefined && objects.length === 0 && (input.previewExit ?? 0) !== 0;
    const previewFailed = previewError !== undefined || errors.length > 0 || exitedQuietly;
    const clean = objects.length === 0 && !previewFailed && fails.length === 0 && verify.error === undefined;
    const counts = [
        `${objects.length} drifted object${objects.length === 1 ? "" : "s"}`,
        `${fails.length} verify FAIL`,
        ...(previewFailed ? ["the preview did not finish"] : []),
    ];
    const table = (head: string[], rows: string[]) => [`| ${head.join(" | ")} |`, `|${head.map(() => "---|").join("")}`, ...rows, ""];
    const objectLines = objects.flatMap((o) => [
        `#### ${o.object} (${o.op})`,
        "",
        `\`${o.urn}\``,
        "",
        ...(o.op === "create" ? ["Missing on the cluster: deleted outside the program; the next `up` creates it again.", ""] : []),
        ...(o.op === "delete" ? ["No longer declared by the stack at `main`: the next `up` deletes it.", ""] : []),
        ...(o.fields.length === 0
            ? []
            : table(
                  ["field", "change", "live", "declared", "written by"],
                  o.fields.map((f) => `| \`${f.path}\` | ${f.kind} | ${cell(f.live)} | ${cell(f.declared)} | ${managerCell(f.managers)} |`),
              )),
    ]);
    const managers = [...new Set(objects.flatMap((o) => o.fields.flatMap((f) => f.managers.map((m) => m.manager ?? "?"))))].sort();
    const failRow = (r: NonNullable<VerifyJson["results"]>[number]) => {
        const found = (r.findings ?? []).map((f) => `${f.object}: ${f.found}`).join("; ") || (r.note ?? "");
        return `| FAIL \`${r.id}\` | ${r.what} | ${found.replace(/\|/g, "\\|")} | docs/operations/verify.md${r.readme ?? ""} |`;
    };
    const lines = [
        issueMarker(input.stack),
        ...(clean ? [CLEAN_MARK] : []),
        `## Drift on stack \`${input.stack}\``,
        "",
        clean
            ? "No drift: the refreshed preview proposes no change and every verify check passed or was skipped."
            : `${counts.join(", ")}. The next \`pulumi up\` reverts every field below to what the stack declares.`,
        "",
        "### Drifted objects",
        "",
        ...(previewError !== undefined ? [`The preview printed no report: ${previewError}`, ""] : objects.length === 0 ? ["None.", ""] : objectLines),
        ...(errors.length > 0 ? ["### Preview errors", "", ...errors.map((e) => `- ${(e.message ?? "").trim().replace(/\s*\n\s*/g, " ")}`), ""] : []),
        ...(errors.length === 0 && exitedQuietly
            ? [
                  "### Preview errors",
                  "",
                  `The preview exited ${input.previewExit} without naming a change: a policy violation or an error (the run's log has it).`,
                  "",
              ]
            : []),
        ...(managers.length > 0 ? ["### Who writes these fields", "", ...managers.map((m) => `- \`${m}\`: ${managerAdvice(m)}.`), ""] : []),
        "### verify",
        "",
        ...(verify.error !== undefined
            ? [`verify did not run its checks: ${verify.error}`, ""]
            : fails.length === 0
              ? [`Every check passed or was skipped (${(verify.results ?? []).length} checks).`, ""]
              : table(["check", "requirement", "found", "read"], fails.map(failRow))),
        ...(input.runUrl ? ["---", `The preview's JSON and verify's report: the \`drift-${input.stack}\` artifact of [this run](${input.runUrl}).`, ""] : []),
    ];
    // The inputs quote the cluster, its events and verify's findings: no URL's user-info or token reaches the issue.
    return { clean, objects, markdown: printable(lines.join("\n")) };
}

const USAGE =
    "usage: npm run --silent drift-report -- --stack <name> --preview <preview.json> --verify <verify.json> [--preview-exit <code>] [--run-url <url>] [--out <file>]";
const HELP = `${USAGE}

Writes the drift issue's text for a stack from \`pulumi preview --refresh --expect-no-changes --json\`
and \`npm run verify -- --json\`: each drifted object, the fields that differ, and the field managers
that wrote them (from the refreshed live object's metadata.managedFields).

  --stack <name>          the stack
  --preview <file>        the preview's JSON (a missing or empty file: the preview did not finish)
  --verify <file>         verify's JSON report
  --preview-exit <code>   the preview's exit status (non-zero without a change: it failed)
  --run-url <url>         the workflow run, linked from the issue
  --out <file>            write the text there (default: standard output)

Exit status: 0 no drift, 1 drift, a verify FAIL or a preview that did not finish, 2 usage or a JSON file without
the fields the report reads (the error names the file and the field).`;

export function parseDriftArgs(argv: readonly string[]) {
    const text = { type: "string" } as const;
    const flags = readFlags(argv, { stack: text, preview: text, verify: text, "preview-exit": text, "run-url": text, out: text }, USAGE);
    if (flags === "help") return flags;
    const { stack, preview, verify, out } = flags;
    if (!stack || !preview || !verify) {
        const missing = Object.entries({ stack, preview, verify }).filter(([, v]) => v === undefined);
        throw new UsageError(`${missing.map(([k]) => `--${k}`).join(", ")} missing; ${USAGE}`);
    }
    const exit = flags["preview-exit"];
    if (exit !== undefined && !/^\d+$/.test(exit)) {
        throw new UsageError(`--preview-exit "${exit}": must be a whole number (the preview's exit status)`);
    }
    const runUrl = flags["run-url"];
    [
        ["--preview", preview],
        ["--verify", verify],
    ].forEach(([flag, file]) => fileFlag(flag, file, "optional input"));
    if (out) fileFlag("--out", out, "output");
    return { stack: stackFlag(stack), preview, verify, ...(exit ? { previewExit: Number(exit) } : {}), ...(runUrl ? { runUrl } : {}), ...(out ? { out } : {}) };
}

/** A JSON file, or why it cannot be read (a preview that failed before printing leaves it empty); never the text itself. */
export function readJson(file: string): Record<string, unknown> | { error: string } {
    if (!fs.existsSync(file)) return { error: `${file} does not exist` };
    const text = fs.readFileSync(file, "utf8");
    try {
        const v = text.trim() === "" ? undefined : (JSON.parse(text) as unknown);
        return v !== null && typeof v === "object" && !Array.isArray(v)
            ? (v as Record<string, unknown>)
            : { error: `${file} is ${text.trim() === "" ? "empty" : "not a JSON object"}` };
    } catch {
        return { error: `${file} is not JSON` };
    }
}

/** The preview's JSON and verify's, each checked for the fields the report reads: a usage error names the file and the field. */
export function readInputs(previewFile: string, verifyFile: string): Pick<DriftInput, "preview" | "verify"> {
    const [preview, verify] = [readJson(previewFile), readJson(verifyFile)] as Record<string, unknown>[];
    if (typeof preview.error !== "string") {
        objectsAt(previewFile, "/steps", preview.steps, ["op", "urn"]);
        objectsAt(previewFile, "/diagnostics", preview.diagnostics, [], ["message", "severity"]);
    }
    if (verify.error !== undefined && typeof verify.error !== "string") throw inputError(verifyFile, "/error", "a string", verify.error);
    objectsAt(verifyFile, "/results", verify.results, ["id", "status", "what"], ["note", "readme"]).forEach((r, i) =>
        objectsAt(verifyFile, `/results/${i}/findings`, r.findings, ["object", "found"]),
    );
    return { preview: preview as PreviewDigest, verify: verify as VerifyJson };
}

if (require.main === module) {
    const args = argsOrExit(() => {
        const parsed = parseDriftArgs(process.argv.slice(2));
        return parsed === "help" ? parsed : { ...parsed, ...readInputs(parsed.preview, parsed.verify) };
    }, HELP);
    const report = driftReport(args);
    if (args.out) {
        fs.writeFileSync(args.out, report.markdown);
    } else {
        process.stdout.write(report.markdown);
    }
    process.exitCode = report.clean ? 0 : 1;
}
