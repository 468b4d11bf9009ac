// Program load as the Pulumi CLI does it, for `npm run bench`; plain JavaScript, so no TypeScript
// compiler loads before the program does.
//
//   node tools/load-probe.js floor                 load @pulumi/pulumi and @pulumi/kubernetes only
//   node tools/load-probe.js program <tsconfig>    register ts-node as @pulumi/pulumi's cmd/run/run.js
//                                                  does (v3.248.0), then load the program
//
// run.js runs ts-node transpile-only when PULUMI_NODEJS_TRANSPILE_ONLY says so or, unset, when the
// tsconfig's compilerOptions.noCheck does; otherwise it type-checks.
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
    const env = process.env.PULUMI_NODEJS_TRANSPILE_ONLY;
    const transpileOnly = env ? env === "true" : require("@pulumi/pulumi/tsutils").loadTypeScriptCompilerOptions(tsconfig).noCheck;
    require("ts-node").register({ compiler: "typescript", transpileOnly, project: tsconfig, skipProject: false, compilerOptions: {} });
    require(path.join(root, "stacks", "program"));
} else {
    process.stderr.write("usage: node tools/load-probe.js floor | program <tsconfig>\n");
    process.exit(2);
}
const cpu = process.cpuUsage();
const figures = {
    loadMs: Number(process.hrtime.bigint() - start) / 1e6,
    cpuMs: (cpu.user + cpu.system) / 1000,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
};
process.stdout.write(JSON.stringify(figures) + "\n");
