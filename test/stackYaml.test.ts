import * as assert from "assert";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { StackYamlError, parseStackYaml, plainScalarProblem } from "../components/config/stackYaml";
import { writeStackFile } from "../e2e/lib/stacks";

/** The message parseStackYaml refuses `text` with. */
function refusal(text: string | Buffer): string {
    try {
        parseStackYaml(text);
    } catch (e) {
        assert.ok(e instanceof StackYamlError, String(e));
        return e.message;
    }
    assert.fail(`accepted: ${JSON.stringify(text.toString())}`);
}

describe("stack files read narrowly (stackYaml)", () => {
    // The plain scalars the yaml.v3 restatement was compared on (gopkg.in/yaml.v3 v3.0.1 resolve.go):
    // each that the two readers, or a YAML 1.1 reader, could read differently is refused.
    const REFUSED = [
        ["1_000", "1__0", "1_", "1_000.5", ".5_0", ".5__0"],
        ["017", "08", "0o17", "0x1F", "0X1f", "0b101", "-0b101", "0x"],
        ["+12", "+.5", "-0", "-0.0", ".5", "1."],
        ["9223372036854775807", "9223372036854775808", "18446744073709551616", "1234567890123456", "1e400", "1e-400"],
        [".inf", "-.Inf", "+.INF", ".nan", ".NaN"],
        ["yes", "No", "on", "OFF", "y", "N"],
        ["2001-12-14", "2001-02-29", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10"],
        ["1:20", "190:20:30", "12:30"],
        ["<<"],
    ].flat();
    // Read alike by both: plain decimal numbers, true and false, null, and text no reader takes for anything else.
    const READ: [string, unknown][] = [
        ["0", 0],
        ["-2", -2],
        ["123456789012345", 123456789012345],
        ["0.5", 0.5],
        ["1e3", 1000],
        ["-1.5E-7", -1.5e-7],
        ["true", true],
        ["True", true],
        ["FALSE", false],
        ["~", null],
        ["Null", null],
        ...["tRUE", "nULL", "Infinity", "-inf", ".", "0.1.2", "2.41.0", "_1", "1e", "10m", "500Mi", "v1:AAAA=", "-foo"].map((t): [string, string] => [t, t]),
    ];

    it("refuses every plain scalar YAML 1.2 and yaml.v3 may read differently, naming the key, the value and the plain form", () => {
        for (const text of REFUSED) {
            assert.ok(plainScalarProblem(text), `${JSON.stringify(text)} was not refused`);
            const message = refusal(`config:\n  argo-rollouts-addon:controller:\n    replicas: ${text}\n`);
            assert.ok(message.startsWith(`line 3: argo-rollouts-addon:controller.replicas = ${text} is `), message);
            assert.match(message, /quote it|write the merged keys out/);
        }
        assert.match(plainScalarProblem("017")!, /write it in plain decimal/);
        assert.match(plainScalarProblem("yes")!, /write true or false, or quote it/);
    });

    it("reads the rest as YAML 1.2 reads it, and quoted text as text", () => {
        for (const [text, want] of READ) {
            assert.strictEqual(plainScalarProblem(text), undefined, text);
            assert.deepStrictEqual(parseStackYaml(`v: ${text}\n`), { v: want }, text);
        }
        for (const text of REFUSED) {
            assert.deepStrictEqual(parseStackYaml(`v: "${text}"\nw: '${text}'\n`), { v: text, w: text });
        }
        assert.deepStrictEqual(parseStackYaml("a:\nb: |\n  017\nc: {x: [1, ~]}\n"), { a: null, b: "017\n", c: { x: [1, null] } });
    });

    it("names a key in a list and a key that is itself ambiguous; refuses a key written twice, namespaced and bare (one key to the Pulumi CLI)", () => {
        assert.match(
            refusal("config:\n  argo-rollouts-addon:spokes:\n    - name: a\n      tenant: 1_0\n"),
            /^line 4: argo-rollouts-addon:spokes\[0\]\.tenant = 1_0 is a/,
        );
        assert.match(refusal("config:\n  policy:\n    labels: {on: x}\n"), /^line 3: policy\.labels\.on = on is a boolean/);
        assert.match(refusal("config:\n  1: x\n"), /^line 2: config has the key 1, which is not text: quote it$/);
        assert.match(refusal("config:\n  ~: x\n"), /^line 2: config has the key ~, which is not text/);
        assert.strictEqual(refusal("config:\n  a: 1\n  b: 2\n  a: 3\n"), "line 4: the key a is written twice: write it once");
        assert.strictEqual(
            refusal("config:\n  argo-rollouts-addon:imageRegistry: x\n  imageRegistry: y\n"),
            "line 3: argo-rollouts-addon:imageRegistry and imageRegistry are one key to the Pulumi CLI: write it once, as argo-rollouts-addon:imageRegistry",
        );
        // Outside `config:` and in nested maps a bare key is just a key.
        assert.deepStrictEqual(parseStackYaml("config:\n  c:\n    argo-rollouts-addon:x: 1\n    x: 2\n"), {
            config: { c: { "argo-rollouts-addon:x": 1, x: 2 } },
        });
    });

    it("refuses explicit tags and merge keys, which the readers resolve differently, and an alias bomb at once, before it expands", () => {
        assert.match(refusal("config:\n  a: !!binary aGVsbG8=\n"), /^line 2: a has the tag !!binary, .*: write the value as a plain string, without the tag$/);
        assert.match(refusal("a: !!str 12\n"), /^line 1: a has the tag !!str/);
        assert.match(refusal("a: !local x\n"), /^line 1: a has the tag !local/);
        assert.match(refusal("base: &b {x: 1}\nm:\n  <<: *b\n"), /^line 3: m\.<< = << is a merge key to yaml\.v3/);
        const levels = Array.from({ length: 12 }, (_, i) => `l${i + 1}: &l${i + 1} [${Array(9).fill(`*l${i}`).join(", ")}]`);
        // Expanded, it would hold 9^12 copies: the run would never end.
        assert.strictEqual(refusal(`l0: &l0 [x]\n${levels.join("\n")}\n`), "line 3: l2[1]: more than 10 aliases (*name): write the values out");
        assert.deepStrictEqual(parseStackYaml("a: &a [1]\nb: *a\nc: *a\n"), { a: [1], b: [1], c: [1] });
    });

    it("refuses UTF-16, bytes not UTF-8, control and invisible characters (raw or escaped: a zero-width space in a group name), CR-only line ends, with the line", () => {
        const [utf16, unseen] = ["is UTF-16 or UTF-32 (a byte order mark, or NUL bytes): save the file as UTF-8", "a character a terminal does not show"];
        assert.strictEqual(refusal(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("a: 1\n", "utf16le")])), `line 1: ${utf16}`);
        assert.strictEqual(refusal(Buffer.from("a: 1\n", "utf16le")), `line 1: ${utf16}`);
        assert.match(
            refusal(Buffer.from("a: 1\nb: caf\xe9\n", "latin1")),
            /^line 2: holds bytes that are not UTF-8 \(Latin-1 text, say\): save the file as UTF-8$/,
        );
        assert.strictEqual(refusal("a: 1\nb: x\u0000y\n"), `line 2: holds \\u0000, ${unseen} (a control character, a zero-width space or mark): remove it`);
        assert.ok(refusal("a: 1\n# x\u0085y\n").startsWith(`line 2: holds \\u0085, ${unseen}`));
        assert.ok(refusal("config:\n  g: [Release\u200bApprovers]\n").startsWith(`line 2: holds \\u200b, ${unseen}`));
        assert.ok(refusal('config:\n  g: ["R\\u200bA"]\n').startsWith(`line 2: g[0] = R\\u200bA holds \\u200b (an escape), ${unseen}`));
        assert.strictEqual(refusal("a: 1\rb: 2\r"), "line 1: ends a line with CR alone: use LF (or CRLF) line ends");
        // UTF-8 with its byte order mark and CRLF line ends read as they are.
        assert.deepStrictEqual(parseStackYaml(Buffer.from("\ufeffa: 1\r\nb: x\r\n")), { a: 1, b: "x" });
    });

    it("says where a file is not YAML and what is wrong, never the parser's own text", () => {
        const message = refusal("config:\n  a: [1, 2\n  b: 'token-abc\n");
        assert.match(message, /^line \d+: is not valid YAML \([a-z ]+\)$/);
        assert.doesNotMatch(message, /token-abc|Missing|must be|should|Did you/);
        assert.match(refusal("a: 1\n---\nb: 2\n"), /^line 2: is not valid YAML \(multiple docs\)$/);
    });

    it("reads what the end-to-end run writes: every string quoted, so none comes back a number", () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stackyaml-"));
        const file = writeStackFile(dir, "x", { "argo-rollouts-addon:tenant": "1_000", "argo-rollouts-addon:n": "017" });
        const text = fs.readFileSync(file, "utf8");
        assert.match(text, /argo-rollouts-addon:tenant: "1_000"/);
        assert.deepStrictEqual((parseStackYaml(text) as { config: unknown }).config, { "argo-rollouts-addon:tenant": "1_000", "argo-rollouts-addon:n": "017" });
        fs.rmSync(dir, { recursive: true, force: true });
    });
});
