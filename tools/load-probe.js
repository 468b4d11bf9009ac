// Program load as the Pulumi CLI does it, for `npm run bench`. Plain JavaScript on purpose: a probe
// written in TypeScript would load a TypeScript compiler before the program does.
//
//   node tools/load-probe.js floor                 load @pulumi/pulumi and @pulumi/kubernetes only
//   node tools/load-probe.js program <tsconfig>    register ts-node the way @pulumi/pulumi's
//                                                  cmd/run/run.js does, then load the program
//
// run.js: the tsconfig is PULUMI_NODEJS_TSCONFIG_PATH (Pulumi.yaml runtime.options.tsconfig), and
// ts-node runs transpile-only when PULUMI_NODEJS_TRANSPILE_ONLY says so or, unset, when that
// tsconfig's compilerOptions.noCheck does; otherwise it type-checks. The program's module graph is
// what loads before the first resource: stacks/program (the entry, stacks/index, also runs it).
"use strict";
const path = require("path");

const start = process.hrtime.bigint();
const [mode, tsconfig] = process.argv.slice(2);
const root = path.resolve(__dirname, "..");
process.chdir(root);
if (mode === "floor") {
    require("@pulumi/pulumi");
    require("@pulumi/kubernetes");
} else if (mode === "program" && tsconfig) {
    const tsutils = require("@pulumi/pulumi/tsutils");
    const env = process.env.PULUMI_NODEJS_TRANSPILE_ONLY;
    const transpileOnly = env ? env === "true" : tsutils.loadTypeScriptCompilerOptions(tsconfig).noCheck;
    require("ts-node").register({ compiler: "typescript", transpileOnly, project: tsconfig, skipProject: false, compilerOptions: {} });
    require(path.join(root, "stacks", "program"));
} else {
    process.stderr.write("usage: node tools/load-probe.js floor | program <tsconfig>\n");
    process.exit(2);
}
const loadMs = Number(process.hrtime.bigint() - start) / 1e6;
process.stdout.write(JSON.stringify({ loadMs, peakRssMiB: process.resourceUsage().maxRSS / 1024 }) + "\n");
