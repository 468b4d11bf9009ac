import * as assert from "assert";
import { UsageError, fileFlag, readFlags, readText, stackFlag } from "../tools/cli";

// Every command reads its arguments with readFlags, and --stack with stackFlag (tools/cli.ts); test/commands.test.ts holds what each makes of them.
describe("readFlags and stackFlag", () => {
    const options = { stack: { type: "string" }, json: { type: "boolean" } } as const;
    const read = (argv: string[]) => readFlags(argv, options, "usage: npm run x");

    it("refuses an empty value and a value given to a switch, naming the flag, and ends with the usage", () => {
        for (const [argv, why] of [
            [["--stack="], /^--stack needs a value \(it was given an empty one\); usage: npm run x$/],
            [["--json=false"], /^--json is a switch and takes no value \(got --json=false\): give --json alone, or leave it out; usage: npm run x$/],
            [["--stack"], /^--stack needs a value; usage/],
            [["extra"], /^unknown argument extra; usage/],
        ] as const) {
            assert.throws(() => read([...argv]), { constructor: UsageError, message: why }, argv.join(" "));
        }
        assert.deepStrictEqual({ ...(read(["--stack=hub", "--json"]) as object) }, { stack: "hub", json: true });
    });

    it("takes a stack name as the Pulumi CLI allows one, but . and .., naming the flag, the value and what is allowed", () => {
        ["hub", "eu-west.prod_2", "x".repeat(100)].forEach((ok) => assert.strictEqual(stackFlag(ok), ok));
        for (const bad of ["", ".", "..", "../hub", "a/b", "hub ", "x".repeat(101)]) {
            const message = `--to ${JSON.stringify(bad)}: must be a stack name, 1 to 100 letters, digits, "_", "." or "-" as Pulumi allows, not "." or ".."`;
            assert.throws(() => stackFlag(bad, "--to"), { constructor: UsageError, message }, bad);
        }
    });

    it("takes a file flag's value unless it is a folder, an input that does not exist or an output whose folder does not", () => {
        const refused = (f: () => unknown, message: RegExp) => assert.throws(f, { constructor: UsageError, message });
        refused(() => readText("--file", "no.md"), /^--file no\.md: must be a file, it does not exist$/);
        refused(() => fileFlag("--out", "no/x.md", "output"), /^--out no\/x\.md: must be a file, \/.*\/no is no folder$/);
        refused(() => fileFlag("--json", __dirname, "optional input"), /^--json \/.*: must be a file, it is a folder$/);
        assert.match(readText("--file", __filename), /takes a file flag's value/);
    });
});
