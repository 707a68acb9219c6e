package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateBundleFindsTheBundleOfCreateOnly(t *testing.T) {
	cases := []struct {
		args   []string
		bundle string
		ok     bool
	}{
		// what containerd's runc shim runs
		{[]string{"--root", "/r", "--log", "/l.json", "--log-format", "json", "create", "--bundle", "/b", "--pid-file", "/p", "id"}, "/b", true},
		{[]string{"--root=/r", "create", "-b", "/b2", "id"}, "/b2", true},
		{[]string{"create", "--bundle=/b3", "id"}, "/b3", true},
		{[]string{"--root", "/r", "start", "id"}, "", false},
		{[]string{"--root", "/r", "exec", "--process", "/p.json", "id"}, "", false},
		{[]string{"--root", "/create", "state", "id"}, "", false},
	}
	for _, c := range cases {
		bundle, ok := createBundle(c.args)
		if ok != c.ok || bundle != c.bundle {
			t.Errorf("createBundle(%q) = %q, %v; want %q, %v", c.args, bundle, ok, c.bundle, c.ok)
		}
	}
}

const specJSON = `{
  "ociVersion": "1.2.0",
  "process": {"user": {"uid": 0, "gid": 0}, "oomScoreAdj": 1000},
  "linux": {"uidMappings": [{"containerID": 0, "hostID": 4294901760, "size": 65536}]},
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}
  ],
  "annotations": {"io.kubernetes.cri.container-type": "%TYPE%"}
}`

func writeBundle(t *testing.T, containerType string) string {
	t.Helper()
	dir := t.TempDir()
	spec := strings.ReplaceAll(specJSON, "%TYPE%", containerType)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readSpec(t *testing.T, dir string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var spec map[string]any
	if err := dec.Decode(&spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestPrepareBundleMakesCgroupsWritableAndAddsTheHookForAppContainers(t *testing.T) {
	dir := writeBundle(t, "container")
	if err := prepareBundle(dir); err != nil {
		t.Fatal(err)
	}
	spec := readSpec(t, dir)
	var cgroupOpts []any
	for _, m := range spec["mounts"].([]any) {
		mount := m.(map[string]any)
		if mount["destination"] == "/sys/fs/cgroup" {
			cgroupOpts = mount["options"].([]any)
		}
	}
	got := []string{}
	for _, o := range cgroupOpts {
		got = append(got, o.(string))
	}
	if strings.Join(got, ",") != "rw,nosuid,noexec,nodev,relatime" {
		t.Errorf("cgroup mount options = %v, want rw and no ro", got)
	}
	hooks := spec["hooks"].(map[string]any)["createRuntime"].([]any)
	if len(hooks) != 1 {
		t.Fatalf("createRuntime hooks = %v, want one", hooks)
	}
	hook := hooks[0].(map[string]any)
	args := hook["args"].([]any)
	if len(args) != 2 || args[1] != hookArg || args[0] != hook["path"] {
		t.Errorf("hook = %v, want [path %s]", hook, hookArg)
	}
	// Large numbers survive the round trip exactly (no float64 rounding).
	hostID := spec["linux"].(map[string]any)["uidMappings"].([]any)[0].(map[string]any)["hostID"]
	if hostID.(json.Number).String() != "4294901760" {
		t.Errorf("hostID = %v, want 4294901760", hostID)
	}
}

func TestPrepareBundleLeavesTheSandboxAlone(t *testing.T) {
	dir := writeBundle(t, "sandbox")
	before, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if err := prepareBundle(dir); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if string(before) != string(after) {
		t.Errorf("the sandbox's config.json changed")
	}
}

func TestMappedRootReadsTheHostIDOfContainerRoot(t *testing.T) {
	f := filepath.Join(t.TempDir(), "uid_map")
	if err := os.WriteFile(f, []byte("         0 2147483648      65536\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	uid, err := mappedRoot(f)
	if err != nil || uid != 2147483648 {
		t.Errorf("mappedRoot = %d, %v; want 2147483648", uid, err)
	}
	if err := os.WriteFile(f, []byte("1 1000 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := mappedRoot(f); err == nil {
		t.Errorf("mappedRoot of a map without root: want an error")
	}
}
