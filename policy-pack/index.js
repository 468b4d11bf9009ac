// The policy pack's entry (package.json main), plain JavaScript on purpose. The Pulumi CLI runs a
// Node.js pack with ts-node registered to type-check every TypeScript file it loads, with no option
// to turn that off (pulumi/pulumi sdk/nodejs/cmd/run-policy-pack/run.ts, v3.248.0: `typeCheck:
// true`), which was most of the pack's start-up at every preview and up. This file puts the swc
// loader of `npm run plan` (tools/swcLoader.js) in ts-node's place and loads pack.ts transpiled
// only; `npm test` type-checks policy-pack/ with tsconfig.json.
"use strict";
require("../tools/swcLoader").register({ replace: true });
require("./pack.ts");
