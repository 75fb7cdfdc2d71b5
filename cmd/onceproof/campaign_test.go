package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The two ways the README offers to spread a campaign, a GitHub Actions
// matrix (testdata/campaign/github-actions.yml) and a Kubernetes Indexed
// Job (testdata/campaign/indexed-job.yaml), parse, cover every shard
// index exactly once, and their command lines run: each shard's command
// with its index substituted, then the merge, here in process with a
// small budget appended (-n 2 on two families: the full default campaign
// is make proofs' minute, four times over), and the merge writes the
// matrix. A manifest whose shards do not add up, or whose commands do not
// parse, fails.
func TestCampaignManifestsRun(t *testing.T) {
	const rerun = "go test ./cmd/onceproof -run TestCampaignManifestsRun"
	small := []string{"-n", "2", "-families", "clean,crash", "-designs", "ref,window-only"}
	t.Run("github-actions", func(t *testing.T) {
		var wf struct {
			Jobs map[string]struct {
				Needs    any `yaml:"needs"`
				Strategy struct {
					Matrix struct {
						Shard []int `yaml:"shard"`
					} `yaml:"matrix"`
				} `yaml:"strategy"`
				Steps []struct {
					Run string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		readYAML(t, "github-actions.yml", &wf)
		shard, merge := wf.Jobs["shard"], wf.Jobs["merge"]
		if merge.Needs != "shard" {
			t.Errorf("the merge job needs %v, want shard (%s)", merge.Needs, rerun)
		}
		n := len(shard.Strategy.Matrix.Shard)
		if !slices.Equal(shard.Strategy.Matrix.Shard, seq(n)) {
			t.Fatalf("strategy.matrix.shard is %v, want 0..n-1 (%s)", shard.Strategy.Matrix.Shard, rerun)
		}
		dir := t.TempDir()
		t.Chdir(dir)
		for i := range n {
			runStep(t, dir, onlyRun(t, shard.Steps), map[string]string{"${{ matrix.shard }}": strconv.Itoa(i)}, small, n, rerun)
		}
		runStep(t, dir, onlyRun(t, merge.Steps), nil, nil, n, rerun)
	})
	t.Run("indexed-job", func(t *testing.T) {
		var job struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Completions    int    `yaml:"completions"`
				CompletionMode string `yaml:"completionMode"`
				Template       struct {
					Spec struct {
						Containers []struct {
							Command []string `yaml:"command"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		readYAML(t, "indexed-job.yaml", &job)
		cs := job.Spec.Template.Spec.Containers
		if job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Completions < 2 || len(cs) != 1 || len(cs[0].Command) != 3 || cs[0].Command[0] != "sh" {
			t.Fatalf("not an Indexed Job of n >= 2 completions with one sh -c container: %+v (%s)", job, rerun)
		}
		n := job.Spec.Completions
		dir := t.TempDir()
		t.Chdir(dir)
		var files []string
		for i := range n {
			runStep(t, dir, cs[0].Command[2], map[string]string{"${JOB_COMPLETION_INDEX}": strconv.Itoa(i), "/shards/": dir + "/"}, small, n, rerun)
			files = append(files, filepath.Join(dir, "shard"+strconv.Itoa(i)+".json"))
		}
		// The manifest's comment names the merge: the same files.
		runStep(t, dir, "onceproof merge -out matrix "+strings.Join(files, " "), nil, nil, n, rerun)
	})
}

// campaignDir is testdata/campaign, absolute: the subtests chdir.
var campaignDir, _ = filepath.Abs(filepath.Join("testdata", "campaign"))

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(campaignDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// onlyRun is the one run: step of a job.
func onlyRun(t *testing.T, steps []struct {
	Run string `yaml:"run"`
}) string {
	t.Helper()
	var runs []string
	for _, s := range steps {
		if s.Run != "" {
			runs = append(runs, s.Run)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("want one run step, got %q", runs)
	}
	return runs[0]
}

// runStep runs a manifest's command line (go run ./cmd/onceproof ... or
// onceproof ...) in process, in dir (the test's working directory), with vars substituted and extra
// appended to a matrix command; a matrix shard must name -shard i/n.
func runStep(t *testing.T, dir, line string, vars map[string]string, extra []string, n int, rerun string) {
	t.Helper()
	for k, v := range vars {
		line = strings.ReplaceAll(line, k, v)
	}
	args := strings.Fields(line)
	switch {
	case len(args) > 2 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/onceproof":
		args = args[3:]
	case len(args) > 0 && args[0] == "onceproof":
		args = args[1:]
	default:
		t.Fatalf("%q is not an onceproof command line (%s)", line, rerun)
	}
	if args[0] == "matrix" && !strings.Contains(line, "/"+strconv.Itoa(n)+" ") {
		t.Fatalf("%q does not run a shard of %d (%s)", line, n, rerun)
	}
	args = append(args, extra...)
	var o, e bytes.Buffer
	code := run(args, registry(), &o, &e)
	so, errs := o.String(), e.String()
	if code == exitBadUse || (args[0] == "matrix" && code != exitOK) {
		t.Fatalf("%s: exit %d\n%s%s (%s)", strings.Join(args, " "), code, so, errs, rerun)
	}
	if args[0] == "merge" {
		if _, err := os.Stat(filepath.Join(dir, "matrix", "matrix.md")); err != nil {
			t.Errorf("%s wrote no matrix.md: %v\n%s%s (%s)", line, err, so, errs, rerun)
		}
	}
}
