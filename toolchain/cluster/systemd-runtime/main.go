// Command systemd-runtime is the runtime binary of the test cluster's `systemd`
// RuntimeClass handler: a thin wrapper around runc that lets systemd run as PID 1 in a
// `hostUsers: false` pod on a cgroup v1 host.
//
// On `create` of an app container (CRI annotation io.kubernetes.cri.container-type =
// container; the pause sandbox is left alone) it edits the bundle's config.json to
//  1. mount /sys/fs/cgroup read-write, and
//  2. add a createRuntime hook (this same program, `chown-cgroup-hook`) that chowns the
//     container's own name=systemd (and unified) cgroup directories to the container's
//     mapped root.
//
// Why: in a user namespace systemd exits 255 at once because the v1 cgroup tree is not
// its own ("Failed to create .../init.scope control group"); it boots once the subtree
// belongs to its root. Checked on this host kind: see the reference notes on the node.
// Everything else is passed to runc unchanged (exec, so signals and exit codes are runc's).
//
// runc is found as `runc` beside argv[0] (not the resolved executable, so a directory of
// symlinks chooses the runc), or from $DEPLOY_SYSTEMD_RUNTIME_RUNC.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const hookArg = "chown-cgroup-hook"

func main() {
	if len(os.Args) > 1 && os.Args[1] == hookArg {
		if err := chownCgroupHook(os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "systemd-runtime hook: %v\n", err)
			os.Exit(1)
		}
		return
	}
	runc := os.Getenv("DEPLOY_SYSTEMD_RUNTIME_RUNC")
	if runc == "" {
		runc = filepath.Join(filepath.Dir(os.Args[0]), "runc")
	}
	if bundle, ok := createBundle(os.Args[1:]); ok {
		if err := prepareBundle(bundle); err != nil {
			fmt.Fprintf(os.Stderr, "systemd-runtime: preparing bundle %s: %v\n", bundle, err)
			os.Exit(1)
		}
	}
	args := append([]string{runc}, os.Args[1:]...)
	if err := syscall.Exec(runc, args, os.Environ()); err != nil {
		fmt.Fprintf(os.Stderr, "systemd-runtime: exec %s: %v\n", runc, err)
		os.Exit(1)
	}
}

// createBundle returns the bundle directory when args are a runc `create` (or `run`)
// command line. Global flags come before the command; we only need --bundle/-b after it.
func createBundle(args []string) (string, bool) {
	cmd := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			cmd = i
			break
		}
		// Global flags that take a separate value (runc's: --root, --log, --log-format,
		// --criu, --rootless).
		switch a {
		case "--root", "--log", "--log-format", "--criu", "--rootless":
			i++
		}
	}
	if cmd < 0 || (args[cmd] != "create" && args[cmd] != "run") {
		return "", false
	}
	bundle := "."
	rest := args[cmd+1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--bundle" || a == "-b":
			if i+1 < len(rest) {
				bundle = rest[i+1]
			}
			i++
		case strings.HasPrefix(a, "--bundle="):
			bundle = strings.TrimPrefix(a, "--bundle=")
		case strings.HasPrefix(a, "-b="):
			bundle = strings.TrimPrefix(a, "-b=")
		}
	}
	return bundle, true
}

// prepareBundle edits config.json in place (generic JSON, numbers kept exact).
func prepareBundle(bundle string) error {
	path := filepath.Join(bundle, "config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var spec map[string]any
	if err := dec.Decode(&spec); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	annotations, _ := spec["annotations"].(map[string]any)
	if annotations["io.kubernetes.cri.container-type"] != "container" {
		return nil // the sandbox (pause) container, or not a CRI container: untouched
	}
	if mounts, ok := spec["mounts"].([]any); ok {
		for _, m := range mounts {
			mount, _ := m.(map[string]any)
			if mount == nil || mount["destination"] != "/sys/fs/cgroup" {
				continue
			}
			opts, _ := mount["options"].([]any)
			kept := []any{"rw"}
			for _, o := range opts {
				if o != "ro" && o != "rw" {
					kept = append(kept, o)
				}
			}
			mount["options"] = kept
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	hooks, _ := spec["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		spec["hooks"] = hooks
	}
	createRuntime, _ := hooks["createRuntime"].([]any)
	hooks["createRuntime"] = append(createRuntime, map[string]any{
		"path":    self,
		"args":    []any{self, hookArg},
		"timeout": 10,
	})
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	tmp := path + ".systemd-runtime"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// chownCgroupHook reads the OCI state from stdin and chowns the container's name=systemd
// and unified cgroup directories (recursively) to its mapped root uid/gid.
func chownCgroupHook(stdin io.Reader) error {
	var state struct {
		Pid int `json:"pid"`
	}
	if err := json.NewDecoder(stdin).Decode(&state); err != nil {
		return fmt.Errorf("read state: %w", err)
	}
	if state.Pid <= 0 {
		return fmt.Errorf("state has no pid")
	}
	uid, err := mappedRoot(fmt.Sprintf("/proc/%d/uid_map", state.Pid))
	if err != nil {
		return err
	}
	gid, err := mappedRoot(fmt.Sprintf("/proc/%d/gid_map", state.Pid))
	if err != nil {
		return err
	}
	mountpoints, err := cgroupMountpoints()
	if err != nil {
		return err
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", state.Pid))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var key string
		switch {
		case parts[1] == "name=systemd":
			key = "name=systemd"
		case parts[0] == "0" && parts[1] == "":
			key = "cgroup2"
		default:
			continue
		}
		root, ok := mountpoints[key]
		if !ok {
			continue
		}
		dir := filepath.Join(root, parts[2])
		if err := chownTree(dir, uid, gid); err != nil {
			return err
		}
	}
	return sc.Err()
}

func mappedRoot(mapFile string) (int, error) {
	raw, err := os.ReadFile(mapFile)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "0" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, fmt.Errorf("%s maps no root", mapFile)
}

// cgroupMountpoints maps "name=systemd" and "cgroup2" to where the host mounts them.
func cgroupMountpoints() (map[string]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		left, right, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) < 5 || len(rf) < 3 || lf[3] != "/" {
			continue
		}
		switch {
		case rf[0] == "cgroup2":
			if _, seen := out["cgroup2"]; !seen {
				out["cgroup2"] = lf[4]
			}
		case rf[0] == "cgroup" && strings.Contains(","+rf[2]+",", ",name=systemd,"):
			if _, seen := out["name=systemd"]; !seen {
				out["name=systemd"] = lf[4]
			}
		}
	}
	return out, sc.Err()
}

func chownTree(dir string, uid, gid int) error {
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
