import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";

/**
 * The project's layout, read from its source: one direction of imports between folders, and the
 * program's module graph free of tool, test and policy-pack code.
 *
 * A folder is a stage or library folder under components/ (a single file there, such as
 * components/stage.ts, is a folder of its own), or one of the top-level folders stacks/, tools/,
 * policy/ and test/ (their subfolders, tools/verify and test/verify, belong to them).
 */

const ROOT = path.resolve(__dirname, "..");
const TOP_LEVEL = ["components", "stacks", "tools", "policy", "test"];

/** Every TypeScript and JavaScript file of the project, relative to its root, with `/` separators. */
function sourceFiles(): string[] {
    const out: string[] = [];
    const walk = (dir: string): void => {
        for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
            const rel = path.posix.join(dir, entry.name);
            if (entry.isDirectory() && entry.name !== "node_modules") {
                walk(rel);
            } else if (entry.isFile() && /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
                out.push(rel);
            }
        }
    };
    TOP_LEVEL.forEach(walk);
    return out.sort();
}

/** The folder a project file belongs to (see above). */
export function folderOf(file: string): string {
    const [top, second, ...rest] = file.split("/");
    if (top === "components" && second !== undefined) {
        return rest.length === 0 ? `components/${second.replace(/\.(ts|js)$/, "")}` : `components/${second}`;
    }
    return top;
}

/** The project file a relative specifier names, as Node and TypeScript resolve it. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
    const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
    const candidates = [base, `${base}.ts`, `${base}.js`, `${base}/index.ts`, `${base}/index.js`];
    return candidates.find((c) => fs.existsSync(path.join(ROOT, c)) && fs.statSync(path.join(ROOT, c)).isFile());
}

/** One import of a relative path: which file imports which. */
export interface Import {
    from: string;
    specifier: string;
    to: string;
}

/** Every `import`/`export ... from`, `import()` and `require()` of a relative path in the project's source. */
function relativeImports(): Import[] {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ts = require("typescript") as typeof import("typescript");
    const out: Import[] = [];
    for (const file of sourceFiles()) {
        const text = fs.readFileSync(path.join(ROOT, file), "utf8");
        for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
            if (!fileName.startsWith("./") && !fileName.startsWith("../")) {
                continue;
            }
            const to = resolveSpecifier(file, fileName);
            assert.ok(to !== undefined, `${file} imports ${fileName}, which is no file of the project`);
            out.push({ from: file, specifier: fileName, to });
        }
    }
    return out;
}

/** Folder -> folder -> the imports that make the edge. */
export type FolderGraph = Map<string, Map<string, Import[]>>;

export function folderGraph(imports: readonly Import[]): FolderGraph {
    const graph: FolderGraph = new Map();
    for (const i of imports) {
        const a = folderOf(i.from);
        const b = folderOf(i.to);
        if (a === b) {
            continue;
        }
        const edges = graph.get(a) ?? new Map<string, Import[]>();
        edges.set(b, [...(edges.get(b) ?? []), i]);
        graph.set(a, edges);
    }
    return graph;
}

/** A cycle of folders (first folder repeated at the end), or undefined when the graph is acyclic. */
export function findCycle(graph: FolderGraph): string[] | undefined {
    const state = new Map<string, "open" | "done">();
    const trail: string[] = [];
    const visit = (node: string): string[] | undefined => {
        state.set(node, "open");
        trail.push(node);
        for (const next of [...(graph.get(node)?.keys() ?? [])].sort()) {
            if (state.get(next) === "open") {
                return [...trail.slice(trail.indexOf(next)), next];
            }
            if (state.get(next) === undefined) {
                const found = visit(next);
                if (found) {
                    return found;
                }
            }
        }
        trail.pop();
        state.set(node, "done");
        return undefined;
    };
    for (const node of [...graph.keys()].sort()) {
        if (state.get(node) === undefined) {
            const found = visit(node);
            if (found) {
                return found;
            }
        }
    }
    return undefined;
}

/** A cycle with, for each step, the imports that make it. */
function describeCycle(graph: FolderGraph, cycle: string[]): string {
    const steps = cycle.slice(0, -1).map((a, i) => {
        const b = cycle[i + 1];
        const why = (graph.get(a)?.get(b) ?? []).map((imp) => `      ${imp.from} imports "${imp.specifier}"`);
        return [`  ${a} -> ${b}`, ...why].join("\n");
    });
    return `folders import each other: ${cycle.join(" -> ")}\n${steps.join("\n")}`;
}

describe("layout", () => {
    let imports: Import[];
    let graph: FolderGraph;
    before(() => {
        imports = relativeImports();
        graph = folderGraph(imports);
    });

    it("reads the imports of every folder (a parse that finds nothing proves nothing)", () => {
        for (const folder of ["components/config", "components/rollouts", "components/policy", "components/argocd", "stacks", "tools", "policy", "test"]) {
            assert.ok((graph.get(folder)?.size ?? 0) > 0 || [...graph.values()].some((edges) => edges.has(folder)), `no import from or to ${folder}`);
        }
    });

    it("finds a cycle where there is one", () => {
        const cyclic: FolderGraph = new Map([
            ["components/a", new Map([["components/b", []]])],
            ["components/b", new Map([["components/c", []]])],
            ["components/c", new Map([["components/a", []]])],
        ]);
        assert.deepStrictEqual(findCycle(cyclic), ["components/a", "components/b", "components/c", "components/a"]);
        assert.strictEqual(findCycle(new Map([["components/a", new Map([["components/b", []]])]])), undefined);
        assert.strictEqual(folderOf("components/stage.ts"), "components/stage");
        assert.strictEqual(folderOf("components/rollouts/config.ts"), "components/rollouts");
        assert.strictEqual(folderOf("tools/verify/checks/rbac.ts"), "tools");
    });

    it("no folder imports a folder that imports it back", () => {
        const cycle = findCycle(graph);
        assert.ok(cycle === undefined, cycle && describeCycle(graph, cycle));
    });

    it("the program (stacks/, components/) imports no tool, test or policy-pack code", () => {
        const program = (f: string) => f.startsWith("stacks/") || f.startsWith("components/");
        const wrong = imports.filter((i) => program(i.from) && !program(i.to)).map((i) => `${i.from} imports "${i.specifier}"`);
        assert.deepStrictEqual(wrong, []);
    });

    it("the policy pack imports the program's guardrails only, never tools or tests", () => {
        const wrong = imports.filter((i) => i.from.startsWith("policy/") && !i.to.startsWith("policy/") && !i.to.startsWith("components/")).map((i) => `${i.from} imports "${i.specifier}"`);
        assert.deepStrictEqual(wrong, []);
    });
});
