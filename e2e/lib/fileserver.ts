/**
 * The run's HTTPS file server on 127.0.0.1: the Argo Rollouts CRD sources (the layout of
 * `controller.crdBaseUrl`: <base>/<tag>/manifests/crds/<file>) and the chart repository (index.yaml
 * and the chart archive). Its certificate comes from a CA of the run; the Pulumi CLI, and so the
 * kubernetes provider that downloads both, trust it through SSL_CERT_FILE (Go's crypto/x509 reads
 * it on Linux, src/crypto/x509/root_unix.go).
 */
import * as fs from "fs";
import * as https from "https";
import * as path from "path";
import { runOk } from "./procs";

export interface FileServer {
    url: string;
    root: string;
    caFile: string;
    /** The server's certificate (127.0.0.1 and localhost, issued by `caFile`) and key, for the run's other HTTPS servers. */
    certFile: string;
    keyFile: string;
    /** Paths requested so far (proves what the provider fetched). */
    requests: string[];
    close(): Promise<void>;
}

export async function startFileServer(dir: string): Promise<FileServer> {
    const root = path.join(dir, "www");
    fs.mkdirSync(root, { recursive: true });
    const o = (args: string[]) => runOk("openssl", args, { cwd: dir });
    o([
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "www-ca.key",
        "-out",
        "www-ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=argo-rollouts-addon-e2e-files-ca",
    ]);
    fs.writeFileSync(path.join(dir, "www.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
    o(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "www.key", "-out", "www.csr", "-subj", "/CN=127.0.0.1"]);
    o([
        "x509",
        "-req",
        "-in",
        "www.csr",
        "-CA",
        "www-ca.crt",
        "-CAkey",
        "www-ca.key",
        "-CAcreateserial",
        "-out",
        "www.crt",
        "-days",
        "2",
        "-extfile",
        "www.ext",
    ]);
    const requests: string[] = [];
    const server = https.createServer({ cert: fs.readFileSync(path.join(dir, "www.crt")), key: fs.readFileSync(path.join(dir, "www.key")) }, (req, res) => {
        const url = decodeURIComponent((req.url ?? "/").split("?")[0]);
        requests.push(url);
        const file = path.resolve(root, "." + url);
        if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
            res.writeHead(404).end("not found\n");
            return;
        }
        res.writeHead(200, { "content-length": fs.statSync(file).size });
        fs.createReadStream(file).pipe(res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const addr = server.address();
    const port = typeof addr === "object" && addr ? addr.port : 0;
    return {
        url: `https://127.0.0.1:${port}`,
        root,
        caFile: path.join(dir, "www-ca.crt"),
        certFile: path.join(dir, "www.crt"),
        keyFile: path.join(dir, "www.key"),
        requests,
        close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
}
