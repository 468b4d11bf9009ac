// `node --require ./tools/swc-register.js <file>.ts`: runs the project's TypeScript transpiled by
// swc, as `npm run plan` does (tools/swcLoader.js).
"use strict";
require("./swcLoader").register();
