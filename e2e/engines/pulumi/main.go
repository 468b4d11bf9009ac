// Command pulumi-language-nodejs is a minimal Node.js language host for the Pulumi CLI, written
// for this project's end-to-end run. The upstream host (module
// github.com/pulumi/pulumi/sdk/nodejs/cmd/pulumi-language-nodejs/v3) is not served by the Go module
// proxy, and the last host bundled in sdk/v3 (v3.68.0) predates the transform RPCs the program
// uses, so this one speaks the LanguageRuntime protocol of sdk/v3 v3.248.0 itself
// (proto/pulumi/language.proto; Go stubs in sdk/v3 proto/go/language_grpc.pb.go).
//
// It does only what `pulumi preview/up/destroy [--policy-pack]` need, and leaves the Node.js work
// to @pulumi/pulumi's own entry points (cmd/run, cmd/run-policy-pack, cmd/run-plugin), so the SDK
// the program installed is the one that talks to the engine:
//
//   - Start-up (sdk/v3 go/common/resource/plugin/plugin.go at v3.248.0, newPlugin/ExecPlugin): the
//     engine starts the host with optional logging/tracing flags followed by the engine's address
//     as the last argument, reads one line holding the gRPC port from stdout, and then treats any
//     further stdout/stderr lines as diagnostics. Handshake is only called when attaching
//     (langruntime_plugin.go, NewLanguageRuntime); it is answered anyway.
//   - Unimplemented is tolerated by the engine for InstallDependencies, RuntimeOptionsPrompts,
//     Template, Cancel and GetRequiredPlugins (langruntime_plugin.go), so those are left out.
//   - Run starts `node <@pulumi/pulumi/cmd/run> <flags> <entry point> <args>`; the flags are those
//     of usage() in @pulumi/pulumi cmd/run/index.js (3.248.0). The SDK dials the engine's monitor
//     directly: no monitor proxy, and no --sync pipes (runtime/settings.js tryGetSyncInvokes has no
//     caller in 3.248.0).
//   - RunPlugin starts policy packs (kind "analyzer", ExecPlugin in plugin.go, engine side in
//     analyzer_plugin.go NewPolicyAnalyzer) with @pulumi/pulumi/cmd/run-policy-pack, whose usage is
//     `RUN <engine-address> <program>` (cmd/run-policy-pack/index.js), and streams the output and
//     the exit code back (langruntime_plugin.go, langhost.RunPlugin).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/version"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// Exit code with which @pulumi/pulumi cmd/run reports that it already showed the user an actionable
// message (nodeJSProcessExitedAfterLoggingUserActionableMessage in cmd/run/index.js, 3.248.0): the
// engine is then told to bail out without printing another error.
const exitAfterUserActionableMessage = 32

// How long a Node.js child gets after an interrupt before it is killed.
const childGrace = 5 * time.Second

func main() {
	engineAddr, tracing, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: %v\n", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: listen: %v\n", err)
		os.Exit(1)
	}
	// Same receive limit as the engine's own clients and servers (rpcutil/serve.go: 400 MiB).
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(400 * 1024 * 1024))
	h := &host{engineAddr: engineAddr, tracing: tracing, done: ctx}
	pulumirpc.RegisterLanguageRuntimeServer(srv, h)
	healthpb.RegisterHealthServer(srv, health.NewServer())

	// The engine reads exactly one line, the port, before it dials.
	fmt.Printf("%d\n", lis.Addr().(*net.TCPAddr).Port)

	// Leave when the engine goes away (rpcutil.Healthcheck polls its health service), so that a
	// killed CLI does not leave this host and its Node.js children behind.
	if engineAddr != "" {
		if err := rpcutil.Healthcheck(ctx, engineAddr, 30*time.Second, stop); err != nil {
			fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: health check: %v\n", err)
		}
	}
	go func() {
		<-ctx.Done()
		srv.Stop()
	}()
	if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		fmt.Fprintf(os.Stderr, "pulumi-language-nodejs: serve: %v\n", err)
	}
	// Stop cancelled every request, and so every child; wait for them to be reaped.
	h.children.Wait()
}

// parseArgs takes the engine address (the last non-flag argument) and --tracing from the command
// line the engine builds (buildPluginArguments in plugin.go: --logtostderr, -v=N, --tracing URL,
// then the plugin's own arguments). Other flags are accepted and ignored.
func parseArgs(args []string) (engineAddr, tracing string, err error) {
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--tracing" || a == "-tracing":
			if i+1 < len(args) {
				tracing = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--tracing=") || strings.HasPrefix(a, "-tracing="):
			tracing = a[strings.IndexByte(a, '=')+1:]
		case strings.HasPrefix(a, "-") && a != "-":
			// --logtostderr, -v=N, --logflow and the like.
		default:
			positional = append(positional, a)
		}
	}
	if len(positional) == 0 {
		return "", "", errors.New("usage: pulumi-language-nodejs [flags] <engine-address>")
	}
	return positional[len(positional)-1], tracing, nil
}

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu         sync.Mutex
	engineAddr string
	tracing    string

	done     context.Context // cancelled when the host is told to stop
	children sync.WaitGroup
}

func (h *host) engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddr
}

func (h *host) Handshake(ctx context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.mu.Lock()
		h.engineAddr = req.GetEngineAddress()
		h.mu.Unlock()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *host) GetPluginInfo(ctx context.Context, _ *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	// Stamped by build.sh with -X .../sdk/v3/go/common/version.Version, like the CLI.
	return &pulumirpc.PluginInfo{Version: version.Version}, nil
}

// ---- options ----------------------------------------------------------------------------------

// options are the Pulumi.yaml / PulumiPolicy.yaml runtime options this host honours: typescript
// (default true), tsconfig (a path handed to the SDK as is: cmd/run/run.js resolves it against
// the program directory it changed to), nodeargs (extra node arguments, split on white space).
type options struct {
	typescript bool
	tsconfig   string
	nodeargs   []string
}

func parseOptions(info *pulumirpc.ProgramInfo) (options, error) {
	opts := options{typescript: true}
	if info == nil || info.GetOptions() == nil {
		return opts, nil
	}
	m := info.GetOptions().AsMap()
	if v, ok := m["typescript"]; ok {
		switch b := v.(type) {
		case bool:
			opts.typescript = b
		case string:
			parsed, err := strconv.ParseBool(b)
			if err != nil {
				return opts, fmt.Errorf("runtime option typescript: %q is not a boolean", b)
			}
			opts.typescript = parsed
		default:
			return opts, fmt.Errorf("runtime option typescript: expected a boolean, got %T", v)
		}
	}
	if v, ok := m["tsconfig"]; ok {
		s, isString := v.(string)
		if !isString {
			return opts, fmt.Errorf("runtime option tsconfig: expected a string, got %T", v)
		}
		opts.tsconfig = s
	}
	if v, ok := m["nodeargs"]; ok {
		s, isString := v.(string)
		if !isString {
			return opts, fmt.Errorf("runtime option nodeargs: expected a string, got %T", v)
		}
		opts.nodeargs = strings.Fields(s)
	}
	return opts, nil
}

// nodeEnv adds the variables through which @pulumi/pulumi cmd/run/run.js learns about TypeScript
// (PULUMI_NODEJS_TYPESCRIPT, PULUMI_NODEJS_TSCONFIG_PATH).
func (o options) nodeEnv(env []string) []string {
	if o.typescript {
		env = append(env, "PULUMI_NODEJS_TYPESCRIPT=true")
	}
	if o.tsconfig != "" {
		env = append(env, "PULUMI_NODEJS_TSCONFIG_PATH="+o.tsconfig)
	}
	return env
}

// resolveModule asks node where a module specifier resolves from dir, the way the program itself
// would resolve it (so a node_modules higher up the tree is found as well).
func resolveModule(ctx context.Context, nodeBin, dir, spec string) (string, error) {
	cmd := exec.CommandContext(ctx, nodeBin, "-e", "process.stdout.write(require.resolve(process.argv[1]))", spec)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("could not find module %s from %s (is @pulumi/pulumi installed? "+
			"run npm install there): %v: %s", spec, dir, err, strings.TrimSpace(firstLine(stderr.String())))
	}
	return string(out), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(strings.TrimSpace(s), '\n'); i >= 0 {
		return strings.TrimSpace(s)[:i]
	}
	return s
}

// start runs cmd tied to ctx and to the host's lifetime: on cancellation node gets an interrupt,
// then a kill after childGrace.
func (h *host) start(ctx context.Context, cmd *exec.Cmd) (func() error, error) {
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = childGrace
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h.children.Add(1)
	stopWatch := context.AfterFunc(h.done, func() { _ = cmd.Process.Signal(os.Interrupt) })
	return func() error {
		defer h.children.Done()
		defer stopWatch()
		return cmd.Wait()
	}, nil
}

// ---- Run --------------------------------------------------------------------------------------

func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	if info == nil {
		return nil, status.Error(codes.InvalidArgument, "RunRequest.info is required")
	}
	opts, err := parseOptions(info)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return &pulumirpc.RunResponse{Error: "could not find node on the $PATH: " + err.Error()}, nil
	}
	runSpec := os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH")
	if runSpec == "" {
		runSpec = "@pulumi/pulumi/cmd/run"
	}
	runPath, err := resolveModule(ctx, nodeBin, info.GetProgramDirectory(), runSpec)
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	args := append([]string{}, opts.nodeargs...)
	args = append(args, runPath)
	flag := func(name, value string) {
		if value != "" {
			args = append(args, "--"+name+"="+value)
		}
	}
	flag("monitor", req.GetMonitorAddress())
	flag("engine", h.engine())
	flag("organization", req.GetOrganization())
	flag("project", req.GetProject())
	flag("root-directory", info.GetRootDirectory())
	flag("stack", req.GetStack())
	// As upstream's host (sdk/nodejs/cmd/pulumi-language-nodejs/main.go constructArguments at
	// v3.248.0): --pwd is the program directory (Pulumi.yaml `main` when it names a folder), and
	// the entry point is relative to it. The SDK changes there before it loads ts-node, so the
	// `tsconfig` runtime option is resolved from the program directory, not the project root
	// (cmd/run/run.js at 3.248.0).
	pwd := info.GetProgramDirectory()
	flag("pwd", pwd)
	if req.GetDryRun() {
		args = append(args, "--dry-run")
	}
	if req.GetParallel() > 0 {
		flag("parallel", strconv.Itoa(int(req.GetParallel())))
	}
	flag("tracing", h.tracing)
	entry := info.GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	args = append(args, entry)
	args = append(args, req.GetArgs()...)

	// Configuration travels in the environment (runtime/config.js: PULUMI_CONFIG and
	// PULUMI_CONFIG_SECRET_KEYS), keys as "<namespace>:<name>", which the SDK reads as they are.
	config := req.GetConfig()
	if config == nil {
		config = map[string]string{}
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return &pulumirpc.RunResponse{Error: "serializing configuration: " + err.Error()}, nil
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secretJSON, err := json.Marshal(secretKeys)
	if err != nil {
		return &pulumirpc.RunResponse{Error: "serializing secret keys: " + err.Error()}, nil
	}
	env := append(os.Environ(), "PULUMI_CONFIG="+string(configJSON), "PULUMI_CONFIG_SECRET_KEYS="+string(secretJSON))
	env = opts.nodeEnv(env)

	cmd := exec.CommandContext(ctx, nodeBin, args...)
	cmd.Dir = pwd
	cmd.Env = env
	// Wrapped so that exec copies through a pipe instead of handing node our own descriptors: node
	// may switch its stdio to non-blocking mode, which would then affect this process too.
	cmd.Stdout = struct{ io.Writer }{os.Stdout}
	cmd.Stderr = struct{ io.Writer }{os.Stderr}

	wait, err := h.start(ctx, cmd)
	if err != nil {
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("Problem executing program (could not run %s): %v", nodeBin, err),
		}, nil
	}
	err = wait()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return &pulumirpc.RunResponse{}, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() == exitAfterUserActionableMessage:
		return &pulumirpc.RunResponse{Bail: true}, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() >= 0:
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
		}, nil
	default:
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("Program exited unexpectedly: %v", err)}, nil
	}
}

// ---- RunPlugin --------------------------------------------------------------------------------

// streamWriter sends what a child writes as RunPluginResponse chunks; gRPC streams allow one
// sender at a time, hence the shared lock.
type streamWriter struct {
	mu     *sync.Mutex
	server grpc.ServerStreamingServer[pulumirpc.RunPluginResponse]
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	chunk := append([]byte(nil), p...)
	msg := &pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: chunk}}
	if w.stderr {
		msg = &pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: chunk}}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.server.Send(msg); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (h *host) RunPlugin(req *pulumirpc.RunPluginRequest,
	server grpc.ServerStreamingServer[pulumirpc.RunPluginResponse],
) error {
	ctx := server.Context()
	info := req.GetInfo()
	if info == nil {
		return status.Error(codes.InvalidArgument, "RunPluginRequest.info is required")
	}
	opts, err := parseOptions(info)
	if err != nil {
		return err
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("could not find node on the $PATH: %w", err)
	}
	dir := info.GetProgramDirectory()

	// A policy pack gets the engine address first and its directory last, and runs in its own
	// directory (so that its node_modules are used); any other plugin kind gets its directory
	// first (cmd/run-plugin/index.js) and runs in the engine's working directory.
	var spec string
	args := append([]string{}, opts.nodeargs...)
	cwd := req.GetPwd()
	if req.GetKind() == "analyzer" {
		spec = "@pulumi/pulumi/cmd/run-policy-pack"
		cwd = dir
	} else {
		spec = os.Getenv("PULUMI_LANGUAGE_NODEJS_RUN_PATH")
		if spec == "" {
			spec = "@pulumi/pulumi/cmd/run-plugin"
		}
	}
	runPath, err := resolveModule(ctx, nodeBin, dir, spec)
	if err != nil {
		return err
	}
	args = append(args, runPath)
	if req.GetKind() == "analyzer" {
		args = append(args, req.GetArgs()...)
		args = append(args, dir)
	} else {
		args = append(args, dir)
		args = append(args, req.GetArgs()...)
	}

	env := req.GetEnv()
	if len(env) == 0 {
		env = os.Environ()
	}
	env = opts.nodeEnv(append([]string{}, env...))

	var mu sync.Mutex
	cmd := exec.CommandContext(ctx, nodeBin, args...)
	cmd.Dir = cwd
	cmd.Env = env
	cmd.Stdout = streamWriter{mu: &mu, server: server}
	cmd.Stderr = streamWriter{mu: &mu, server: server, stderr: true}

	wait, err := h.start(ctx, cmd)
	if err != nil {
		return fmt.Errorf("Problem executing plugin program (could not run %s): %w", nodeBin, err)
	}
	// Wait returns once both output pipes are drained, so the exit code is the last message.
	err = wait()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("plugin program failed: %w", err)
	}
	if ctx.Err() != nil {
		// The engine cancelled (it is done with the plugin); nobody is listening any more.
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	return server.Send(&pulumirpc.RunPluginResponse{
		Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(code)},
	})
}

// ---- package discovery ------------------------------------------------------------------------

// packageJSON holds the package.json fields this host reads. "pulumi" is the block resource
// packages carry (e.g. @pulumi/kubernetes 4.34.2: {"resource": true, "name": "kubernetes",
// "version": "4.34.2"}); its meaning is sdk/v3 go/common/resource/plugin/plugin.go PulumiPluginJSON.
type packageJSON struct {
	Name            string            `json:"name"`
	Version         string            `json:"version"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
	Pulumi          struct {
		Resource bool   `json:"resource"`
		Name     string `json:"name"`
		Version  string `json:"version"`
		Server   string `json:"server"`
	} `json:"pulumi"`
}

func readPackageJSON(path string) (*packageJSON, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p packageJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// GetRequiredPackages lists the resource plugins of every package installed under the program
// directory's node_modules trees (nested ones included, symlinks followed once), so the engine
// can load or install them before the program runs. Plugin names drop the @pulumi/ scope;
// versions get a "v" prefix. Policy packs below the program are not the program's dependencies and
// are skipped (a directory holding PulumiPolicy.yaml).
func (h *host) GetRequiredPackages(ctx context.Context, req *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	dir := req.GetInfo().GetProgramDirectory()
	if dir == "" {
		return nil, status.Error(codes.InvalidArgument, "GetRequiredPackagesRequest.info is required")
	}
	found := map[string]*pulumirpc.PackageDependency{}
	visited := map[string]bool{}
	var walk func(dir string, inNodeModules bool)
	walk = func(dir string, inNodeModules bool) {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || visited[real] {
			return
		}
		visited[real] = true
		entries, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				st, err := os.Stat(path)
				if err != nil {
					continue
				}
				isDir = st.IsDir()
			}
			switch {
			case isDir:
				if e.Name() == ".git" {
					continue
				}
				if _, err := os.Stat(filepath.Join(path, "PulumiPolicy.yaml")); err == nil {
					continue
				}
				walk(path, inNodeModules || filepath.Base(dir) == "node_modules")
			case inNodeModules && e.Name() == "package.json":
				p, err := readPackageJSON(path)
				if err != nil || !p.Pulumi.Resource {
					continue
				}
				dep, err := pluginOf(p)
				if err != nil {
					fmt.Fprintf(os.Stderr, "warning: %s: %v\n", path, err)
					continue
				}
				found[dep.Name+"@"+dep.Version] = dep
			}
		}
	}
	walk(dir, false)

	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	resp := &pulumirpc.GetRequiredPackagesResponse{}
	for _, k := range keys {
		resp.Packages = append(resp.Packages, found[k])
	}
	return resp, nil
}

func pluginOf(p *packageJSON) (*pulumirpc.PackageDependency, error) {
	name := p.Pulumi.Name
	if name == "" {
		if !strings.HasPrefix(p.Name, "@pulumi/") {
			return nil, fmt.Errorf("package %q marks a resource plugin but its \"pulumi\" block has no name", p.Name)
		}
		name = strings.TrimPrefix(p.Name, "@pulumi/")
	}
	ver := p.Pulumi.Version
	if ver == "" {
		ver = p.Version
	}
	if ver == "" {
		return nil, fmt.Errorf("package %q has no version", p.Name)
	}
	if !strings.HasPrefix(ver, "v") {
		ver = "v" + ver
	}
	return &pulumirpc.PackageDependency{Name: name, Kind: "resource", Version: ver, Server: p.Pulumi.Server}, nil
}

// GetProgramDependencies reports the direct dependencies named in the nearest package.json at or
// above the program directory, with the versions installed in node_modules (for `pulumi about`
// and update metadata). Transitive listing is not offered: the direct list is returned either way.
func (h *host) GetProgramDependencies(ctx context.Context, req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	dir := req.GetInfo().GetProgramDirectory()
	var root string
	var pkg *packageJSON
	for d := dir; d != ""; {
		if p, err := readPackageJSON(filepath.Join(d, "package.json")); err == nil {
			root, pkg = d, p
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	resp := &pulumirpc.GetProgramDependenciesResponse{}
	if pkg == nil {
		return resp, nil
	}
	names := map[string]bool{}
	for n := range pkg.Dependencies {
		names[n] = true
	}
	for n := range pkg.DevDependencies {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		ver := ""
		for d := root; ; {
			if p, err := readPackageJSON(filepath.Join(d, "node_modules", n, "package.json")); err == nil {
				ver = p.Version
				break
			}
			parent := filepath.Dir(d)
			if parent == d {
				break
			}
			d = parent
		}
		if ver == "" {
			continue // declared but not installed
		}
		resp.Dependencies = append(resp.Dependencies, &pulumirpc.DependencyInfo{Name: n, Version: ver})
	}
	return resp, nil
}

// About names the node executable and its version (`pulumi about`).
func (h *host) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("could not find node on the $PATH: %w", err)
	}
	resp := &pulumirpc.AboutResponse{Executable: nodeBin}
	if out, err := exec.CommandContext(ctx, nodeBin, "--version").Output(); err == nil {
		resp.Version = strings.TrimSpace(string(out))
	}
	return resp, nil
}
