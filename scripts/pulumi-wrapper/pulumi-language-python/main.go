// Command pulumi-language-python is fabric-stack's small Python language host for
// the Pulumi engine.
//
// Upstream's host lives in the Go module
// github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3, which has no
// version tags and which the Go module proxy reachable from this project's machines
// does not serve. scripts/pulumi-engine.sh builds upstream's host when the proxy
// serves it and this one otherwise. It implements what `pulumi preview/up/refresh/
// destroy` and `pulumi preview --policy-pack` need for a pip virtualenv project:
//
//   - Run: starts `python -u pulumi-language-python-exec ... PROGRAM` (the exec
//     shim ships in the pulumi/sdk module and sits next to this binary) with the
//     project's virtualenv (Pulumi.yaml `runtime.options.virtualenv`) and the stack
//     config in PULUMI_CONFIG / PULUMI_CONFIG_SECRET_KEYS, as upstream does.
//   - RunPlugin: runs Python policy packs (`python -u -m pulumi.policy ENGINE DIR`)
//     and Python plugins (`python -u DIR`), streaming their output to the engine.
//   - GetRequiredPackages/Plugins report nothing: the only plugin a fabric-stack
//     program uses is the dynamic-provider host pulumi-resource-pulumi-python,
//     found on PATH next to this binary.
//   - InstallDependencies (`pulumi install`) creates a missing virtualenv and
//     pip-installs requirements.txt; About reports the interpreter.
//
// Not implemented (the engine reports them as unsupported): code generation,
// `pulumi new` templates and runtime prompts, the poetry toolchain (uv only as
// far as its .venv goes), debugger attachment, program dependency listing.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// version is stamped by scripts/pulumi-engine.sh (-X main.version=...).
var version = "0.0.0-dev"

// execShim is the upstream script that configures the Pulumi Python runtime and runs the program.
const execShim = "pulumi-language-python-exec"

// bailExitCode is the exit code with which the exec shim says it has already shown the error.
const bailExitCode = 32

type host struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	mu            sync.Mutex
	engineAddress string
	tracing       string
}

func main() {
	h := &host{}
	// The engine passes optional logging/tracing flags, then the engine address last.
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--tracing" || a == "-tracing":
			if i+1 < len(args) {
				h.tracing = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--tracing=") || strings.HasPrefix(a, "-tracing="):
			h.tracing = a[strings.Index(a, "=")+1:]
		case strings.HasPrefix(a, "-"):
			// --logtostderr, -v=N, --logflow and runtime options of older engines: not used.
		default:
			h.engineAddress = a
		}
	}

	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, h)
			return nil
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: could not start the gRPC server: %v\n", err)
		os.Exit(1)
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		fmt.Fprintf(os.Stderr, "pulumi-language-python: %v\n", err)
		os.Exit(1)
	}
}

func (h *host) engine() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.engineAddress
}

// Handshake records the engine address (newer engines send it here as well as on the command line).
func (h *host) Handshake(
	_ context.Context, req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.mu.Lock()
		h.engineAddress = req.GetEngineAddress()
		h.mu.Unlock()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

// GetPluginInfo reports the Pulumi release this host was built with.
func (h *host) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

// GetRequiredPlugins reports no plugins to install (see the package comment).
func (h *host) GetRequiredPlugins(
	context.Context, *pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

// GetRequiredPackages reports no packages to install (see the package comment).
func (h *host) GetRequiredPackages(
	context.Context, *pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

// GetProgramDependencies reports none; `pulumi about` then lists no Python packages.
func (h *host) GetProgramDependencies(
	context.Context, *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	return &pulumirpc.GetProgramDependenciesResponse{}, nil
}

// About reports the Python interpreter that programs run with.
func (h *host) About(_ context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	python, env, err := resolvePython(req.GetInfo(), os.Environ())
	if err != nil {
		return nil, status.Error(codes.FailedPrecondition, err.Error())
	}
	cmd := exec.Command(python, "-c", "import sys; print(sys.version.split()[0])")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return nil, status.Errorf(codes.Internal, "running %s: %v", python, err)
	}
	return &pulumirpc.AboutResponse{
		Executable: python,
		Version:    strings.TrimSpace(string(out)),
		Metadata:   map[string]string{"host": "fabric-stack pulumi-language-python " + version},
	}, nil
}

// Run runs a Pulumi Python program through upstream's exec shim.
func (h *host) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	info := req.GetInfo()
	if info == nil {
		// Older engines send only pwd and program.
		info = &pulumirpc.ProgramInfo{
			RootDirectory: req.GetPwd(), ProgramDirectory: req.GetPwd(), EntryPoint: req.GetProgram(),
		}
	}
	python, env, err := resolvePython(info, os.Environ())
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}
	shim, err := findExecShim()
	if err != nil {
		return &pulumirpc.RunResponse{Error: err.Error()}, nil
	}

	// A stack without config must still hand the runtime a JSON object ("{}", not
	// "null"): the exec shim iterates over it.
	cfg := req.GetConfig()
	if cfg == nil {
		cfg = map[string]string{}
	}
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding config: %v", err)
	}
	secretKeys := req.GetConfigSecretKeys()
	if secretKeys == nil {
		secretKeys = []string{}
	}
	secrets, err := json.Marshal(secretKeys)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "encoding secret keys: %v", err)
	}
	env = setEnv(env, "PULUMI_CONFIG", string(config))
	env = setEnv(env, "PULUMI_CONFIG_SECRET_KEYS", string(secrets))

	programDir := info.GetProgramDirectory()
	if programDir == "" {
		programDir = req.GetPwd()
	}
	entry := info.GetEntryPoint()
	if entry == "" {
		entry = "."
	}
	args := []string{
		"-u", shim,
		"--monitor", req.GetMonitorAddress(),
		"--engine", h.engine(),
		"--project", req.GetProject(),
		"--stack", req.GetStack(),
		"--pwd", programDir,
		"--parallel", strconv.Itoa(int(req.GetParallel())),
		"--organization", req.GetOrganization(),
		"--root_directory", info.GetRootDirectory(),
	}
	if req.GetDryRun() {
		args = append(args, "--dry_run", "true")
	}
	if h.tracing != "" {
		args = append(args, "--tracing", h.tracing)
	}
	args = append(args, entry)
	args = append(args, req.GetArgs()...)

	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = programDir
	cmd.Env = env
	// The engine shows this process's stdout/stderr as the program's output.
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == bailExitCode {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{
				Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
			}, nil
		}
		return &pulumirpc.RunResponse{Error: fmt.Sprintf("running %s: %v", python, err)}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

// RunPlugin runs a policy pack (kind "analyzer") or a Python plugin directory and
// streams its stdout/stderr to the engine, then its exit code.
func (h *host) RunPlugin(
	req *pulumirpc.RunPluginRequest, server grpc.ServerStreamingServer[pulumirpc.RunPluginResponse],
) error {
	info := req.GetInfo()
	if info == nil {
		info = &pulumirpc.ProgramInfo{
			RootDirectory: req.GetProgram(), ProgramDirectory: req.GetProgram(), EntryPoint: ".",
		}
	}
	baseEnv := req.GetEnv()
	if len(baseEnv) == 0 {
		baseEnv = os.Environ()
	}
	python, env, err := resolvePython(info, baseEnv)
	if err != nil {
		return status.Error(codes.FailedPrecondition, err.Error())
	}
	dir := info.GetProgramDirectory()
	var args []string
	if req.GetKind() == "analyzer" {
		// pulumi.policy's runner takes the engine address (last of req.Args) and the pack directory.
		args = append([]string{"-u", "-m", "pulumi.policy"}, req.GetArgs()...)
		args = append(args, dir)
	} else {
		args = append([]string{"-u", dir}, req.GetArgs()...)
	}

	cmd := exec.CommandContext(server.Context(), python, args...)
	cmd.Dir = req.GetPwd()
	if cmd.Dir == "" {
		cmd.Dir = dir
	}
	cmd.Env = env
	var sendMu sync.Mutex
	send := func(resp *pulumirpc.RunPluginResponse) {
		sendMu.Lock()
		defer sendMu.Unlock()
		_ = server.Send(resp) // the engine going away ends the plugin through the context
	}
	code, err := streamCommand(cmd,
		func(b []byte) {
			send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stdout{Stdout: b}})
		},
		func(b []byte) {
			send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Stderr{Stderr: b}})
		})
	if err != nil {
		return status.Errorf(codes.Internal, "running %s: %v", python, err)
	}
	send(&pulumirpc.RunPluginResponse{Output: &pulumirpc.RunPluginResponse_Exitcode{Exitcode: int32(code)}})
	return nil
}

// InstallDependencies (`pulumi install`) creates the virtualenv named in Pulumi.yaml when it is
// missing and installs requirements.txt into it; an existing virtualenv is left as it is (in
// fabric-stack, `make setup` manages .venv).
func (h *host) InstallDependencies(
	req *pulumirpc.InstallDependenciesRequest,
	server grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse],
) error {
	info := req.GetInfo()
	if info == nil {
		info = &pulumirpc.ProgramInfo{RootDirectory: req.GetDirectory(), ProgramDirectory: req.GetDirectory()}
	}
	var sendMu sync.Mutex
	send := func(resp *pulumirpc.InstallDependenciesResponse) {
		sendMu.Lock()
		defer sendMu.Unlock()
		_ = server.Send(resp)
	}
	say := func(format string, args ...any) {
		send(&pulumirpc.InstallDependenciesResponse{Stdout: []byte(fmt.Sprintf(format+"\n", args...))})
	}
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(server.Context(), name, args...)
		cmd.Dir = info.GetProgramDirectory()
		code, err := streamCommand(cmd,
			func(b []byte) { send(&pulumirpc.InstallDependenciesResponse{Stdout: b}) },
			func(b []byte) { send(&pulumirpc.InstallDependenciesResponse{Stderr: b}) })
		if err == nil && code != 0 {
			err = fmt.Errorf("%s %s exited with code %d", name, strings.Join(args, " "), code)
		}
		return err
	}

	venv := virtualenvOption(info)
	if venv == "" {
		say("No virtualenv in the runtime options: nothing to install.")
		return nil
	}
	python := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(python); err == nil {
		say("Using the existing virtualenv %s.", venv)
		return nil
	}
	base, err := exec.LookPath("python3")
	if err != nil {
		return status.Error(codes.FailedPrecondition, "python3 not found on PATH")
	}
	say("Creating virtualenv %s", venv)
	if err := run(base, "-m", "venv", venv); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	requirements := filepath.Join(info.GetProgramDirectory(), "requirements.txt")
	if _, err := os.Stat(requirements); err == nil {
		say("Installing %s", requirements)
		if err := run(python, "-m", "pip", "install", "-r", requirements); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
	}
	return nil
}

// streamCommand runs cmd, hands its stdout and stderr to the callbacks as they arrive, and
// returns its exit code; err is set only when it could not run.
func streamCommand(cmd *exec.Cmd, onStdout, onStderr func([]byte)) (int, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return -1, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return -1, err
	}
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	var wg sync.WaitGroup
	pump := func(r io.Reader, emit func([]byte)) {
		defer wg.Done()
		buf := make([]byte, 32*1024)
		for {
			n, readErr := r.Read(buf)
			if n > 0 {
				emit(append([]byte(nil), buf[:n]...))
			}
			if readErr != nil {
				return
			}
		}
	}
	wg.Add(2)
	go pump(stdout, onStdout)
	go pump(stderr, onStderr)
	wg.Wait() // all output is read before Wait closes the pipes
	if err := cmd.Wait(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return exitErr.ExitCode(), nil
		}
		return -1, err
	}
	return 0, nil
}

// resolvePython picks the interpreter and environment for a program or plugin:
// the virtualenv named in the runtime options (relative to the root directory),
// else $PULUMI_PYTHON_CMD, else python3 on PATH.
func resolvePython(info *pulumirpc.ProgramInfo, baseEnv []string) (string, []string, error) {
	env := append([]string(nil), baseEnv...)
	if toolchain := stringOption(info, "toolchain"); toolchain != "" && toolchain != "pip" && toolchain != "uv" {
		return "", nil, fmt.Errorf(
			"the %q toolchain is not supported by fabric-stack's pulumi-language-python; "+
				"use `virtualenv:` (pip) in Pulumi.yaml", toolchain)
	}
	if venv := virtualenvOption(info); venv != "" {
		python := filepath.Join(venv, "bin", "python")
		if _, err := os.Stat(python); err != nil {
			return "", nil, fmt.Errorf(
				"the virtualenv %q from Pulumi.yaml has no bin/python (run `make setup` to create .venv)", venv)
		}
		env = setEnv(env, "VIRTUAL_ENV", venv)
		env = setEnv(env, "PATH", filepath.Join(venv, "bin")+string(os.PathListSeparator)+getEnv(env, "PATH"))
		env = unsetEnv(env, "PYTHONHOME")
		return python, env, nil
	}

	name := getEnv(env, "PULUMI_PYTHON_CMD")
	candidates := []string{"python3", "python"}
	if name != "" {
		candidates = []string{name}
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, env, nil
		}
	}
	return "", nil, fmt.Errorf("no Python interpreter found (tried %s)", strings.Join(candidates, ", "))
}

// virtualenvOption is the absolute virtualenv directory from the runtime options ("" when none):
// `virtualenv`, relative to the project root, or .venv for the uv toolchain.
func virtualenvOption(info *pulumirpc.ProgramInfo) string {
	venv := stringOption(info, "virtualenv")
	if venv == "" && stringOption(info, "toolchain") == "uv" {
		venv = ".venv"
	}
	if venv != "" && !filepath.IsAbs(venv) {
		venv = filepath.Join(info.GetRootDirectory(), venv)
	}
	return venv
}

func stringOption(info *pulumirpc.ProgramInfo, name string) string {
	if info == nil || info.GetOptions() == nil {
		return ""
	}
	v, _ := info.GetOptions().AsMap()[name].(string)
	return v
}

// findExecShim finds upstream's exec shim next to this binary (symlinks resolved), else on PATH.
func findExecShim() (string, error) {
	if self, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		candidate := filepath.Join(filepath.Dir(self), execShim)
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
	}
	if p, err := exec.LookPath(execShim); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s not found next to pulumi-language-python or on PATH "+
		"(rerun scripts/pulumi-engine.sh)", execShim)
}

func getEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func unsetEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return out
}

func setEnv(env []string, key, value string) []string {
	return append(unsetEnv(env, key), key+"="+value)
}
